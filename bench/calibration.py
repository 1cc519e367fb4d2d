"""Benchmark: σ calibration of the Gaussian mechanism, ``dpkit.accountant`` against dp-accounting.

Run (from the repository root)::

    .venv/bin/python bench/calibration.py            # full run (~1.5–2 min, dominated by dp-accounting PLD at K = 1000)
    .venv/bin/python bench/calibration.py --quick    # fewer repetitions (~40 s)
    .venv/bin/python bench/calibration.py --json     # one JSON object with every number instead of the tables
    .venv/bin/python bench/calibration.py --no-memory  # skip the peak-memory probe

What it measures, at (ε, δ) = (1, 1e-5), Δ = 1, for K = 1 and K = 1000 Gaussian compositions:

* σ and median wall time of ``dpkit.accountant.calibrate_sigma(method="exact")`` (many repetitions),
  of our ``rdp`` and ``zcdp`` calibrations, of dp-accounting's ``calibrate_dp_mechanism`` with
  its ``PLDAccountant()`` and ``RdpAccountant()`` at default settings (a few repetitions), and
  of ``dp_accounting.get_sigma_gaussian`` (σ₁·√K, exact for Gaussians);
* for every returned σ, the ε it really achieves under our exact accountant
  (``dpkit.accountant.gaussian_epsilon(σ, δ, compositions=K).epsilon``) and whether that is <= ε;
* the acceptance targets: |σ_ours/σ_PLD − 1| <= 1e-6, time_PLD/time_ours >= 1000,
  σ_RDP/σ_ours − 1 ≈ +8 % at K = 1000 (accepted band +7 % … +9 %).

Memory: every row also reports its peak RSS increase (Linux: ``VmHWM`` reset through
``/proc/self/clear_refs`` before the row, minus ``VmRSS`` then). Optionally (on by default,
``--no-memory`` skips it) dp-accounting's PLD calibration is also run in a small-σ regime
(K = 1, ε = 10, δ = 1e-5) in a fresh subprocess with a 60 s limit; a run over the limit is
reported as skipped. All timings are taken in this one process, peers and ours alike.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

import dp_accounting  # noqa: E402
import mpmath  # noqa: E402
import numpy as np  # noqa: E402
from dp_accounting.pld import pld_privacy_accountant  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant  # noqa: E402

from dpkit import accountant  # noqa: E402

EPSILON = 1.0
DELTA = 1e-5
SENSITIVITY = 1.0
COMPOSITIONS = (1, 1000)

TARGET_REL_DIFF = 1e-6
TARGET_SPEEDUP = 1000.0
TARGET_RDP_EXCESS = 0.08
RDP_EXCESS_BAND = (0.07, 0.09)
RDP_TARGET_K = 1000

MEMORY_EPSILON = 10.0
MEMORY_K = 1
MEMORY_TIMEOUT_S = 60.0

REPS = {  # (full, quick)
    "ours": (2000, 200),
    "ours_other": (500, 50),
    "dpa_pld": (3, 1),
    "dpa_rdp": (20, 3),
    "dpa_gsg": (200, 20),
}


# --------------------------------------------------------------------------------------------
# dp-accounting calibrations (default settings)
# --------------------------------------------------------------------------------------------


def _event_maker(k: int) -> Callable[[float], dp_accounting.DpEvent]:
    def make(sigma: float) -> dp_accounting.DpEvent:
        return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma), k)

    return make


def dpa_calibrate(accountant_factory: Callable[[], Any], epsilon: float, delta: float, k: int) -> float:
    """dp-accounting's calibrate_dp_mechanism with all defaults (bracket, tol)."""
    return (
        float(dp_accounting.calibrate_dp_mechanism(accountant_factory, _event_maker(k), epsilon, delta)) * SENSITIVITY
    )


def dpa_pld(k: int) -> float:
    return dpa_calibrate(pld_privacy_accountant.PLDAccountant, EPSILON, DELTA, k)


def dpa_rdp(k: int) -> float:
    return dpa_calibrate(rdp_privacy_accountant.RdpAccountant, EPSILON, DELTA, k)


def dpa_gsg(k: int) -> float:
    return float(dp_accounting.get_sigma_gaussian(EPSILON, DELTA)) * math.sqrt(k) * SENSITIVITY


