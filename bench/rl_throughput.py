"""Simulated audit runs per second of every seed algorithm: the per-run path against the audit's path now.

    python bench/rl_throughput.py [--runs N] [--workers W] [--json]

For each seed algorithm (and the example user's agent, examples/jdp_agent.py:CountingAgent), in its default audit
setting (``dpkit audit ALGORITHM``'s, at the first position), ``N`` runs on D and ``N`` on D′ of
:func:`dpkit.audits.rl.rl_release` — the unit an audit runs — four ways, side by side in one run:

* ``all per run`` — in this process, with every σ and declaration forgotten before each run
  (:func:`dpkit.algorithms.episodes.clear_sigma_caches`): each run's agent declares its releases, has the ledger
  allocate σ and calibrates again — the run-independent work all redone in every run;
* ``before`` — in this process, :func:`~dpkit.accountant.calibrate_sigma` computing again in every run (its cache
  cleared before each: the path before issue 42; the declarations and the ledgers' allocations were memoised
  already) — what a user's agent calibrating its paper σ in its constructor paid;
* ``once, here`` — in this process, every σ and declaration worked out once per audit;
* ``once, auto`` — as ``dpkit audit`` runs them now by default: on an auto executor, in chunks of the audit's
  250 runs (in this process until the runs are slow, then a pool of W processes; the pool is started before the
  clock, as an audit starts it once for all its positions).

The four give the same rows bit for bit (checked): the σ is never computed differently, only less often. Each way is
measured ``--repeats`` times in turns and its fastest kept; the table gives runs per second and the ratios of the
last way to the first two, and the machine's load before and after (other work slows the pool most: run it on a
quiet machine for the note).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.accountant.calibration import clear_calibration_cache
from dpkit.algorithms.episodes import clear_sigma_caches
from dpkit.algorithms.executors import AutoExecutor, Executor, run_pair
from dpkit.audits.rl import default_setting, neighbouring_datasets, register_agent, rl_release
from dpkit.loading import FileFunction

SEED_ALGORITHMS = ("ldp-ucrl-vtr", "private-linopt-vi", "private-linopt-po", "private-ofu-rl", "rlsvi")
EXAMPLE_AGENT = str(Path(__file__).resolve().parents[1] / "examples" / "jdp_agent.py") + ":CountingAgent"
#: The audit's chunk of runs (dpkit.audits.rl.audit_setting's chunk_size).
CHUNK = 250
_SEED = 7


def calibrating_release(dataset: Any, rng: np.random.Generator, n: int, *, forget: Callable[[], None]) -> np.ndarray:
    """:func:`rl_release` one run at a time, calling ``forget`` (a cache's clear) before each (the same rows: each run
    draws from the next child of ``rng``, as in one call). Its BLAS limit is set once for all of them, as
    :func:`rl_release` sets it once per call (setting it costs about a millisecond)."""
    from threadpoolctl import threadpool_limits

    from dpkit.audits.rl_setting import _release

    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(n):
            forget()
            rows.append(_release(dataset, rng, 1))
    return np.concatenate(rows)


#: The ways before the audit's path now, in this process: what is forgotten before every run.
PER_RUN: dict[str, Callable[[], None]] = {"all per run": clear_sigma_caches, "before": clear_calibration_cache}


def runs_per_second(
    algorithm: str, runs: int, executor: Executor | None, *, forget: Callable[[], None] | None = None
) -> tuple[float, np.ndarray]:
    """Runs per second (D and D′ together) of ``runs`` runs per dataset, and the rows (for the check)."""
    d0, d1 = neighbouring_datasets(default_setting(algorithm))
    release = rl_release if forget is None else functools.partial(calibrating_release, forget=forget)
    started = time.perf_counter()
    out0, out1 = run_pair(release, d0, d1, runs, _SEED, executor=executor, chunk_size=CHUNK)
    seconds = time.perf_counter() - started
    return 2 * runs / seconds, np.concatenate([out0, out1])


def measure(algorithm: str, runs: int, pool: Executor, workers: int, repeats: int) -> dict[str, Any]:
    """One algorithm's four ways, after a warm-up (its world, declaration and claim σ, computed once per audit
    in every way), each ``repeats`` times in turns (the fastest kept: the machine's other work only slows a way)."""
    runs_per_second(algorithm, 2, None)
    ways: dict[str, tuple[Executor | None, Callable[[], None] | None]] = {
        **{way: (None, forget) for way, forget in PER_RUN.items()},
        "once, here": (None, None),
        "once, auto": (pool, None),
    }
    rates: dict[str, float] = dict.fromkeys(ways, 0.0)
    rows = []
    for _ in range(repeats):
        for way, (executor, forget) in ways.items():
            rate, out = runs_per_second(algorithm, runs, executor, forget=forget)
            rates[way] = max(rates[way], rate)
            rows.append(out)
    if not all(np.array_equal(rows[0], r) for r in rows[1:]):
        raise AssertionError(f"{algorithm}: the ways gave different rows")
    return {"algorithm": algorithm, "runs_per_dataset": runs, "workers": workers, "runs_per_second": rates}


def table(rows: list[dict[str, Any]]) -> str:
    ways = list(rows[0]["runs_per_second"])
    header = [*ways[:-1], f"{ways[-1]} ({rows[0]['workers']} workers)", "÷ all per run", "÷ before"]
    lines = ["| algorithm | " + " | ".join(header) + " |", "|---" * (len(header) + 1) + "|"]
    for r in rows:
        rate = r["runs_per_second"]
        cells = [f"{rate[w]:.0f}/s" for w in ways]
        cells += [f"{rate['once, auto'] / rate['all per run']:.1f}×", f"{rate['once, auto'] / rate['before']:.2f}×"]
        lines.append(f"| {r['algorithm']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=500, help="runs per dataset of each way (default 500: two chunks)")
    parser.add_argument("--repeats", type=int, default=2, help="measurements of each way, in turns (the fastest kept)")
    parser.add_argument("--workers", type=int, default=None, help="the auto executor's pool (default: every core)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    before = os.getloadavg()[0]
    agent = register_agent(FileFunction("--agent", EXAMPLE_AGENT), name="counting-agent")
    rows = []
    with AutoExecutor(args.workers, slow_seconds=0.0) as pool:
        workers = pool.pool_workers
        # the pool started before the clock (an audit starts it once for all its positions): from then on every map
        # goes to it, as with the default slow_seconds once an audit's runs have been found slow
        d0, d1 = neighbouring_datasets(default_setting(SEED_ALGORITHMS[0]))
        run_pair(rl_release, d0, d1, 4, 0, executor=pool, chunk_size=1)
        for algorithm in (*SEED_ALGORITHMS, agent):
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
