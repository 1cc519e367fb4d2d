"""Benchmark: sequential (anytime-valid) audits against today's fixed-sample audit — runs and wall time to the verdict.

Run (from the repository root)::

    .venv/bin/python bench/sequential.py              # every target: 20 seeds sequential, 3 fixed; the 1,000-seed
                                                      # false-alarm simulation (about an hour on 2 busy cores)
    .venv/bin/python bench/sequential.py --quick      # 5 seeds, 1 fixed, 200 simulated seeds a claim
    .venv/bin/python bench/sequential.py --only laplace-half-epsilon,opendp-laplace
    .venv/bin/python bench/sequential.py --type-i     # only the false-alarm simulation
    .venv/bin/python bench/sequential.py --json       # one JSON object instead of the tables

**Targets.** Each is audited with the default attack (``auto``) and the default executor (``auto``: in-process
until a batch is projected at 2 s, then every core), as ``dpkit audit --target … [--sequential]`` does. The
fixed audit gets the runs per dataset that today's fixed audit needs for its verdict — the CLI's default
``--trials`` 100,000, or the leak zoo's budget where that is what the fixed audit needs (tests/audits/
test_leak_zoo.py: 10⁶ for the rare noise skip, 20,000 for the lattice) — and always spends them all; the
sequential audit is given the same ``runs`` (its budget, :func:`dpkit.audits.sequential.plan_sequential`, is at
most 1.3× that) and stops as soon as its e-value reaches 2/α. Columns: runs per dataset to the verdict (median
over the seeds; the fixed audit's is its ``runs``), their ratio, wall time (median), the verdicts (all seeds).

* violations: Laplace(1) claimed at ε = 0.5 (half its ε); the zoo's Gaussian (σ = 3.7306, claim μ = 0.268) run at
  σ/2; binary randomized response with ε = 1 claimed at 0.7; the leak zoo's rare noise skip (P = 5·10⁻⁴, claim
  (1, 10⁻⁵)) and lattice (disjoint supports) targets; OpenDP's Laplace (``opendp.measurements.make_laplace``,
  scale 1 so ε = 1, one call per run — OpenDP draws from its own secure randomness, so these runs are not
  reproducible from the seed) claimed at ε = 0.5. Goal: >= 20× fewer runs on violations of 2× or more, same
  verdicts; OpenDP's under 10 s.
* correct targets at their claims (the zoo's gaussian, laplace, binary-rr and lattice-aligned): never a
  violation, the fixed verdict, at most 1.3× the fixed runs.
* RL targets, as ``dpkit audit ALGORITHM [--sequential]`` audits them (every position that matters, 4,000 runs per
  dataset and position for the fixed audit, :func:`dpkit.audits.rl.sequential.audit_positions_sequential` for the
  sequential one; runs are counted over all positions): LDP-UCRL-VTR without clipping (the mutant of
  tests/support/rl_mutants.py: pair μ far above the allowance); Private-LinOpt-VI at 0.7 × σ_tight; RLSVI at
  σ_tight (correct: at most 1.3× the fixed runs).

**False alarms under optional stopping.** For the strongest mechanism each claim allows
(:func:`dpkit.audits.mechanisms.at_the_claim`: μ-GDP, (ε, δ)-DP, pure ε-DP, ρ-zCDP), seeds 0 … S − 1 (S = 1,000)
of the sequential audit with the likelihood-ratio score (runs = 2,000 per dataset): the share of seeds whose
e-process ever crossed 2/α (Ville: <= α/2) and the share called a violation (<= α), with 95% Clopper–Pearson
intervals.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.audits import Claim, ScoreFunction, audit_pair
from dpkit.audits import mechanisms as m
from dpkit.audits.estimators import clopper_pearson_lower, clopper_pearson_upper
from dpkit.audits.mechanisms import at_the_claim
from dpkit.audits.sequential import audit_sequential, audit_sequential_batches, release_source

ALPHA = 0.05


def half_sigma_gaussian(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """The zoo's Gaussian mechanism (exactly (1, 1e-5)-DP at its σ) run at half the σ it claims."""
    return float(np.sum(np.asarray(dataset, dtype=float))) + m.GAUSSIAN_SIGMA / 2 * rng.standard_normal((n, 1))