def dpa_settings() -> dict[str, Any]:
    pld = pld_privacy_accountant.PLDAccountant()
    rdp = rdp_privacy_accountant.RdpAccountant()
    orders = rdp_privacy_accountant.DEFAULT_RDP_ORDERS
    return {
        "calibrate_dp_mechanism": (
            "bracket_interval=None -> LowerEndpointAndGuess(0, 1), tol=None -> 1e-6, discrete=False"
        ),
        "PLDAccountant": (
            f"PLDAccountant() -> neighboring_relation={pld.neighboring_relation.name}, "
            f"value_discretization_interval={pld._value_discretization_interval:g}"
        ),
        "RdpAccountant": (
            f"RdpAccountant() -> neighboring_relation={rdp.neighboring_relation.name}, "
            f"orders=DEFAULT_RDP_ORDERS ({len(orders)} orders, {min(orders):g} … {max(orders):g})"
        ),
        "get_sigma_gaussian": "get_sigma_gaussian(eps, delta) (tol=1e-12), times sqrt(K)",
        "event": "SelfComposedDpEvent(GaussianDpEvent(sigma), K)",
    }


# --------------------------------------------------------------------------------------------
# Timing and feasibility
# --------------------------------------------------------------------------------------------


def timed(fn: Callable[[], float], reps: int) -> tuple[float, list[float], int | None]:
    """(σ from the last call, per-call wall times in seconds, peak RSS increase over all calls)."""
    times: list[float] = []
    value = math.nan
    base = reset_peak_rss()
    for _ in range(reps):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return value, times, peak_rss_since(base)


def exact_epsilon(sigma: float, k: int) -> float:
    return accountant.gaussian_epsilon(sigma, DELTA, sensitivity=SENSITIVITY, compositions=k).epsilon


def true_delta_excess(sigma: float, k: int) -> float:
    """δ_true(ε)/δ − 1 at 50 digits for K releases with noise σ (<= 0 iff σ is truly feasible).

    Independent of the accountant (and of its conservative margin): the analytic Gaussian's
    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) with μ = Δ√K/σ, in mpmath.
    """
    with mpmath.workdps(50):
        mu = mpmath.mpf(SENSITIVITY) * mpmath.sqrt(k) / mpmath.mpf(sigma)
        e = mpmath.mpf(EPSILON)
        d = mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
        return float(d / mpmath.mpf(DELTA) - 1)


def row(
    key: str, label: str, source: str, k: int, sigma: float, times: list[float], peak: int | None
) -> dict[str, Any]:
    eps = exact_epsilon(sigma, k)
    excess = true_delta_excess(sigma, k)
    return {
        "key": key,
        "label": label,
        "source": source,
        "K": k,
        "sigma": sigma,
        "exact_epsilon": eps,
        "epsilon_excess": eps - EPSILON,
        "true_delta_excess": excess,
        "feasible": excess <= 0.0,
        "time_median_s": statistics.median(times),
        "time_min_s": min(times),
        "time_max_s": max(times),
        "reps": len(times),
        "peak_rss_increase_bytes": peak,
    }


def measure_k(k: int, quick: bool, log: Callable[[str], None]) -> list[dict[str, Any]]:
    q = 1 if quick else 0
    rows: list[dict[str, Any]] = []

    def ours(method: str) -> Callable[[], float]:
        return lambda: (
            accountant.calibrate_sigma(EPSILON, DELTA, sensitivity=SENSITIVITY, compositions=k, method=method).sigma
        )

    log(f"K={k}: ours exact ×{REPS['ours'][q]}")
    sigma, times, peak = timed(ours("exact"), REPS["ours"][q])
    rows.append(row("ours_exact", "accountant exact (μ-GDP)", "ours", k, sigma, times, peak))
    for method, conv in (("rdp", "improved"), ("zcdp", "bun-steinke")):
        log(f"K={k}: ours {method} ×{REPS['ours_other'][q]}")
        sigma, times, peak = timed(ours(method), REPS["ours_other"][q])
        rows.append(row(f"ours_{method}", f"accountant {method} ({conv})", "ours", k, sigma, times, peak))

    log(f"K={k}: dp-accounting PLD ×{REPS['dpa_pld'][q]} (slow)")
    sigma, times, peak = timed(lambda: dpa_pld(k), REPS["dpa_pld"][q])
    rows.append(row("dpa_pld", "calibrate_dp_mechanism + PLDAccountant()", "dp-accounting", k, sigma, times, peak))
    log(f"K={k}: dp-accounting RDP ×{REPS['dpa_rdp'][q]}")
    sigma, times, peak = timed(lambda: dpa_rdp(k), REPS["dpa_rdp"][q])
    rows.append(row("dpa_rdp", "calibrate_dp_mechanism + RdpAccountant()", "dp-accounting", k, sigma, times, peak))
    log(f"K={k}: dp-accounting get_sigma_gaussian ×{REPS['dpa_gsg'][q]}")
    sigma, times, peak = timed(lambda: dpa_gsg(k), REPS["dpa_gsg"][q])
    rows.append(row("dpa_gsg", "get_sigma_gaussian(ε, δ)·√K", "dp-accounting", k, sigma, times, peak))

    exact_sigma = rows[0]["sigma"]
    for r in rows:
        r["sigma_rel_to_ours_exact"] = r["sigma"] / exact_sigma - 1.0
    return rows


