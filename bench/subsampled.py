"""Benchmark: DP-SGD noise calibration, ``dpkit.accountant.event_calibration`` against dp-accounting and prv_accountant.

Run (from the repository root)::

    .venv/bin/python bench/subsampled.py            # the 27-case grid (~5 min; prv_accountant on 3 cases)
    .venv/bin/python bench/subsampled.py --quick    # the 3-case subset (~1–2 min)
    .venv/bin/python bench/subsampled.py --json     # one JSON object with every number instead of the table

What it measures, for the Poisson-subsampled Gaussian run for T steps (dp-accounting's DP-SGD event
``SelfComposed(PoissonSampled(q, Gaussian(σ)), T)``), at δ = 1e-5, over the grid
q ∈ {1e-3, 1e-2, 0.1} × T ∈ {1e2, 1e4, 1e5} × ε ∈ {1, 3, 8}:

* σ and wall time of ``dpkit.accountant.event_calibration.calibrate_noise_multiplier`` (PLD ladder);
* σ and wall time of dp-accounting's ``calibrate_dp_mechanism`` with ``PLDAccountant()`` at default
  settings (interval 1e-4, bracket ``LowerEndpointAndGuess(0, 1)``, tol 1e-6);
* σ and wall time of prv_accountant's ``dpsgd.find_noise_multiplier`` (its default eps_error = 0.1), if
  installed (``pip install prv-accountant``: numpy/scipy only), on the 3-case subset only unless ``--prv all``
  (it is slow: minutes per case at large T); Opacus is left out (it needs torch);
* for every σ, its ε under dp-accounting's pessimistic PLD at 1e-4 (the common yardstick: <= ε is feasible);
* the interval dpkit's calibration certifies for its σ: the certified ε (an upper bound, what ``dpkit epsilon``
  gives for that σ) and the lower bound on the truth (:mod:`dpkit.accountant.pld_bounds`), and its width;
* the targets: σ_ours >= σ_dpa − 1e-6 (dp-accounting's tolerance), σ_ours/σ_dpa − 1 <= 0.5 %,
  time_dpa/time_ours >= 10 in every case, and the interval at most 1 % of ε wide in every case.

All timings are taken in this one process, one call each (dp-accounting is too slow to repeat),
after an untimed warm-up of every code path; dpkit's per-interval PLD cache is cleared before each call.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

import dp_accounting  # noqa: E402
import numpy as np  # noqa: E402
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant  # noqa: E402

from dpkit.accountant import event_calibration  # noqa: E402

DELTA = 1e-5
GRID = list(itertools.product((1e-3, 1e-2, 0.1), (100, 10_000, 100_000), (1.0, 3.0, 8.0)))
QUICK = [(0.1, 100, 1.0), (1e-2, 10_000, 3.0), (1e-3, 100_000, 8.0)]
TARGET_REL = 0.005
TARGET_SPEEDUP = 10.0
TARGET_WIDTH = 0.01
PRV_EPS_ERROR = 0.1  # prv_accountant's default; at 0.01 one case (q=1e-3, T=1e5) took 505 s

try:  # optional peer
    from prv_accountant import dpsgd as prv_dpsgd
except ImportError:  # pragma: no cover - optional
    prv_dpsgd = None


def _event(q: float, steps: int) -> Callable[[float], dp_accounting.DpEvent]:
    def make(sigma: float) -> dp_accounting.DpEvent:
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
        )

    return make


def dpa_sigma(q: float, steps: int, epsilon: float) -> float:
    """dp-accounting's calibrate_dp_mechanism with PLDAccountant() and all defaults."""
    return float(
        dp_accounting.calibrate_dp_mechanism(pld_privacy_accountant.PLDAccountant, _event(q, steps), epsilon, DELTA)
    )


def dpa_epsilon(q: float, steps: int, sigma: float) -> float:
    """ε(δ) of σ under dp-accounting's pessimistic PLD at its default interval (1e-4)."""
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(_event(q, steps)(sigma))
    return float(acc.get_epsilon(DELTA))


def dpa_rdp_sigma(q: float, steps: int, epsilon: float) -> float:
    """dp-accounting's calibrate_dp_mechanism with RdpAccountant() (its default orders) and all defaults."""
    return float(
        dp_accounting.calibrate_dp_mechanism(rdp_privacy_accountant.RdpAccountant, _event(q, steps), epsilon, DELTA)
    )


