"""Benchmark: the verdicts of (ε, δ) audits over many seeds — where an (ε, δ) claim breaks (issue 41).

Run (from the repository root)::

    .venv/bin/python bench/verdict_sweep.py               # 100 seeds per target, 100,000 trials per dataset
    .venv/bin/python bench/verdict_sweep.py --seeds 20 --targets gauss-2 --json
    .venv/bin/python bench/verdict_sweep.py --type-i      # only the false alarms at each claim's extremal mechanism

Each target is a one-dimensional count with added noise (``dpkit.audits.mechanisms.tail_cases``), audited as
``dpkit audit --target`` does (the default attack ``auto``, the default tests, confidence 95%) against the claim
(1, 10⁻⁵)-DP on the pair ([0], [0, 1]):

* ``gauss-2``: Gaussian noise σ = 2 where the claim needs 3.7306 (true ε at 10⁻⁵ ≈ 1.99): must be a violation;
* ``gauss-1.5x``: σ = 3.7306/1.5 (true ε ≈ 1.56): never ``consistent`` (a violation, or inconclusive with the
  trials that would certify it);
* ``gauss-right``: σ = 3.7306 (exactly the claim): never a violation, ``consistent`` in most seeds;
* ``laplace-2x``, ``laplace-1.5x``, ``laplace-right``: Laplace noise of scale 1/2, 1/1.5 and 1 (pure ε = 2, 1.5
  and 1) against the same claim.

The table gives each target's verdict counts with the seeds of the unexpected ones. ``--type-i`` (or
``--type-i-seeds N``, default 1,000, 0 to skip) adds the false alarms of the fixed audit at the strongest mechanism
each kind of claim allows (``dpkit.audits.mechanisms.at_the_claim``: a μ-GDP, an (ε, δ), a pure ε and a ρ-zCDP
claim), 2,000 runs per dataset, the likelihood ratio's order as the attack (the most powerful, so the hardest case
for the level): at confidence 95% at most 5% of the seeds may be violations.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from dpkit.audits.mechanisms import tail_cases

CLAIM = (1.0, 1e-5)
TARGETS = {c.name: c for c in tail_cases()}


def _type_i_claims() -> tuple[object, ...]:
    from dpkit.audits import Claim

    return (Claim.gdp(0.5), Claim.dp(1.0, 1e-5), Claim.dp(1.0, 0.0), Claim.zcdp(0.125))


TYPE_I_CLAIMS = _type_i_claims()


def _one(task: tuple[str, int, int]) -> tuple[str, int, str, float | None]:
    from dpkit.algorithms.executors import InProcessExecutor
    from dpkit.audits import Claim, audit_pair

    name, seed, trials = task
    release = TARGETS[name].release
    with InProcessExecutor() as ex:
        result = audit_pair(release, [0.0], [0.0, 1.0], Claim.dp(*CLAIM), runs=trials, seed=seed, executor=ex)
    shape = result.judgement.shape
    return name, seed, result.verdict, None if shape is None else shape.epsilon


def _false_alarm(task: tuple[int, int]) -> bool:
    from dpkit.algorithms.executors import InProcessExecutor
    from dpkit.audits import ScoreFunction, audit_pair
    from dpkit.audits.mechanisms import at_the_claim

    index, seed = task
    claim = TYPE_I_CLAIMS[index]
    release, d0, d1 = at_the_claim(claim)
    score = ScoreFunction(first_column, name="likelihood-ratio order")
    with InProcessExecutor() as ex:
        return (
            audit_pair(release, d0, d1, claim, runs=2_000, seed=seed, attack=score, executor=ex).verdict == "violation"
        )


def first_column(outputs: np.ndarray) -> np.ndarray:
    return np.asarray(outputs)[:, 0]


def type_i(seeds: int, workers: int) -> list[dict[str, object]]:
    """The false-alarm rate of the fixed audit at each claim's extremal mechanism over ``seeds`` seeds."""
    from dpkit.audits.estimators import clopper_pearson_lower, clopper_pearson_upper

    rows = []
    with ProcessPoolExecutor(workers) as pool:
        for i, claim in enumerate(TYPE_I_CLAIMS):
            started = time.perf_counter()
            alarms = sum(pool.map(_false_alarm, [(i, s) for s in range(seeds)], chunksize=20))
            rows.append(
                {
                    "claim": claim.describe(),
                    "seeds": seeds,
                    "violations": alarms,
                    "rate": alarms / seeds,
                    "interval": [
                        clopper_pearson_lower(alarms, seeds, 0.025),
                        clopper_pearson_upper(alarms, seeds, 0.025),
                    ],
                    "seconds": time.perf_counter() - started,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--targets", default=",".join(TARGETS), help="Comma-separated (default: all).")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--type-i", action="store_true", help="Only the false-alarm simulation.")
    parser.add_argument("--type-i-seeds", type=int, default=None, help="Seeds per claim (1,000; 0: skip it).")
    args = parser.parse_args(argv)
    type_i_seeds = 1_000 if args.type_i_seeds is None else args.type_i_seeds
    names = [] if args.type_i else args.targets.split(",")
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        parser.error(f"unknown targets {unknown}: choose among {list(TARGETS)}")
    tasks = [(n, s, args.trials) for n in names for s in range(args.first_seed, args.first_seed + args.seeds)]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        done = list(pool.map(_one, tasks))
    rows = []
    for name in names:
        mine = [d for d in done if d[0] == name]
        counts = {v: sum(d[2] == v for d in mine) for v in ("violation", "inconclusive", "consistent")}
        expected = TARGETS[name].expected
        bad = [
            d[1]
            for d in mine
            if (expected == "violation" and d[2] != "violation")
            or (expected == "not consistent" and d[2] == "consistent")
            or (expected == "not violation" and d[2] == "violation")
        ]
        eps = [d[3] for d in mine if d[3] is not None]
        rows.append(
            {
                "target": name,
                "expected": expected,
                **counts,
                "unexpected_seeds": bad,
                "shape_epsilon_median": float(np.median(eps)) if eps else None,
            }
        )
    seconds = time.perf_counter() - started
    alarms = type_i(type_i_seeds, args.workers) if type_i_seeds > 0 else []
    if args.json:
        out = {"trials": args.trials, "seeds": args.seeds, "seconds": seconds, "rows": rows, "type_i": alarms}
        json.dump(out, sys.stdout, indent=1)
        print()
        return 0
    if rows:
        print(
            f"(1, 1e-5)-DP claims, {args.seeds} seeds from {args.first_seed}, {args.trials:,} trials: {seconds:.0f} s"
        )
        print(f"{'target':15} {'expected':15} {'viol.':>6} {'incon.':>6} {'cons.':>6}  ε of the shape  unexpected")
        for r in rows:
            med = r["shape_epsilon_median"]
            print(
                f"{r['target']:15} {r['expected']:15} {r['violation']:6d} {r['inconclusive']:6d} {r['consistent']:6d}"
                f"  {'—' if med is None else f'{med:.3g}':>14}  {r['unexpected_seeds'] or ''}"
            )
    if alarms:
        print(f"false alarms at each claim's extremal mechanism (2,000 runs, {type_i_seeds} seeds, α = 0.05):")
        for a in alarms:
            lo, hi = a["interval"]
            rate = f"{a['violations']:4d} ({a['rate']:.3f}, 95% CI {lo:.3f}–{hi:.3f})"
            print(f"  {a['claim']:20} {rate}  {a['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