def ratios_for(rows: list[dict[str, Any]]) -> dict[str, float]:
    by = {r["key"]: r for r in rows}
    ours, pld, rdp = by["ours_exact"], by["dpa_pld"], by["dpa_rdp"]
    return {
        "sigma_ours_over_pld_minus_1": ours["sigma"] / pld["sigma"] - 1.0,
        "time_pld_over_ours": pld["time_median_s"] / ours["time_median_s"],
        "time_rdp_over_ours": rdp["time_median_s"] / ours["time_median_s"],
        "sigma_rdp_over_ours_minus_1": rdp["sigma"] / ours["sigma"] - 1.0,
    }


def targets_for(ratios: dict[int, dict[str, float]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k, r in ratios.items():
        v = r["sigma_ours_over_pld_minus_1"]
        out.append(
            {
                "name": f"|σ_ours/σ_PLD − 1| <= {TARGET_REL_DIFF:g}",
                "K": k,
                "value": v,
                "display": f"{v:+.3e}",
                "pass": abs(v) <= TARGET_REL_DIFF,
            }
        )
    for k, r in ratios.items():
        v = r["time_pld_over_ours"]
        out.append(
            {
                "name": f"time_PLD/time_ours >= {TARGET_SPEEDUP:g}×",
                "K": k,
                "value": v,
                "display": f"{v:,.0f}×",
                "pass": v >= TARGET_SPEEDUP,
            }
        )
    v = ratios[RDP_TARGET_K]["sigma_rdp_over_ours_minus_1"]
    lo, hi = RDP_EXCESS_BAND
    out.append(
        {
            "name": f"σ_RDP/σ_ours − 1 ≈ +{TARGET_RDP_EXCESS:.0%} (band +{lo:.0%} … +{hi:.0%})",
            "K": RDP_TARGET_K,
            "value": v,
            "display": f"{v:+.3%}",
            "pass": lo <= v <= hi,
        }
    )
    return out


# --------------------------------------------------------------------------------------------
# Peak memory (subprocess, bounded in time)
# --------------------------------------------------------------------------------------------


def _proc_status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    return None


def reset_peak_rss() -> int | None:
    """Reset the peak-RSS mark (Linux >= 4.0) and return the current RSS, or None if unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return None
    return _proc_status("VmRSS")


def peak_rss_since(base: int | None) -> int | None:
    """Peak RSS increase since :func:`reset_peak_rss` returned ``base``."""
    if base is None:
        return None
    hwm = _proc_status("VmHWM")
    return None if hwm is None else max(0, hwm - base)


def memory_probe_child(epsilon: float, k: int) -> None:
    """Runs in a fresh interpreter: peak RSS of our exact calibration, then of dp-accounting PLD."""
    base = reset_peak_rss()
    t0 = time.perf_counter()
    ours_sigma = accountant.calibrate_sigma(epsilon, DELTA, sensitivity=SENSITIVITY, compositions=k).sigma
    t_ours = time.perf_counter() - t0
    ours_peak = peak_rss_since(base)
    base = reset_peak_rss()
    t0 = time.perf_counter()
    pld_sigma = dpa_calibrate(pld_privacy_accountant.PLDAccountant, epsilon, DELTA, k)
    t_pld = time.perf_counter() - t0
    pld_peak = peak_rss_since(base)
    print(
        json.dumps(
            {
                "epsilon": epsilon,
                "delta": DELTA,
                "K": k,
                "rss_before_bytes": base,
                "ours_sigma": ours_sigma,
                "ours_time_s": t_ours,
                "ours_peak_rss_increase_bytes": ours_peak,
                "pld_sigma": pld_sigma,
                "pld_time_s": t_pld,
                "pld_peak_rss_increase_bytes": pld_peak,
                "sigma_ours_over_pld_minus_1": ours_sigma / pld_sigma - 1.0,
                "pld_exact_epsilon": exact_epsilon(pld_sigma, k),
            }
        )
    )


def memory_probe(epsilon: float, k: int, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_memory-child", repr(epsilon), str(k)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {
            "epsilon": epsilon,
            "K": k,
            "skipped": True,
            "reason": f"did not finish within {timeout:g} s (killed)",
            "wall_s": time.perf_counter() - t0,
        }
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip().splitlines()[-3:]
        return {
            "epsilon": epsilon,
            "K": k,
            "skipped": True,
            "reason": f"child exited with code {proc.returncode}: {' | '.join(tail)}",
            "wall_s": time.perf_counter() - t0,
        }
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["skipped"] = False
    out["wall_s"] = time.perf_counter() - t0
    return out


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:,.1f} µs"
    if s < 1.0:
        return f"{s * 1e3:,.2f} ms"
    return f"{s:,.2f} s"


def fmt_mb(b: float | None) -> str:
    return "n/a" if b is None else f"{b / 2**20:,.1f} MiB"


def table(headers: list[str], rows: list[list[str]], align: str) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, align)).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def render(result: dict[str, Any]) -> str:
    out: list[str] = []
    env = result["environment"]
    out.append("σ calibration benchmark — accountant vs dp-accounting")
    out.append(
        f"target (ε, δ) = ({EPSILON:g}, {DELTA:g}), Δ = {SENSITIVITY:g}, K ∈ {list(COMPOSITIONS)}"
        f"; mode: {'quick' if result['quick'] else 'full'}"
    )
    out.append(
        f"python {env['python']}, numpy {env['numpy']}, dp-accounting {env['dp_accounting']}, "
        f"{env['platform']}, {env['cpus']} CPUs"
    )
    out.append("dp-accounting settings (defaults):")
    for name, s in result["dp_accounting_settings"].items():
        out.append(f"  {name}: {s}")
    out.append("ε_exact = accountant.gaussian_epsilon(σ, δ, compositions=K).epsilon (conservative: rounded up);")
    out.append("feasible iff the true δ at ε, in mpmath at 50 digits, is <= δ (column: δ_true(ε)/δ − 1).")
    out.append("")

    headers = [
        "K",
        "calibration",
        "σ",
        "σ/σ_exact − 1",
        "ε_exact(σ)",
        "feasible (δ_true/δ − 1)",
        "median time",
        "reps",
        "peak RSS +",
    ]
    body: list[list[str]] = []
    for r in result["rows"]:
        feas = f"{'yes' if r['feasible'] else 'NO'} ({r['true_delta_excess']:+.1e})"
        body.append(
            [
                str(r["K"]),
                r["label"],
                f"{r['sigma']:.15g}",
                f"{r['sigma_rel_to_ours_exact']:+.3e}",
                f"{r['exact_epsilon']:.15g}",
                feas,
                fmt_time(r["time_median_s"]),
                str(r["reps"]),
                fmt_mb(r["peak_rss_increase_bytes"]),
            ]
        )
    out.append(table(headers, body, "rlrrrlrrr"))
    out.append("")

    headers = ["K", "σ_ours/σ_PLD − 1", "time_PLD/time_ours", "time_RDP/time_ours", "σ_RDP/σ_ours − 1"]
    body = [
        [
            str(k),
            f"{r['sigma_ours_over_pld_minus_1']:+.3e}",
            f"{r['time_pld_over_ours']:,.0f}×",
            f"{r['time_rdp_over_ours']:,.1f}×",
            f"{r['sigma_rdp_over_ours_minus_1']:+.4%}",
        ]
        for k, r in result["ratios"].items()
    ]
    out.append("ratios (ours = accountant exact; PLD/RDP = dp-accounting calibrate_dp_mechanism)")
    out.append(table(headers, body, "rrrrr"))
    out.append("")

    mem = result.get("memory")
    out.append("peak memory of dp-accounting's PLD calibration (peak RSS increase: VmHWM after − VmRSS before)")
    for r in result["rows"]:
        if r["key"] == "dpa_pld":
            out.append(
                f"  K={r['K']}, ε={EPSILON:g}, δ={DELTA:g} (timing runs above): σ_PLD={r['sigma']:.10g}, "
                f"median time {fmt_time(r['time_median_s'])}, peak RSS +{fmt_mb(r['peak_rss_increase_bytes'])}"
            )
    if mem is None:
        out.append("  small-σ probe (K=1, ε=10) skipped (--no-memory)")
    else:
        for m in mem:
            head = (
                f"  K={m['K']}, ε={m['epsilon']:g}, δ={DELTA:g} (small σ, fresh subprocess, limit "
                f"{MEMORY_TIMEOUT_S:g} s):"
            )
            if m["skipped"]:
                out.append(f"{head} SKIPPED — {m['reason']}")
                continue
            out.append(
                f"{head} σ_PLD={m['pld_sigma']:.10g} (σ_ours/σ_PLD − 1 = {m['sigma_ours_over_pld_minus_1']:+.2e}), "
                f"time {fmt_time(m['pld_time_s'])}, peak RSS +{fmt_mb(m['pld_peak_rss_increase_bytes'])}; "
                f"ours: {fmt_time(m['ours_time_s'])}, +{fmt_mb(m['ours_peak_rss_increase_bytes'])}"
            )
    out.append("")

    out.append("targets")
    for t in result["targets"]:
        out.append(f"  [{'PASS' if t['pass'] else 'FAIL'}] K={t['K']:<5} {t['name']}: {t['display']}")
    infeasible = [r for r in result["rows"] if not r["feasible"]]
    if infeasible:
        out.append(
            "  note: returned σ truly infeasible (δ_true(ε) > δ at 50 digits): "
            + "; ".join(f"K={r['K']} {r['label']}: δ_true/δ − 1 = {r['true_delta_excess']:+.1e}" for r in infeasible)
        )
    else:
        out.append("  note: every returned σ is truly feasible (δ_true(ε) <= δ at 50 digits)")
    out.append(f"  overall: {'PASS' if result['all_pass'] else 'FAIL'}")
    out.append("")
    out.append(f"total wall time: {result['total_wall_s']:.1f} s")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_memory-child"]:
        memory_probe_child(float(argv[1]), int(argv[2]))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object with all numbers")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory probe")
    args = parser.parse_args(argv)

    t_start = time.perf_counter()
    log = (lambda msg: print(f"... {msg}", file=sys.stderr, flush=True)) if sys.stderr.isatty() else (lambda msg: None)

    # Untimed warm-up of every code path (imports, scipy/numpy first-call costs).
    accountant.calibrate_sigma(EPSILON, DELTA, compositions=1)
    pld_privacy_accountant.PLDAccountant().compose(dp_accounting.GaussianDpEvent(5.0)).get_epsilon(DELTA)
    dpa_rdp(1)
    dpa_gsg(1)

    rows: list[dict[str, Any]] = []
    ratios: dict[int, dict[str, float]] = {}
    for k in COMPOSITIONS:
        k_rows = measure_k(k, args.quick, log)
        rows.extend(k_rows)
        ratios[k] = ratios_for(k_rows)
    targets = targets_for(ratios)

    memory = None
    if not args.no_memory:
        memory = []
        log(f"memory probe: K={MEMORY_K}, ε={MEMORY_EPSILON:g}")
        memory.append(memory_probe(MEMORY_EPSILON, MEMORY_K, MEMORY_TIMEOUT_S))

    result = {
        "benchmark": "sigma-calibration",
        "quick": args.quick,
        "epsilon": EPSILON,
        "delta": DELTA,
        "sensitivity": SENSITIVITY,
        "compositions": list(COMPOSITIONS),
        "environment": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "dp_accounting": _version("dp-accounting"),
            "platform": platform.platform(terse=True),
            "cpus": os.cpu_count(),
        },
        "dp_accounting_settings": dpa_settings(),
        "rows": rows,
        "ratios": ratios,
        "targets": targets,
        "all_pass": all(t["pass"] for t in targets),
        "memory": memory,
        "total_wall_s": time.perf_counter() - t_start,
    }
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(render(result))
    return 0


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