def ours_rdp_sigma(q: float, steps: int, epsilon: float) -> float:
    return event_calibration.calibrate_noise_multiplier(
        epsilon, DELTA, sampling_probability=q, steps=steps, method="rdp"
    ).value


LAST: dict[str, Any] = {}


def _clear_caches() -> None:
    """dpkit's PLD caches (the step and composed mass functions, the composed PLDs): each call starts cold."""
    from dpkit.accountant import pld_events, pld_fast

    event_calibration._step_pld.cache_clear()
    pld_fast.step_pmf.cache_clear()
    pld_fast.composed_pmf.cache_clear()
    pld_events._composed_pld.cache_clear()


def ours_sigma(q: float, steps: int, epsilon: float) -> float:
    _clear_caches()
    cal = event_calibration.calibrate_noise_multiplier(epsilon, DELTA, sampling_probability=q, steps=steps)
    LAST["calibration"] = cal
    return cal.value


def prv_sigma(q: float, steps: int, epsilon: float) -> float:
    assert prv_dpsgd is not None
    return float(prv_dpsgd.find_noise_multiplier(q, steps, epsilon, DELTA, eps_error=PRV_EPS_ERROR))


def timed(fn: Callable[[], float]) -> tuple[float, float, str | None]:
    t0 = time.perf_counter()
    try:
        value = fn()
    except Exception as err:  # a peer that fails is reported, not fatal
        return math.nan, time.perf_counter() - t0, f"{type(err).__name__}: {err}"
    return value, time.perf_counter() - t0, None


def measure(q: float, steps: int, epsilon: float, log: Callable[[str], None], with_prv: bool) -> dict[str, Any]:
    log(f"q={q:g} T={steps} ε={epsilon:g}: dpkit")
    s_ours, t_ours, e_ours = timed(lambda: ours_sigma(q, steps, epsilon))
    log(f"q={q:g} T={steps} ε={epsilon:g}: dp-accounting (slow)")
    s_dpa, t_dpa, e_dpa = timed(lambda: dpa_sigma(q, steps, epsilon))
    log(f"q={q:g} T={steps} ε={epsilon:g}: RDP, dpkit and dp-accounting")
    s_ours_rdp, t_ours_rdp, _ = timed(lambda: ours_rdp_sigma(q, steps, epsilon))
    s_dpa_rdp, t_dpa_rdp, _ = timed(lambda: dpa_rdp_sigma(q, steps, epsilon))
    s_prv, t_prv, e_prv = (math.nan, math.nan, "prv_accountant not installed" if prv_dpsgd is None else None)
    if prv_dpsgd is not None and with_prv:
        log(f"q={q:g} T={steps} ε={epsilon:g}: prv_accountant")
        s_prv, t_prv, e_prv = timed(lambda: prv_sigma(q, steps, epsilon))
    row: dict[str, Any] = {
        "q": q,
        "steps": steps,
        "epsilon": epsilon,
        "sigma_ours": s_ours,
        "sigma_dpa": s_dpa,
        "sigma_prv": s_prv,
        "time_ours_s": t_ours,
        "time_dpa_s": t_dpa,
        "time_prv_s": t_prv,
        "errors": {k: v for k, v in (("ours", e_ours), ("dpa", e_dpa), ("prv", e_prv)) if v},
        "sigma_ours_rdp": s_ours_rdp,
        "sigma_dpa_rdp": s_dpa_rdp,
        "time_ours_rdp_s": t_ours_rdp,
        "time_dpa_rdp_s": t_dpa_rdp,
    }
    cal = LAST.pop("calibration", None)
    row["epsilon_upper"] = cal.epsilon if cal is not None else math.nan
    row["epsilon_lower"] = cal.epsilon_lower if cal is not None and cal.epsilon_lower is not None else math.nan
    row["width"] = (row["epsilon_upper"] - row["epsilon_lower"]) / row["epsilon_upper"]
    row["dpa_eps_at_sigma_ours"] = dpa_epsilon(q, steps, s_ours) if math.isfinite(s_ours) else math.nan
    row["dpa_eps_at_sigma_prv"] = dpa_epsilon(q, steps, s_prv) if math.isfinite(s_prv) else math.nan
    row["ours_over_dpa_minus_1"] = s_ours / s_dpa - 1.0
    row["prv_over_dpa_minus_1"] = s_prv / s_dpa - 1.0
    row["speedup_dpa"] = t_dpa / t_ours
    row["speedup_prv"] = t_prv / t_ours
    row["sound"] = bool(s_ours >= s_dpa - 1e-6)
    row["tight"] = bool(row["ours_over_dpa_minus_1"] <= TARGET_REL)
    row["fast"] = bool(row["speedup_dpa"] >= TARGET_SPEEDUP)
    row["narrow"] = bool(row["width"] <= TARGET_WIDTH)
    return row


