"""``dpkit simulate``: run an experiment over seeds and write its regret table, figure and summary.

The seeds run together in this process (one batch of runs, progress per episode), with ``workers`` > 1 in chunks
of seeds on a process pool (progress per chunk), or with ``workers=None`` on an auto executor: in this process
while the seeds are quick, then on a pool of every core (:class:`~dpkit.algorithms.executors.AutoExecutor`);
either way seed i gives the same run (up to the rounding of batched linear algebra).
"""

from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.algorithms.episodes import Run
from dpkit.algorithms.executors import make_executor
from dpkit.algorithms.simulation import Experiment, regret_slope, simulate_seeds
from dpkit.reports.figures import regret_figure

__all__ = ["SimulationResult", "SeedChunk", "run_seed_chunk", "run_experiment", "write_outputs", "regret_csv"]


@dataclass(frozen=True)
class SimulationResult:
    """The runs of one experiment (in seed order) and the wall time they took."""

    experiment: Experiment
    seeds: tuple[int, ...]
    runs: tuple[Run, ...]
    wall_time: float

    @property
    def cumulative(self) -> np.ndarray:
        """Cumulative regret, shape (seeds, K)."""
        return np.stack([r.cumulative_regret for r in self.runs])

    def summary(self) -> dict[str, Any]:
        """The headline numbers of the runs, as ``dpkit simulate`` writes them in its summary.

        Returns:
            A JSON-ready dict: the experiment, the seeds, the σ of each noise, the mean and standard deviation of
            the final cumulative regret, the log-log slope of the mean cumulative regret and the wall time.
        """
        final = self.cumulative[:, -1]
        return {
            "experiment": self.experiment.to_dict(),
            "seeds": list(self.seeds),
            "sigmas": dict(self.runs[0].sigmas),
            "final_regret_mean": float(final.mean()),
            "final_regret_std": float(final.std(ddof=1)) if final.shape[0] > 1 else 0.0,
            "loglog_slope": regret_slope(self.cumulative.mean(axis=0)),
            "wall_time_seconds": self.wall_time,
        }


@dataclass(frozen=True)
class SeedChunk:
    """Some seeds of one experiment, simulated together (:func:`~dpkit.algorithms.simulation.simulate_seeds`)."""

    experiment: Experiment
    seeds: tuple[int, ...]

    @property
    def size(self) -> int:
        """The runs the chunk stands for (an auto executor's measure of its work)."""
        return len(self.seeds)


def run_seed_chunk(chunk: SeedChunk) -> list[Run]:
    """The runs of a chunk's seeds, in one batch (the task an executor maps over chunks).

    Args:
        chunk: The experiment and its seeds.

    Returns:
        One run per seed, in the chunk's order.
    """
    return simulate_seeds(chunk.experiment, chunk.seeds)


def seed_chunks(seeds: tuple[int, ...], chunks: int) -> list[tuple[int, ...]]:
    """``seeds`` split in order into at most ``chunks`` runs of consecutive seeds, the larger first.

    Args:
        seeds: The seeds to split.
        chunks: The most chunks wanted (at least one is made, and never more than there are seeds).

    Returns:
        The chunks, in order; together they are ``seeds``.

    Examples:
        >>> seed_chunks((0, 1, 2, 3, 4), 2)
        [(0, 1, 2), (3, 4)]
    """
    n = max(1, min(chunks, len(seeds)))
    size, extra = divmod(len(seeds), n)
    out, start = [], 0
    for i in range(n):
        stop = start + size + (1 if i < extra else 0)
        out.append(seeds[start:stop])
        start = stop
    return out


def run_experiment(
    experiment: Experiment, seeds: int, *, workers: int | None = 1, progress: Any = None
) -> SimulationResult:
    """Run seeds 0..``seeds``−1 of ``experiment``.

    Args:
        experiment: The experiment to run.
        seeds: How many seeds (at least 1).
        workers: 1 (this process: every seed in one batch, :func:`~dpkit.algorithms.simulation.simulate_seeds`),
            more (a process pool of that many, each simulating a chunk of the seeds in one batch) or None (auto:
            this process while the seeds are quick, then a pool of every core; one seed stays here).
        progress: None, or ``progress(k)``, called as the runs advance by k episodes.

    Returns:
        The runs, in seed order, with the wall time they took.

    Raises:
        ValueError: ``seeds`` or ``workers`` is not an integer >= 1 (``workers`` may be None).
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be an integer >= 1, got {seeds!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an integer >= 1 or None (auto), got {workers!r}")
    start = time.perf_counter()
    seed_list = tuple(range(seeds))
    if workers == 1 or (workers is None and seeds == 1):
        runs = simulate_seeds(experiment, seed_list, progress=progress)
    else:
        k = experiment.episodes
        name, size = ("auto", None) if workers is None else ("processes", workers)
        with make_executor(name, workers=size) as ex:
            # auto: the first chunk is timed here before the rest may move to a pool of every core
            count = size if size is not None else 2 * getattr(ex, "pool_workers", ex.workers)
            tasks = [SeedChunk(experiment, c) for c in seed_chunks(seed_list, count)]
            done = (lambda i, r: progress(k * len(r))) if progress else None
            runs = [run for chunk in ex.map(run_seed_chunk, tasks, on_done=done) for run in chunk]
    return SimulationResult(experiment, seed_list, tuple(runs), time.perf_counter() - start)


def regret_csv(result: SimulationResult) -> str:
    """Per-episode regret of every seed, long format: seed, episode, regret, cumulative_regret.

    Args:
        result: The runs to tabulate.

    Returns:
        The CSV text, a header line and one line per seed and episode.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["seed", "episode", "regret", "cumulative_regret"])
    for seed, run in zip(result.seeds, result.runs):
        cum = run.cumulative_regret
        for k in range(run.episodes):
            w.writerow([seed, k + 1, repr(float(run.regret[k])), repr(float(cum[k]))])
    return buf.getvalue()


def write_outputs(result: SimulationResult, out: Path) -> dict[str, str]:
    """Write ``ALGORITHM-regret.csv`` and ``ALGORITHM-regret.png`` into ``out`` (created if missing).

    Args:
        result: The runs to write.
        out: The directory to write into.

    Returns:
        The paths written, under the keys ``csv`` and ``png``.
    """
    out.mkdir(parents=True, exist_ok=True)
    e = result.experiment
    stem = e.algorithm
    csv_path = out / f"{stem}-regret.csv"
    png_path = out / f"{stem}-regret.png"
    label = e.algorithm if not e.private else f"{e.algorithm} (σ {e.sigma}, ε = {e.epsilon})"
    csv_text = regret_csv(result)
    regret_figure({label: result.cumulative}, png_path, title=f"{e.algorithm} on {e.env}, {len(result.seeds)} seeds")
    csv_path.write_text(csv_text)
    return {"csv": str(csv_path), "png": str(png_path)}
