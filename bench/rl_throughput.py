"""Simulated audit runs per second of every seed algorithm: run by run against in batches, side by side.

    python bench/rl_throughput.py [--runs N] [--repeats K] [--workers W] [--json]

For each seed algorithm (and the example user's agent, examples/jdp_agent.py:CountingAgent, which has no batches and
goes run by run in every way), in its default audit setting (``dpkit audit ALGORITHM``'s, at the first position),
``N`` runs on D and ``N`` on D′ of :func:`dpkit.audits.rl.rl_release` — the unit an audit runs — three ways:

* ``per run`` — in this process, one run at a time through the algorithm's ``observe`` (the path of every run
  before the algorithms simulated batches: each run builds its agent and plays its episodes alone);
* ``batched`` — in this process, the runs handed to the algorithm's ``observe_batch`` in chunks
  (:data:`dpkit.audits.rl_setting.BATCH_RUNS`): one agent of many runs, a leading run axis through its counters,
  planner, environment and observer;
* ``batched, auto`` — as ``dpkit audit`` runs them by default: the batches on an auto executor, in chunks of the
  audit's 250 runs (a pool of W processes, started before the clock, as an audit starts it once for all its
  positions).

The ways give the same rows (checked: equal within 1e-9 — a batch's linear algebra may round differently in the
last bit). Each way is measured ``--repeats`` times in turns and its fastest kept; the table gives runs per second
and the ratio of the batches to the runs one by one, in this process — the acceptance figure of issue 42 (≥ 10×) —
and with the pool; and the machine's load before and after (other work slows every way: run it on a quiet machine
for the note).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.algorithms.executors import AutoExecutor, Executor, run_pair
from dpkit.audits.rl import default_setting, neighbouring_datasets, register_agent, rl_release
from dpkit.loading import FileFunction

SEED_ALGORITHMS = ("ldp-ucrl-vtr", "private-linopt-vi", "private-linopt-po", "private-ofu-rl", "rlsvi")
EXAMPLE_AGENT = str(Path(__file__).resolve().parents[1] / "examples" / "jdp_agent.py") + ":CountingAgent"
#: The audit's chunk of runs (dpkit.audits.rl.audit_setting's chunk_size).
CHUNK = 250
_SEED = 7


def one_by_one(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """:func:`rl_release` with every run alone through the algorithm's ``observe`` (the same rows: run i draws from
    child i of ``rng``, as in the batches)."""
    from threadpoolctl import threadpool_limits

    from dpkit.audits.rl_setting import _release

    with threadpool_limits(limits=1, user_api="blas"):
        return _release(dataset, rng, n, batched=False)


def runs_per_second(algorithm: str, runs: int, executor: Executor | None, *, batched: bool) -> tuple[float, np.ndarray]:
    """Runs per second (D and D′ together) of ``runs`` runs per dataset, and the rows (for the check)."""
    d0, d1 = neighbouring_datasets(default_setting(algorithm))
    release = rl_release if batched else one_by_one
    started = time.perf_counter()
    out0, out1 = run_pair(release, d0, d1, runs, _SEED, executor=executor, chunk_size=CHUNK)
    seconds = time.perf_counter() - started
    return 2 * runs / seconds, np.concatenate([out0, out1])


def measure(algorithm: str, runs: int, pool: Executor, workers: int, repeats: int) -> dict[str, Any]:
    """One algorithm's three ways, after a warm-up (its world, declaration and claim σ, computed once per audit in
    every way), each ``repeats`` times in turns (the fastest kept: the machine's other work only slows a way)."""
    runs_per_second(algorithm, 2, None, batched=True)
    ways: dict[str, tuple[Executor | None, bool]] = {
        "per run": (None, False),
        "batched": (None, True),
        "batched, auto": (pool, True),
    }
    rates: dict[str, float] = dict.fromkeys(ways, 0.0)
    rows = []
    for _ in range(repeats):
        for way, (executor, batched) in ways.items():
            rate, out = runs_per_second(algorithm, runs, executor, batched=batched)
            rates[way] = max(rates[way], rate)
            rows.append(out)
    if not all(np.allclose(rows[0], r, rtol=1e-9, atol=1e-9) for r in rows[1:]):
        raise AssertionError(f"{algorithm}: the ways gave different rows")
    return {"algorithm": algorithm, "runs_per_dataset": runs, "workers": workers, "runs_per_second": rates}


def table(rows: list[dict[str, Any]]) -> str:
    auto = f"batched, auto ({rows[0]['workers']} workers)"
    header = ["per run", "batched", auto, "batched ÷ per run", "auto ÷ per run"]
    lines = ["| algorithm | " + " | ".join(header) + " |", "|---" * (len(header) + 1) + "|"]
    for r in rows:
        rate = r["runs_per_second"]
        cells = [f"{rate[w]:.0f}/s" for w in ("per run", "batched", "batched, auto")]
        cells += [f"{rate['batched'] / rate['per run']:.1f}×", f"{rate['batched, auto'] / rate['per run']:.1f}×"]
        lines.append(f"| {r['algorithm']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=500, help="runs per dataset of each way (default 500: two chunks)")
    parser.add_argument("--repeats", type=int, default=2, help="measurements of each way, in turns (the fastest kept)")
    parser.add_argument("--workers", type=int, default=None, help="the auto executor's pool (default: every core)")
    parser.add_argument("--algorithm", action="append", help="only these algorithms (default: every seed algorithm)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    before = os.getloadavg()[0]
    algorithms = tuple(args.algorithm or SEED_ALGORITHMS)
    if not args.algorithm:
        algorithms += (register_agent(FileFunction("--agent", EXAMPLE_AGENT), name="counting-agent"),)
    rows = []
    with AutoExecutor(args.workers, slow_seconds=0.0) as pool:
        workers = pool.pool_workers
        # the pool started before the clock (an audit starts it once for all its positions)
        d0, d1 = neighbouring_datasets(default_setting(SEED_ALGORITHMS[0]))
        run_pair(rl_release, d0, d1, 4, 0, executor=pool, chunk_size=1)
        for algorithm in algorithms:
            rows.append(measure(algorithm, args.runs, pool, workers, args.repeats))
            if not args.json:
                print(table(rows[-1:]).splitlines()[-1], flush=True)
    load = "load average over the last minute: " + ", ".join(f"{x:.1f}" for x in (before, os.getloadavg()[0]))
    if args.json:
        print(json.dumps({"rows": rows, "cpus": os.cpu_count(), "load": [before, os.getloadavg()[0]]}))
        return
    print()
    print(table(rows))
    print(f"\n{os.cpu_count()} CPUs; {load} (before, after): the other work the machine did meanwhile")


if __name__ == "__main__":
    main()