def fmt_time(s: float) -> str:
    if not math.isfinite(s):
        return "n/a"
    return f"{s * 1e3:,.0f} ms" if s < 1.0 else f"{s:,.2f} s"


def table(headers: list[str], rows: list[list[str]], align: str) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, align)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def render(result: dict[str, Any]) -> str:
    env = result["environment"]
    out = [
        "DP-SGD σ calibration — dpkit (PLD ladder) vs dp-accounting calibrate_dp_mechanism(PLDAccountant()) "
        "vs prv_accountant find_noise_multiplier",
        f"δ = {DELTA:g}; cases: {len(result['rows'])} ({'quick subset' if result['quick'] else 'full grid'})",
        f"python {env['python']}, numpy {env['numpy']}, dp-accounting {env['dp_accounting']}, "
        f"prv-accountant {env['prv_accountant']}, {env['platform']}, {env['cpus']} CPUs",
        "ε_dpa(σ) = dp-accounting's pessimistic PLD at 1e-4 (<= ε: feasible by that yardstick); "
        f"prv eps_error = {PRV_EPS_ERROR:g}",
        "",
    ]
    headers = [
        "q",
        "T",
        "ε",
        "σ dpkit",
        "σ dp-acc",
        "σ prv",
        "dpkit/dpa−1",
        "prv/dpa−1",
        "ε_dpa(σ dpkit)",
        "dpkit: truth in",
        "width",
        "ε_dpa(σ prv)",
        "t dpkit",
        "t dp-acc",
        "t prv",
        "dpa/dpkit",
        "prv/dpkit",
    ]
    body = []
    for r in result["rows"]:
        body.append(
            [
                f"{r['q']:g}",
                f"{r['steps']:g}",
                f"{r['epsilon']:g}",
                f"{r['sigma_ours']:.6g}",
                f"{r['sigma_dpa']:.6g}",
                f"{r['sigma_prv']:.6g}",
                f"{r['ours_over_dpa_minus_1']:+.3%}",
                f"{r['prv_over_dpa_minus_1']:+.3%}",
                f"{r['dpa_eps_at_sigma_ours']:.5f}",
                f"[{r['epsilon_lower']:.5f}, {r['epsilon_upper']:.5f}]",
                f"{r['width']:.3%}",
                f"{r['dpa_eps_at_sigma_prv']:.5f}",
                fmt_time(r["time_ours_s"]),
                fmt_time(r["time_dpa_s"]),
                fmt_time(r["time_prv_s"]),
                f"{r['speedup_dpa']:.1f}×",
                f"{r['speedup_prv']:.1f}×",
            ]
        )
    out.append(table(headers, body, "r" * len(headers)))
    out += ["", "RDP: dpkit (exact subsampled-Gaussian curve, fractional orders) vs dp-accounting RdpAccountant()"]
    rdp_rows = [
        [
            f"{r['q']:g}",
            f"{r['steps']:g}",
            f"{r['epsilon']:g}",
            f"{r['sigma_ours_rdp']:.6g}",
            f"{r['sigma_dpa_rdp']:.6g}",
            f"{r['sigma_ours_rdp'] / r['sigma_dpa_rdp'] - 1:+.3%}",
            fmt_time(r["time_ours_rdp_s"]),
            fmt_time(r["time_dpa_rdp_s"]),
            f"{r['time_dpa_rdp_s'] / r['time_ours_rdp_s']:.1f}×",
        ]
        for r in result["rows"]
    ]
    rdp_headers = ["q", "T", "ε", "σ dpkit rdp", "σ dp-acc rdp", "dpkit/dpa−1", "t dpkit", "t dp-acc", "dpa/dpkit"]
    out.append(table(rdp_headers, rdp_rows, "rrrrrrrrr"))
    for r in result["rows"]:
        for who, err in r["errors"].items():
            out.append(f"  note: q={r['q']:g} T={r['steps']} ε={r['epsilon']:g}: {who} failed: {err}")
    out.append("")
    s = result["summary"]
    out.append("targets")
    out.append(f"  [{'PASS' if s['all_sound'] else 'FAIL'}] σ_dpkit >= σ_dpa − 1e-6 in every case")
    out.append(
        f"  [{'PASS' if s['all_tight'] else 'FAIL'}] σ_dpkit/σ_dpa − 1 <= {TARGET_REL:.1%} in every case "
        f"(max {s['max_rel']:+.3%})"
    )
    out.append(
        f"  [{'PASS' if s['all_fast'] else 'FAIL'}] time_dpa/time_dpkit >= {TARGET_SPEEDUP:g}× in every case "
        f"({s['fast_cases']} of {len(result['rows'])}; median {s['median_speedup']:.1f}×, min "
        f"{s['min_speedup']:.1f}×, max {s['max_speedup']:.1f}×)"
    )
    out.append(
        f"  [{'PASS' if s['all_narrow'] else 'FAIL'}] the certified interval [lower, ε] is at most "
        f"{TARGET_WIDTH:.0%} of ε wide in every case (max {s['max_width']:.3%}, median {s['median_width']:.3%})"
    )
    out.append(
        f"  totals: dpkit {fmt_time(s['total_ours_s'])}, dp-accounting {fmt_time(s['total_dpa_s'])}, "
        f"prv_accountant {fmt_time(s['total_prv_s'])} ({s['prv_cases']} cases; median time_prv/time_dpkit "
        f"{s['median_speedup_prv']:.1f}×)"
    )
    out.append(f"total wall time: {result['total_wall_s']:.1f} s")
    return "\n".join(out)


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object with all numbers")
    parser.add_argument("--quick", action="store_true", help="the 3-case subset only")
    parser.add_argument(
        "--prv", choices=("none", "subset", "all"), default="subset", help="where to run prv_accountant (slow)"
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    t_start = time.perf_counter()
    log = (lambda msg: print(f"... {msg}", file=sys.stderr, flush=True)) if sys.stderr.isatty() else (lambda msg: None)

    # untimed warm-up of every code path
    event_calibration.calibrate_noise_multiplier(1.0, DELTA, sampling_probability=0.1, steps=10)
    dpa_epsilon(0.1, 10, 1.0)
    if prv_dpsgd is not None:
        prv_sigma(0.1, 10, 3.0)

    rows = [
        measure(q, t, e, log, args.prv == "all" or (args.prv == "subset" and (q, t, e) in QUICK))
        for q, t, e in (QUICK if args.quick else GRID)
    ]
    speedups = [r["speedup_dpa"] for r in rows if math.isfinite(r["speedup_dpa"])]
    prv_speedups = [r["speedup_prv"] for r in rows if math.isfinite(r["speedup_prv"])]
    result = {
        "benchmark": "dpsgd-sigma-calibration",
        "quick": args.quick,
        "delta": DELTA,
        "environment": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "dp_accounting": _version("dp-accounting"),
            "prv_accountant": _version("prv-accountant"),
            "platform": platform.platform(terse=True),
            "cpus": os.cpu_count(),
        },
        "rows": rows,
        "summary": {
            "all_sound": all(r["sound"] for r in rows),
            "all_tight": all(r["tight"] for r in rows),
            "all_fast": all(r["fast"] for r in rows),
            "fast_cases": sum(r["fast"] for r in rows),
            "all_narrow": all(r["narrow"] for r in rows),
            "max_width": max(r["width"] for r in rows),
            "median_width": statistics.median(r["width"] for r in rows),
            "max_rel": max(r["ours_over_dpa_minus_1"] for r in rows),
            "median_speedup": statistics.median(speedups),
            "min_speedup": min(speedups),
            "max_speedup": max(speedups),
            "total_ours_s": math.fsum(r["time_ours_s"] for r in rows),
            "total_dpa_s": math.fsum(r["time_dpa_s"] for r in rows),
            "total_prv_s": math.fsum(r["time_prv_s"] for r in rows if math.isfinite(r["time_prv_s"])),
            "prv_cases": len(prv_speedups),
            "median_speedup_prv": statistics.median(prv_speedups) if prv_speedups else math.nan,
        },
        "total_wall_s": 0.0,
    }
    result["total_wall_s"] = time.perf_counter() - t_start
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
