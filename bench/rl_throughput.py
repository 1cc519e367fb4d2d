"""Simulated audit runs per second of every seed algorithm: run by run against in batches, side by side.

    python bench/rl_throughput.py [--runs N] [--repeats K] [--workers W] [--before REF] [--algorithm A] [--json]

For each seed algorithm (and the example user's agent, examples/jdp_agent.py:CountingAgent, which has no batches and
goes run by run in every way), in its default audit setting (``dpkit audit ALGORITHM``'s, at the first position),
``N`` runs on D and ``N`` on D′ of :func:`dpkit.audits.rl.rl_release` — the unit an audit runs — three ways:

* ``per run`` — in this process, one run at a time through the algorithm's ``observe`` (the path of every run
  before the algorithms simulated batches: each run builds its agent and plays its episodes alone);
* ``batched`` — in this process, the runs handed to the algorithm's ``observe_batch`` in chunks
  (:data:`dpkit.audits.rl.setting.BATCH_RUNS`): one agent of many runs, a leading run axis through its counters,
  planner, environment and observer;
* ``batched, auto`` — as ``dpkit audit`` runs them by default: the batches on an auto executor, in chunks of the
  audit's 250 runs (a pool of W processes, started before the clock, as an audit starts it once for all its
  positions).

and, for the seed algorithms, a fourth way beside them:

* ``before batches`` — the per-run path of commit ``REF`` (default :data:`BEFORE_REF`, main when issue 42 was
  filed: every run built its agent, σ calibrated again, and played alone), measured by that commit's own bench
  (its ``before`` way) in a subprocess that imports that commit's sources (``git archive``), in turns with the
  other ways. ``--before none`` leaves it out.

The ways give the same rows (checked: equal within 1e-9 — a batch's linear algebra may round differently in the
last bit). Each way is measured ``--repeats`` times in turns and its fastest kept; the table gives runs per second
and the ratio of the batches to the runs one by one, in this process — the acceptance figure of issue 42 (≥ 10×) —
and with the pool; and the machine's load before and after (other work slows every way: run it on a quiet machine
for the note).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
#: main when issue 42 was filed: the per-run path before the algorithms simulated batches.
BEFORE_REF = "15fa575"
ROOT = Path(__file__).resolve().parents[1]

#: Run in the subprocess of :func:`before_batches`: that commit's bench, its ``before`` way (calibrate_sigma's cache
#: cleared before every run, one run at a time, in process), for one algorithm: prints runs per second.
_BEFORE = """
import json, sys
layout, bench, algorithm, runs = sys.argv[1:5]
import dpkit
assert dpkit.__file__.startswith(layout), dpkit.__file__
sys.path.insert(0, bench)
import rl_throughput as old
from dpkit.accountant.calibration import clear_calibration_cache
old.runs_per_second(algorithm, 2, None)
print(json.dumps(old.runs_per_second(algorithm, int(runs), None, forget=clear_calibration_cache)[0]))
"""


@contextmanager
def before_tree(ref: str) -> Iterator[Path]:
    """Commit ``ref``'s sources laid out as the installed package (``dpkit/`` with its four layers inside), in a
    temporary folder: yields the folder to put on PYTHONPATH."""
    with tempfile.TemporaryDirectory(prefix="dpkit-before-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
        src = Path(tmp) / "src"
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(src, filter="data")
        layout = Path(tmp) / "layout"
        shutil.copytree(src / "dpkit", layout / "dpkit")
        for layer in ("accountant", "algorithms", "audits", "reports"):
            shutil.copytree(src / layer, layout / "dpkit" / layer)
        yield layout


def before_batches(layout: Path, algorithm: str, runs: int) -> float:
    """Runs per second of the per-run path of the commit laid out in ``layout`` (:func:`before_tree`), measured in a
    subprocess that imports it (this venv's libraries)."""
    bench = layout.parent / "src" / "bench"
    out = subprocess.run(
        [sys.executable, "-c", _BEFORE, str(layout), str(bench), algorithm, str(runs)],
        env={**os.environ, "PYTHONPATH": str(layout)},
        cwd=layout.parent,
        check=True,
        capture_output=True,
        text=True,
    )
    return float(json.loads(out.stdout.splitlines()[-1]))


def one_by_one(dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """:func:`rl_release` with every run alone through the algorithm's ``observe`` (the same rows: run i draws from
    child i of ``rng``, as in the batches)."""
    from threadpoolctl import threadpool_limits

    from dpkit.audits.rl.setting import _release

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


def measure(
    algorithm: str, runs: int, pool: Executor, workers: int, repeats: int, before: Path | None = None
) -> dict[str, Any]:
    """One algorithm's three ways, after a warm-up (its world, declaration and claim σ, computed once per audit in
    every way), each ``repeats`` times in turns (the fastest kept: the machine's other work only slows a way); and
    the per-run path before batches where ``before`` holds that commit's sources (:func:`before_tree`)."""
    runs_per_second(algorithm, 2, None, batched=True)
    ways: dict[str, tuple[Executor | None, bool]] = {
        "per run": (None, False),
        "batched": (None, True),
        "batched, auto": (pool, True),
    }
    rates: dict[str, float] = dict.fromkeys(ways, 0.0)
    if before is not None:
        rates["before batches"] = 0.0
    rows = []
    for _ in range(repeats):
        if before is not None:
            rates["before batches"] = max(rates["before batches"], before_batches(before, algorithm, runs))
        for way, (executor, batched) in ways.items():
            rate, out = runs_per_second(algorithm, runs, executor, batched=batched)
            rates[way] = max(rates[way], rate)
            rows.append(out)
    if not all(np.allclose(rows[0], r, rtol=1e-9, atol=1e-9) for r in rows[1:]):
        raise AssertionError(f"{algorithm}: the ways gave different rows")
    return {"algorithm": algorithm, "runs_per_dataset": runs, "workers": workers, "runs_per_second": rates}


def table(rows: list[dict[str, Any]], before: str | None = None) -> str:
    auto = f"batched, auto ({rows[0]['workers']} workers)"
    header = ["per run", "batched", auto, "batched ÷ per run", "auto ÷ per run"]
    if before is not None:
        header += [f"before batches ({before})", "batched ÷ before", "auto ÷ before"]
    lines = ["| algorithm | " + " | ".join(header) + " |", "|---" * (len(header) + 1) + "|"]
    for r in rows:
        rate = r["runs_per_second"]
        cells = [f"{rate[w]:.0f}/s" for w in ("per run", "batched", "batched, auto")]
        cells += [f"{rate['batched'] / rate['per run']:.1f}×", f"{rate['batched, auto'] / rate['per run']:.1f}×"]
        if before is not None:
            old = rate.get("before batches")
            cells += (
                ["—"] * 3
                if old is None
                else [f"{old:.0f}/s", f"{rate['batched'] / old:.1f}×", f"{rate['batched, auto'] / old:.1f}×"]
            )
        lines.append(f"| {r['algorithm']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=500, help="runs per dataset of each way (default 500: two chunks)")
    parser.add_argument("--repeats", type=int, default=2, help="measurements of each way, in turns (the fastest kept)")
    parser.add_argument("--workers", type=int, default=None, help="the auto executor's pool (default: every core)")
    parser.add_argument("--algorithm", action="append", help="only these algorithms (default: every seed algorithm)")
    parser.add_argument(
        "--before", default=BEFORE_REF, help=f"the per-run path before batches: a commit (default {BEFORE_REF}) or none"
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    ref = None if args.before == "none" else args.before
    before = os.getloadavg()[0]
    algorithms = tuple(args.algorithm or SEED_ALGORITHMS)
    if not args.algorithm:
        algorithms += (register_agent(FileFunction("--agent", EXAMPLE_AGENT), name="counting-agent"),)
    rows = []
    with AutoExecutor(args.workers, slow_seconds=0.0) as pool, _maybe_before(ref) as layout:
        workers = pool.pool_workers
        # the pool started before the clock (an audit starts it once for all its positions)
        d0, d1 = neighbouring_datasets(default_setting(SEED_ALGORITHMS[0]))
        run_pair(rl_release, d0, d1, 4, 0, executor=pool, chunk_size=1)
        for algorithm in algorithms:
            old = layout if algorithm in SEED_ALGORITHMS else None
            rows.append(measure(algorithm, args.runs, pool, workers, args.repeats, old))
            if not args.json:
                print(table(rows[-1:], ref).splitlines()[-1], flush=True)
    load = "load average over the last minute: " + ", ".join(f"{x:.1f}" for x in (before, os.getloadavg()[0]))
    if args.json:
        print(json.dumps({"rows": rows, "cpus": os.cpu_count(), "load": [before, os.getloadavg()[0]]}))
        return
    print()
    print(table(rows, ref))
    print(f"\n{os.cpu_count()} CPUs; {load} (before, after): the other work the machine did meanwhile")


@contextmanager
def _maybe_before(ref: str | None) -> Iterator[Path | None]:
    """:func:`before_tree` of ``ref``, or None without one."""
    if ref is None:
        yield None
        return
    with before_tree(ref) as layout:
        yield layout


if __name__ == "__main__":
    main()
