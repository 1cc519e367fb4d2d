"""The report's regret runs: the tasks it hands its executor (the seeds of one experiment simulated together; one
RLSVI run read for its own privacy), what each returns, and the regret section made of their curves."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.algorithm_ledgers import Allocation
from dpkit.accountant.validation import enum_values
from dpkit.algorithms.regret_stats import baseline_ratio, mean_band, ratio_interval, slope_interval
from dpkit.algorithms.regret_stats import verdict as regret_verdict
from dpkit.algorithms.simulation import Experiment, baseline_regrets, regret_slope, simulate_seeds

from .config import AlgorithmConfig, ReportConfig

__all__ = [
    "BAND_LEVEL",
    "EQUAL_WITHIN",
    "NO_CONTROL_GAIN",
    "SIGMAS",
    "equal_rows_note",
    "RegretTask",
    "RlsviTask",
    "regret_checkpoints",
    "regret_section",
    "regret_summary",
    "run_regret_task",
    "run_rlsvi_task",
    "run_task",
    "task_steps",
]

#: The σ a private algorithm is run at: the paper's, the tight one, and the optimal allocation where its
#: ledger has one (:func:`dpkit.reports.job.regret_sigmas`).
SIGMAS: tuple[str, ...] = enum_values(Allocation)
#: The level of the regret band over seeds and of the slope's bootstrap interval.
BAND_LEVEL = 0.95
#: Rows of a regret table whose final mean regrets differ by at most this fraction are equal (:func:`equal_rows_note`).
EQUAL_WITHIN = 0.01
#: An LQ agent whose mean |gain| stays below this at every σ plays, to the eye, no control.
NO_CONTROL_GAIN = 0.01
_CHECKPOINTS = 100  # log-spaced and as many evenly spaced episodes kept of each regret curve


@dataclass(frozen=True)
class RegretTask:
    """Seeds of one regret experiment, simulated together (one batch of runs).

    Attributes:
        algorithm: the algorithm's registered name.
        sigma: the σ it is run at (one of :data:`SIGMAS`).
        experiment: the experiment every seed runs.
        seeds: the seeds, in the order their results come back.
    """

    algorithm: str
    sigma: str
    experiment: Experiment
    seeds: tuple[int, ...]


@dataclass(frozen=True)
class RlsviTask:
    """One RLSVI run of K episodes whose exact privacy is read from its own visit counts.

    Attributes:
        env: the tabular environment's name.
        states: its states S.
        actions: its actions A.
        horizon: its horizon H.
        episodes: K, the run's episodes (one user each).
        seed: the run's seed.
        delta: the δ its exact ε is read at.
    """

    env: str
    states: int
    actions: int
    horizon: int
    episodes: int
    seed: int
    delta: float


def run_regret_task(
    task: RegretTask, progress: Callable[[int], None] | None = None
) -> list[tuple[np.ndarray, dict[str, float], float | None]]:
    """Simulate every seed of a regret task together (:func:`~dpkit.algorithms.simulation.simulate_seeds`).

    Args:
        task: the experiment and its seeds.
        progress: called with the episodes played (of all the seeds together) as they finish, or None.

    Returns:
        For each seed, in order: the cumulative regret of its run, shape (K,), the σ of each release it used, and
        for an LQ run the mean |gain| (entries of K_h) over the last half of its episodes (None for a tabular run).
    """
    out: list[tuple[np.ndarray, dict[str, float], float | None]] = []
    for run in simulate_seeds(task.experiment, task.seeds, progress=progress):
        gains = None if run.gains is None else float(np.abs(run.gains[run.episodes // 2 :]).mean())
        out.append((run.cumulative_regret, dict(run.sigmas), gains))
    return out


def run_rlsvi_task(task: RlsviTask) -> dict[str, Any]:
    """μ and exact ε(δ) of the worst user of one RLSVI run, as ``dpkit rlsvi --run --json`` gives them.

    Ex-post figures, from the run's own visit counts, not a DP guarantee (the section's worst case over datasets is).

    Args:
        task: the run.

    Returns:
        ``episodes``, ``mu``, ``epsilon`` (at the task's δ) and ``worst_user``.
    """
    from dpkit.algorithms.rlsvi import rlsvi_run

    _, privacy = rlsvi_run(
        task.env, task.states, task.actions, task.episodes, task.seed, horizon=task.horizon, delta=task.delta
    )
    return {
        "episodes": task.episodes,
        "mu": privacy.mu,
        "epsilon": privacy.exact_epsilon(task.delta),
        "worst_user": privacy.worst_user,
    }


def run_task(task: RegretTask | RlsviTask, progress: Callable[[int], None] | None = None) -> Any:
    """Run a task of either kind (what the report's executor maps).

    Args:
        task: a regret task or an RLSVI run.
        progress: called with the episodes a regret task has played as they finish (an RLSVI run reports none).

    Returns:
        :func:`run_regret_task`'s or :func:`run_rlsvi_task`'s result.
    """
    return run_regret_task(task, progress) if isinstance(task, RegretTask) else run_rlsvi_task(task)


def task_steps(task: RegretTask | RlsviTask) -> int:
    """The simulations a task stands for, as the report's progress counts them.

    Args:
        task: a regret task or an RLSVI run.

    Returns:
        Its seeds (a regret task), or 1 (an RLSVI run).
    """
    return len(task.seeds) if isinstance(task, RegretTask) else 1


def regret_checkpoints(episodes: int) -> np.ndarray:
    """The episodes (1-based) of a regret curve that the report keeps: log-spaced and evenly spaced, with K.

    Args:
        episodes: K, the curve's length.

    Returns:
        The sorted distinct episodes kept.
    """
    k = np.concatenate([np.geomspace(1, episodes, _CHECKPOINTS), np.linspace(1, episodes, _CHECKPOINTS)])
    return np.unique(np.clip(np.round(k).astype(int), 1, episodes))


def regret_summary(
    curves: np.ndarray,
    sigmas: Mapping[str, float],
    seed: int,
    *,
    baselines: Mapping[str, float] | None = None,
    gains: Sequence[float] | None = None,
) -> dict[str, Any]:
    """Regret over the seeds at one σ: final values, the mean and its band over seeds at the checkpoints, the
    log-log slope of the mean with its bootstrap interval and verdict, and the final mean over each baseline's.

    Args:
        curves: cumulative regret, seeds × K.
        sigmas: the σ of each release the runs used.
        seed: the bootstrap's seed.
        baselines: each baseline's regret per episode (:func:`~dpkit.algorithms.simulation.baseline_regrets`).
        gains: an LQ run's mean |gain| over its last half of episodes, one per seed.

    Returns:
        The summary, as the report's JSON holds it.
    """
    final = curves[:, -1]
    checkpoints = regret_checkpoints(curves.shape[1])
    mean, half = mean_band(curves, level=BAND_LEVEL)
    slope: dict[str, Any] = {"low": None, "high": None, "verdict": None}
    if curves.shape[1] >= 2:
        interval = slope_interval(curves, seed, level=BAND_LEVEL)
        slope = {"low": interval.low, "high": interval.high, "verdict": regret_verdict(interval)}
    return {
        "sigmas": dict(sigmas),
        "final_regret": final.tolist(),
        "final_regret_mean": float(final.mean()),
        "final_regret_std": float(final.std(ddof=1)) if final.size > 1 else 0.0,
        "final_regret_band": None if not np.isfinite(half[-1]) else float(half[-1]),
        "loglog_slope": regret_slope(curves.mean(axis=0)),
        "loglog_slope_low": slope["low"],
        "loglog_slope_high": slope["high"],
        "growth": slope["verdict"],
        "mean": mean[checkpoints - 1].tolist(),
        "band": half[checkpoints - 1].tolist(),
        "cumulative_regret": curves[:, checkpoints - 1].tolist(),
        "over_baselines": {
            name: _ratio(baseline_ratio(final, per_episode * curves.shape[1], level=BAND_LEVEL))
            for name, per_episode in (baselines or {}).items()
            if per_episode > 0
        },
        "gain_last_half": None if not gains else float(np.mean(gains)),
    }


def _ratio(r: Any) -> dict[str, float]:
    return {"ratio": r.ratio, "low": r.low, "high": r.high}


def equal_rows_note(regret: Mapping[str, Any], *, tolerance: float = EQUAL_WITHIN) -> str | None:
    """The sentence a regret table needs when two of its rows are equal, saying why; None when none are.

    Rows are equal when their final mean regrets differ by at most ``tolerance`` of the larger. Rows at the same σ
    ran the same noise (one release: the optimal allocation is the tight σ). An LQ agent whose gains stay near 0
    at every σ plays no control whatever its noise. Otherwise σ does not move the regret at these sizes: the bonus
    dominates the noise (every optimistic value at its cap) or the noise swamps the data at every σ.

    Args:
        regret: the algorithm's regret section (:func:`regret_section`).
        tolerance: the relative difference under which two rows count as equal.

    Returns:
        The sentence, or None.
    """
    rows = [(sigma, regret[sigma]) for sigma in SIGMAS if regret.get(sigma)]
    same_sigma: list[str] = []
    same_regret: list[str] = []
    for i, (a, ga) in enumerate(rows):
        for b, gb in rows[i + 1 :]:
            ma, mb = ga["final_regret_mean"], gb["final_regret_mean"]
            if abs(ma - mb) > tolerance * max(abs(ma), abs(mb)):
                continue
            (same_sigma if ga["sigmas"] == gb["sigmas"] else same_regret).append(f"{a} and {b}")
    parts = []
    if same_sigma:
        parts.append(
            f"The rows {', '.join(same_sigma)} are equal because their σ are: with one release the optimal "
            "allocation is the tight σ, so they ran the same noise."
        )
    if same_regret:
        rows_text = f"The rows {', '.join(same_regret)} are equal (within {tolerance:.0%}) although their σ differ"
        gains = [g["gain_last_half"] for _, g in rows if g.get("gain_last_half") is not None]
        if gains and max(gains) < NO_CONTROL_GAIN:
            parts.append(
                f"{rows_text}: the gains stay at 0 (mean |gain| over the last half ≤ {max(gains):.2g} at every σ), "
                "so the agent plays no control whatever its noise — the optimistic system in its wide confidence set "
                "is one with A ≈ 0 — and its regret is the no-control policy's."
            )
        else:
            parts.append(
                f"{rows_text}: at these sizes σ does not move the regret — either the bonus dominates the noise "
                "(every optimistic value at its cap whatever σ) or the noise swamps the data at every σ; the ratio "
                "to the uniform policy's regret tells which."
            )
    return " ".join(parts) or None


def regret_section(
    a: AlgorithmConfig,
    config: ReportConfig,
    tasks: Sequence[RegretTask | RlsviTask],
    results: Mapping[RegretTask | RlsviTask, Any],
) -> dict[str, Any]:
    """Regret of one algorithm over the seeds at each σ, from the finished tasks.

    Args:
        a: the algorithm's config.
        config: the report's config (its seeds).
        tasks: every task of the report.
        results: each finished task's result.

    Returns:
        The algorithm's regret section.
    """
    baselines = baseline_regrets(a.experiment("paper", config.seed))
    regret: dict[str, Any] = {
        "seeds": [config.seed + i for i in range(config.seeds)],
        "env_seed": config.seed,
        "episodes": a.episodes,
        "env": a.env,
        "options": dict(a.options),
        "note": a.regret_note,
        "checkpoints": regret_checkpoints(a.episodes).tolist(),
        "level": BAND_LEVEL,
        "baselines": {name: per_episode * a.episodes for name, per_episode in baselines.items()},
        "optimal": None,
    }
    for sigma in SIGMAS:
        mine = [t for t in tasks if isinstance(t, RegretTask) and t.algorithm == a.name and t.sigma == sigma]
        if mine:
            seeds = [seed for t in mine for seed in results[t]]
            curves = np.stack([curve for curve, _, _ in seeds])
            gains = [g for _, _, g in seeds if g is not None]
            regret[sigma] = regret_summary(curves, seeds[0][1], config.seed, baselines=baselines, gains=gains)
    paper = regret["paper"]["final_regret"]
    regret["tight_over_paper"] = None
    regret["over_paper"] = {}
    if np.mean(paper) > 0:
        for sigma in SIGMAS[1:]:
            if regret.get(sigma):
                ratio = ratio_interval(regret[sigma]["final_regret"], paper, config.seed, level=BAND_LEVEL)
                regret["over_paper"][sigma] = _ratio(ratio)
        regret["tight_over_paper"] = regret["over_paper"]["tight"]["ratio"]
    regret["equal_rows"] = equal_rows_note(regret)
    return regret