_OPENDP: Any = None


def opendp_laplace(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """OpenDP's Laplace mechanism (scale 1 on a sum of records in [0, 1]: ε = 1), one call per run; ``rng`` is
    unused (OpenDP samples from its own secure randomness)."""
    global _OPENDP
    if _OPENDP is None:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        _OPENDP = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=1.0)
    value = float(np.sum(np.asarray(dataset, dtype=float)))
    return np.array([_OPENDP(value) for _ in range(n)], dtype=float).reshape(n, 1)


def _zoo(name: str) -> m.ZooCase:
    return next(c for c in m.leak_zoo() if c.name == name)


def targets() -> list[dict[str, Any]]:
    """The benchmark's targets: name, release, the pair, the claim, the fixed audit's runs, the expected verdict."""
    rows: list[dict[str, Any]] = [
        dict(name="laplace-half-epsilon", release=m.laplace_mechanism, pair=((), (1.0,)), claim=Claim.dp(0.5, 0.0)),
        dict(
            name="gaussian-half-sigma",
            release=half_sigma_gaussian,
            pair=((), (1.0,)),
            claim=Claim.gaussian(m.GAUSSIAN_SIGMA, 1.0),
        ),
        dict(name="rr-0.7-epsilon", release=m.binary_randomized_response, pair=(0, 1), claim=Claim.dp(0.7, 0.0)),
        dict(name="opendp-laplace-half-epsilon", release=opendp_laplace, pair=((), (1.0,)), claim=Claim.dp(0.5, 0.0)),
    ]
    for row in rows:
        row.update(runs=100_000, violates=True, factor=2.0 if "half" in row["name"] else 1 / 0.7)
    for name, runs in (("skipped-noise", 1_000_000), ("lattice", 20_000)):
        c = _zoo(name)
        rows.append(
            dict(name=name, release=c.release, pair=(c.dataset0, c.dataset1), claim=c.claim, runs=runs, violates=True)
        )
        rows[-1]["factor"] = math.inf
    for name, runs in (
        ("gaussian", 200_000),
        ("laplace", 200_000),
        ("binary-rr", 50_000),
        ("lattice-aligned", 100_000),
    ):
        c = _zoo(name)
        rows.append(
            dict(
                name=f"{name} (correct)",
                release=c.release,
                pair=(c.dataset0, c.dataset1),
                claim=c.claim,
                runs=runs,
                violates=False,
                factor=1.0,
            )
        )
    return rows


