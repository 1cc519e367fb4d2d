"""Benchmark: how often a correct implementation's many-run rows carry a reading of reused noise by chance.

Run (from the repository root)::

    .venv/bin/python bench/reused_noise_chance.py               # 5,000 runs per dataset and position
    .venv/bin/python bench/reused_noise_chance.py --runs 1000 --json

Every white-box row of a billboard (the seeds' counters, a user's billboard agent) or of a local-DP agent's messages
ends with the column in which the observer reads the changed user's coin from a noise value that repeats
(``dpkit.audits.rl.reused_noise.changed_user_vote``). Fresh Gaussian noise repeats only by chance, within the
rounding the reading allows: this counts the rows that carry a reading, over the runs of D and of D′ at every
position of the default audit of each correct algorithm (σ tight; the example agents at σ paper, as their docs run
them). A reading only moves the score of its run (the Clopper–Pearson bounds judge every score on held-out runs), so
chance readings cost power, never validity: this measures how much of that there is.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cases() -> list[tuple[str, dict[str, str]]]:
    """The correct implementations measured: the seeds with a billboard or messages, and the example agents."""
    sys.path.insert(0, str(ROOT / "examples"))
    import jdp_agent
    import jdp_prefix_agent

    from dpkit.audits.rl import register_agent

    agents = [
        register_agent(jdp_agent.CountingAgent, name="CountingAgent"),
        register_agent(jdp_prefix_agent.FreshPrefixAgent, name="FreshPrefixAgent"),
    ]
    seeds = ("private-ofu-rl", "private-linopt-vi", "private-linopt-po", "ldp-ucrl-vtr")
    return [(name, {}) for name in seeds] + [(name, {"sigma": "paper"}) for name in agents]


def readings(algorithm: str, runs: int, **overrides: str) -> tuple[int, int]:
    """The rows with a reading, and the rows, over ``runs`` runs of D and of D′ at every position of ``algorithm``'s
    default audit (each dataset with a seed of its own)."""
    import numpy as np

    from dpkit.audits.rl import default_setting, neighbouring_datasets, positions, rl_release

    read = total = 0
    for position in positions(default_setting(algorithm, **overrides)):
        for which, dataset in enumerate(
            neighbouring_datasets(default_setting(algorithm, position=position, **overrides))
        ):
            rows = rl_release(dataset, np.random.default_rng(1000 + which), runs)
            half = (rows.shape[1] - 2) // 2
            read += int(np.count_nonzero(rows[:, 2 * half - 1]))  # the reading's signal: 0 without one
            total += runs
    return read, total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5000, help="runs per dataset and position (default 5,000)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for algorithm, overrides in _cases():
        started = time.perf_counter()
        read, total = readings(algorithm, args.runs, **overrides)
        rows.append({"algorithm": algorithm, **overrides, "rows": total, "readings": read})
        print(
            f"  {algorithm}: {read} readings in {total} rows ({time.perf_counter() - started:.0f} s)", file=sys.stderr
        )
    if args.json:
        print(json.dumps({"runs": args.runs, "rows": rows}))
        return 0
    print(f"Chance readings of reused noise in correct implementations ({args.runs} runs per dataset and position)")
    print(f"{'algorithm':>20} {'rows':>8} {'readings':>9}")
    for r in rows:
        print(f"{r['algorithm']:>20} {r['rows']:>8} {r['readings']:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
