"""Benchmark: false alarms and time of one-run audits of correct local-DP agents.

Run (from the repository root)::

    .venv/bin/python bench/one_run.py                    # 100 seeds, 5,000 canaries, claim (1, 1e-5)
    .venv/bin/python bench/one_run.py --seeds 200 --canaries 5000 --json

For each correct agent — LDP-UCRL-VTR and the user's agent of examples/ldp_agent.py — one-run audits
(:func:`dpkit.audits.rl.one_run.audit_one_run`) with seeds 0 … S − 1 at σ = tight: a correct agent must be a
``violation`` in at most α = 5% of them. Prints the violations, their rate with a 95% Clopper–Pearson interval,
the median ε lower bound and the seconds per audit; the no-clipping twin of the user's agent is run beside it
(its rate of ``violation`` is the audit's power against that bug).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--canaries", type=int, default=5000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from scipy import stats

    from dpkit.audits.rl import register_agent
    from dpkit.audits.rl.one_run import audit_one_run
    from dpkit.loading import load_object

    example = ROOT / "examples" / "ldp_agent.py"
    cases = [("ldp-ucrl-vtr", "ldp-ucrl-vtr", None)]
    for attr in ("make_agent", "make_agent_without_clipping"):
        cases.append((attr, register_agent(load_object("--agent", f"{example}:make_agent")), attr))
    rows = []
    for label, name, attr in cases:
        implementation = None if attr in (None, "make_agent") else load_object("--agent", f"{example}:{attr}")
        verdicts, bounds, seconds = [], [], []
        for seed in range(args.seeds):
            started = time.perf_counter()
            r = audit_one_run(
                name,
                canaries=args.canaries,
                seed=seed,
                epsilon=args.epsilon,
                delta=args.delta,
                implementation=implementation,
            )
            seconds.append(time.perf_counter() - started)
            verdicts.append(r.verdict)
            bounds.append(r.epsilon_lower)
        k, n = verdicts.count("violation"), len(verdicts)
        lo = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
        hi = 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))
        rows.append(
            {
                "agent": label,
                "seeds": n,
                "violations": k,
                "rate": k / n,
                "interval": [lo, hi],
                "inconclusive": verdicts.count("inconclusive") / n,
                "median_epsilon_lower": statistics.median(bounds),
                "seconds_per_audit": statistics.median(seconds),
            }
        )
    if args.json:
        print(json.dumps({"canaries": args.canaries, "epsilon": args.epsilon, "delta": args.delta, "rows": rows}))
        return 0
    print(f"one-run audits, {args.canaries} canaries, claim ({args.epsilon:g}, {args.delta:g}), σ = tight")
    print(
        f"{'agent':>28} {'seeds':>6} {'violations':>10} {'rate':>6} {'95% interval':>16} "
        f"{'median ε≥':>9} {'s/audit':>8}"
    )
    for r in rows:
        print(
            f"{r['agent']:>28} {r['seeds']:>6} {r['violations']:>10} {r['rate']:>6.3f} "
            f"[{r['interval'][0]:.3f}, {r['interval'][1]:.3f}] {r['median_epsilon_lower']:>9.3f} "
            f"{r['seconds_per_audit']:>8.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
