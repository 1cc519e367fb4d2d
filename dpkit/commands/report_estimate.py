"""What ``dpkit report`` says before it starts: how long its audits will take, timed on a first small batch of each
algorithm's runs (the audits are most of a report's time; the simulations run beside them)."""

from __future__ import annotations

import time
from typing import Any

from .audit_timing import format_duration

#: Runs per dataset of the batch that warms an algorithm's caches (its world, declaration, σ), then of the one timed:
#: enough that a batched simulation spreads its cost per call over them, as the audit's chunks of runs do.
_WARM_RUNS, _TIMED_RUNS = 1, 64


def seconds_per_run(setting: Any) -> float:
    """The seconds one run of an audit of ``setting`` takes here, timed on a small batch after a warm-up.

    The runs are discarded: the audit reruns every run from its own seed, so its result does not change.

    Args:
        setting: The audit's :class:`~dpkit.audits.rl_setting.RlSetting`.

    Returns:
        The mean seconds per run (of the runs on both datasets).

    Raises:
        ValueError: The runs cannot run (a σ of 0, …).
    """
    from dpkit.algorithms.executors import run_pair
    from dpkit.audits.rl import neighbouring_datasets, rl_release

    d0, d1 = neighbouring_datasets(setting)
    run_pair(rl_release, d0, d1, _WARM_RUNS, 0)
    started = time.perf_counter()
    run_pair(rl_release, d0, d1, _TIMED_RUNS, 1)
    return (time.perf_counter() - started) / (2 * _TIMED_RUNS)


def audits_estimate(config: Any) -> str | None:
    """The line ``dpkit report`` prints before it starts: the expected time of its audits.

    Every algorithm's audit runs (:func:`dpkit.reports.job.audit_parts`) at its time per run
    (:func:`seconds_per_run`) over the config's workers, and the simulations beside them.

    Args:
        config: The report's :class:`~dpkit.reports.config.ReportConfig`.

    Returns:
        The line, or None when no audit runs, or when a first batch cannot run (the audit itself then names what is
        wrong).
    """
    from dpkit.reports.job import audit_parts, audit_setting_of, stage_totals

    seconds, runs, slowest = 0.0, 0, ("", 0.0)
    for a in config.algorithms:
        parts = audit_parts(a)
        if not parts:
            continue
        try:
            per_run = seconds_per_run(audit_setting_of(a))
        except ValueError:
            return None
        n = sum(p.runs for p in parts)
        seconds, runs = seconds + per_run * n, runs + n
        slowest = max(slowest, (a.name, per_run), key=lambda x: x[1])
    if runs == 0:
        return None
    workers = config.workers
    over = f" over {workers} workers" if workers > 1 else ""
    simulations = stage_totals(config)["simulations"]
    return (
        f"expected time: audits about {format_duration(seconds / workers)} ({runs:,} runs at "
        f"{seconds / runs * 1e3:.3g} ms each on average{over}; slowest {slowest[0]} at {slowest[1] * 1e3:.3g} ms, "
        f"timed on a first batch), the {simulations:,} simulations beside them"
    )
