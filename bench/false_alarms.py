"""Benchmark: the false-alarm rate of the default RL audits on the correct seed algorithms at σ = tight.

Run (from the repository root)::

    .venv/bin/python bench/false_alarms.py                # 100 seeds per algorithm, 500 runs per dataset and position
    .venv/bin/python bench/false_alarms.py --seeds 200 --runs 1000 --json

Each correct private seed algorithm is audited as ``dpkit audit ALGORITHM`` does — its default setting
(``dpkit.audits.rl.default_setting``) at every position of the changed user that matters and, for the jointly
private ones, the plans served after her and its plan probe, each pair at its share of α, the attack chosen on a
selection split (``dpkit.audits.rl.audit_positions``) — at σ = tight with seeds 0 … S − 1 (the audits run on a
process pool, one audit per task). ``--algorithms`` also takes a user's agent as ``FILE.py:NAME`` (e.g.
``examples/jdp_agent.py:CountingAgent``, audited as ``dpkit audit --agent`` does). An audit at
confidence 95% must call a correct implementation a violation with probability at most α = 0.05; the
table gives the violations, their rate with its 95% Clopper–Pearson interval, and the share of audits
that were ``inconclusive`` (fewer runs per dataset give less power, never more false alarms).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor

ALGORITHMS = ("ldp-ucrl-vtr", "private-linopt-vi", "private-linopt-po", "private-ofu-rl", "rlsvi")


def _one(task: tuple[str, int, int]) -> str:
    from dpkit.audits.rl import audit_positions, default_setting

    algorithm, seed, runs = task
    if ":" in algorithm:  # a user's agent file, registered in this worker as `dpkit audit --agent` does
        from dpkit.commands.audit.rl import register_agent_file

        algorithm = register_agent_file(algorithm)
    return audit_positions(default_setting(algorithm, sigma="tight"), runs=runs, seed=seed).verdict


def main(argv: list[str] | None = None) -> int:
    from dpkit.audits.estimators import clopper_pearson_lower, clopper_pearson_upper

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--algorithms",
        default=",".join(ALGORITHMS),
        help="Comma-separated registered algorithms or agent files FILE.py:NAME (default: the five seeds).",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    with ProcessPoolExecutor(args.workers) as pool:
        for algorithm in args.algorithms.split(","):
            started = time.perf_counter()
            verdicts = list(pool.map(_one, [(algorithm, s, args.runs) for s in range(args.seeds)]))
            v, inc = verdicts.count("violation"), verdicts.count("inconclusive")
            rows.append(
                {
                    "algorithm": algorithm,
                    "seeds": args.seeds,
                    "runs": args.runs,
                    "violations": v,
                    "rate": v / args.seeds,
                    "interval": [
                        clopper_pearson_lower(v, args.seeds, 0.025),
                        clopper_pearson_upper(v, args.seeds, 0.025),
                    ],
                    "inconclusive": inc / args.seeds,
                    "seconds": time.perf_counter() - started,
                }
            )
            print(f"  {algorithm}: {v} violations in {args.seeds} ({rows[-1]['seconds']:.0f} s)", file=sys.stderr)
    if args.json:
        print(json.dumps({"alpha": 0.05, "rows": rows}))
        return 0
    print(
        f"False alarms of the default RL audits at σ = tight (α = 0.05 over every position and plan probe; "
        f"{args.runs} runs per dataset and position)"
    )
    print(f"{'algorithm':>20} {'seeds':>6} {'violations':>10} {'rate':>6} {'95% interval':>16} {'inconclusive':>12}")
    for r in rows:
        lo, hi = r["interval"]
        print(
            f"{r['algorithm']:>20} {r['seeds']:>6} {r['violations']:>10} {r['rate']:>6.3f} "
            f"{f'[{lo:.3f}, {hi:.3f}]':>16} {r['inconclusive']:>12.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