def rl_targets() -> list[dict[str, Any]]:
    """The RL targets: name, setting, whether it violates its declaration, and by what factor (pair μ ÷ allowance,
    or the σ's shortfall)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
    from rl_mutants import ldp_no_clipping

    from dpkit.audits.rl.fixed import position_claim
    from dpkit.audits.rl.setting import default_setting

    tight = position_claim(default_setting("private-linopt-vi")).sigmas_claim
    low = tuple(sorted((k, 0.7 * v) for k, v in tight.items()))
    return [
        dict(
            name="ldp-ucrl-vtr without clipping",
            setting=default_setting("ldp-ucrl-vtr", implementation=ldp_no_clipping),
            violates=True,
            factor=6.6,  # pair μ 7.9 against an allowance of 1.2 (issue 31)
        ),
        dict(
            name="private-linopt-vi at 0.7 × σ_tight",
            setting=default_setting("private-linopt-vi", sigma=low),
            violates=True,
            factor=1 / 0.7,
        ),
        dict(name="rlsvi at σ_tight (correct)", setting=default_setting("rlsvi"), violates=False, factor=1.0),
    ]


def run_rl_target(target: dict[str, Any], seeds: int, fixed_seeds: int, runs: int = 4000) -> dict[str, Any]:
    from dpkit.audits.rl import audit_positions
    from dpkit.audits.rl.sequential import audit_positions_sequential

    seq_runs, seq_time, seq_verdicts = [], [], []
    for seed in range(seeds):
        t0 = time.perf_counter()
        r = audit_positions_sequential(target["setting"], runs=runs, seed=seed)
        seq_time.append(time.perf_counter() - t0)
        seq_runs.append(r.runs_used)
        seq_verdicts.append(r.verdict)
        fixed_runs, budget = r.fixed_runs, r.budget * len(r.positions)
        print(f"    {target['name']} seed {seed}: {r.verdict} after {r.runs_used:,} runs", file=sys.stderr)
    fixed_time, fixed_verdicts = [], []
    for seed in range(fixed_seeds):
        t0 = time.perf_counter()
        f = audit_positions(target["setting"], runs=runs, seed=seed)
        fixed_time.append(time.perf_counter() - t0)
        fixed_verdicts.append(f.verdict)
        print(f"    {target['name']} fixed seed {seed}: {f.verdict} ({fixed_time[-1]:.1f} s)", file=sys.stderr)
    return {
        "name": target["name"],
        "claim": "its declaration (every position)",
        "violates": target["violates"],
        "runs": fixed_runs,
        "budget": budget,
        "sequential_runs_median": _median(seq_runs),
        "sequential_runs": seq_runs,
        "sequential_seconds_median": _median(seq_time),
        "sequential_verdicts": {v: seq_verdicts.count(v) for v in sorted(set(seq_verdicts))},
        "fixed_runs": fixed_runs,
        "fixed_seconds_median": _median(fixed_time) if fixed_time else None,
        "fixed_verdicts": {v: fixed_verdicts.count(v) for v in sorted(set(fixed_verdicts))},
        "runs_ratio": fixed_runs / _median(seq_runs),
        "violation_factor": target["factor"],
        "cost_ratio": _median(seq_runs) / fixed_runs,
        "executors": ["in-process"],
        "seeds": seeds,
        "fixed_seeds": fixed_seeds,
    }


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def run_target(target: dict[str, Any], seeds: int, fixed_seeds: int) -> dict[str, Any]:
    d0, d1 = target["pair"]
    seq_runs, seq_time, seq_verdicts, executors = [], [], [], set()
    for seed in range(seeds):
        t0 = time.perf_counter()
        r = audit_sequential(target["release"], d0, d1, target["claim"], runs=target["runs"], seed=seed)
        seq_time.append(time.perf_counter() - t0)
        seq_runs.append(r.runs_used)
        seq_verdicts.append(r.verdict)
        executors.add(r.executor.split(" (")[0])
        budget = r.runs
        print(f"    {target['name']} seed {seed}: {r.verdict} after {r.runs_used:,} runs", file=sys.stderr)
    fixed_time, fixed_verdicts = [], []
    for seed in range(fixed_seeds):
        t0 = time.perf_counter()
        f = audit_pair(target["release"], d0, d1, target["claim"], runs=target["runs"], seed=seed, chunk_size=100_000)
        fixed_time.append(time.perf_counter() - t0)
        fixed_verdicts.append(f.verdict)
        executors.add("fixed: " + f.executor.split(" (")[0])
        print(f"    {target['name']} fixed seed {seed}: {f.verdict} ({fixed_time[-1]:.1f} s)", file=sys.stderr)
    return {
        "name": target["name"],
        "claim": target["claim"].describe(),
        "violates": target["violates"],
        "runs": target["runs"],
        "budget": budget,
        "sequential_runs_median": _median(seq_runs),
        "sequential_runs": seq_runs,
        "sequential_seconds_median": _median(seq_time),
        "sequential_verdicts": {v: seq_verdicts.count(v) for v in sorted(set(seq_verdicts))},
        "fixed_runs": target["runs"],
        "fixed_seconds_median": _median(fixed_time) if fixed_time else None,
        "fixed_verdicts": {v: fixed_verdicts.count(v) for v in sorted(set(fixed_verdicts))},
        "runs_ratio": target["runs"] / _median(seq_runs),
        "violation_factor": target["factor"],
        "cost_ratio": _median(seq_runs) / target["runs"],
        "executors": sorted(executors),
        "seeds": seeds,
        "fixed_seeds": fixed_seeds,
    }


def first_column(outputs: np.ndarray) -> np.ndarray:
    return np.asarray(outputs)[:, 0]


def _false_alarms(task: tuple[Claim, int, int]) -> tuple[int, int]:
    claim, start, stop = task
    release, d0, d1 = at_the_claim(claim)
    score = ScoreFunction(first_column, name="likelihood-ratio order")
    crossed = violations = 0
    for seed in range(start, stop):
        r = audit_sequential_batches(
            release_source(release, d0, d1, seed=seed), claim, runs=2_000, attack=score, alpha=ALPHA
        )
        crossed += r.e_value_max >= r.threshold
        violations += r.verdict == "violation"
    return crossed, violations


def type_i(seeds: int, workers: int) -> list[dict[str, Any]]:
    claims = [Claim.gdp(0.5), Claim.dp(1.0, 1e-5), Claim.dp(1.0, 0.0), Claim.zcdp(0.125)]
    rows = []
    with ProcessPoolExecutor(workers) as pool:
        for claim in claims:
            t0 = time.perf_counter()
            cuts = np.linspace(0, seeds, 2 * workers + 1).astype(int)
            parts = list(pool.map(_false_alarms, [(claim, int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]))
            crossed, violations = sum(p[0] for p in parts), sum(p[1] for p in parts)

            def interval(k: int) -> list[float]:
                return [clopper_pearson_lower(k, seeds, 0.025), clopper_pearson_upper(k, seeds, 0.025)]

            rows.append(
                {
                    "claim": claim.describe(),
                    "seeds": seeds,
                    "e_process_crossed": crossed / seeds,
                    "e_process_crossed_interval": interval(crossed),
                    "violations": violations / seeds,
                    "violations_interval": interval(violations),
                    "seconds": time.perf_counter() - t0,
                }
            )
            print(f"    type I {claim.describe()}: {violations}/{seeds} violations", file=sys.stderr)
    return rows


def _verdicts(counts: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items()) or "—"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=None, help="Sequential seeds per target (20; --quick 5).")
    parser.add_argument("--fixed-seeds", type=int, default=None, help="Fixed-audit seeds per target (3; --quick 1).")
    parser.add_argument(
        "--correct-seeds", type=int, default=None, help="Sequential seeds per correct target (5; --quick 2)."
    )
    parser.add_argument("--type-i-seeds", type=int, default=None, help="Simulated seeds per claim (1000; --quick 200).")
    parser.add_argument("--only", default=None, help="Comma-separated target names (default: all).")
    parser.add_argument("--rl-seeds", type=int, default=None, help="Sequential seeds per RL target (20; --quick 2).")
    parser.add_argument(
        "--rl-fixed-seeds",
        type=int,
        default=1,
        help="Fixed-audit seeds per RL target (1; 0 skips it: its runs are known, 3 positions × 4,000, its time not).",
    )
    parser.add_argument("--no-rl", action="store_true", help="Skip the RL targets.")
    parser.add_argument("--type-i", action="store_true", help="Only the false-alarm simulation.")
    parser.add_argument("--no-type-i", action="store_true", help="Skip the false-alarm simulation.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    seeds = args.seeds or (5 if args.quick else 20)
    fixed_seeds = args.fixed_seeds if args.fixed_seeds is not None else (1 if args.quick else 3)
    sim_seeds = args.type_i_seeds or (200 if args.quick else 1000)
    chosen = targets()
    if args.only:
        names = set(args.only.split(","))
        chosen = [t for t in chosen if t["name"] in names]
    elif args.quick:
        chosen = [t for t in chosen if t["runs"] < 1_000_000]
    correct_seeds = args.correct_seeds or (2 if args.quick else 5)
    rows = (
        [] if args.type_i else [run_target(t, seeds if t["violates"] else correct_seeds, fixed_seeds) for t in chosen]
    )
    rl_chosen = [] if args.type_i or args.no_rl else rl_targets()
    if args.only:
        rl_chosen = [t for t in rl_chosen if t["name"] in names]
    rl_seeds = args.rl_seeds or (2 if args.quick else 20)
    rows += [
        run_rl_target(t, rl_seeds if t["violates"] else max(1, rl_seeds // 5), args.rl_fixed_seeds) for t in rl_chosen
    ]
    sims = [] if args.no_type_i else type_i(sim_seeds, args.workers)
    if args.json:
        print(json.dumps({"alpha": ALPHA, "targets": rows, "type_i": sims}))
        return 0
    if rows:
        print(
            f"Runs per dataset and wall time to the verdict (median over {seeds} sequential seeds, {correct_seeds} "
            f"for correct targets; fixed: its runs, time over {fixed_seeds} seeds); 95% confidence"
        )
        head = (
            f"{'target':<34} {'claim':<32} {'fixed runs':>10} {'seq. runs':>10} {'ratio':>7} "
            f"{'fixed s':>8} {'seq. s':>8}  verdicts: sequential | fixed"
        )
        print(head)
        for r in rows:
            fixed_s = "—" if r["fixed_seconds_median"] is None else f"{r['fixed_seconds_median']:.2f}"
            print(
                f"{r['name']:<34} {r['claim'][:32]:<32} {r['fixed_runs']:>10,} {r['sequential_runs_median']:>10,.0f} "
                f"{r['runs_ratio']:>6.1f}× {fixed_s:>8} {r['sequential_seconds_median']:>8.2f}  "
                f"{_verdicts(r['sequential_verdicts'])} | {_verdicts(r['fixed_verdicts'])}"
            )
        for r in rows:
            if r["name"].startswith("opendp"):
                ok = r["sequential_seconds_median"] < 10 and r["sequential_verdicts"].get("violation") == r["seeds"]
                print(f"OpenDP's Laplace at half its ε: {r['sequential_seconds_median']:.2f} s (goal < 10 s): {ok}")
        strong = [r for r in rows if r["violates"] and r["violation_factor"] >= 2.0]
        if strong:
            met = [r["name"] for r in strong if r["runs_ratio"] >= 20.0]
            print(f"violations of 2× or more with >= 20× fewer runs: {len(met)} of {len(strong)} ({', '.join(met)})")
        correct = [r for r in rows if not r["violates"]]
        if correct:
            worst = max(r["cost_ratio"] for r in correct)
            alarms = sum(r["sequential_verdicts"].get("violation", 0) for r in correct)
            print(f"correct targets: {alarms} violations; sequential cost at most {worst:.3f}× the fixed runs")
    if sims:
        print(f"False alarms of the sequential audit at the claim (α = {ALPHA}; e-process at α/2), runs = 2,000")
        print(f"{'claim':<20} {'seeds':>6} {'e-process crossed [95% CI]':>30} {'violations [95% CI]':>28}")
        for s in sims:
            ci_e = "[{:.4f}, {:.4f}]".format(*s["e_process_crossed_interval"])
            ci_v = "[{:.4f}, {:.4f}]".format(*s["violations_interval"])
            print(
                f"{s['claim']:<20} {s['seeds']:>6} {s['e_process_crossed']:>10.4f} {ci_e:>19} "
                f"{s['violations']:>10.4f} {ci_v:>17}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
