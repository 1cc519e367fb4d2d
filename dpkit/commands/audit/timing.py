"""What ``dpkit audit ALGORITHM`` says beside its result: how long it will take, timed on a first small batch of
runs before the audit starts, and the target it audited at when the user set none (:func:`target_note`).

An RL audit runs the algorithm ``2 × --runs`` times; at a few milliseconds a run, the largest ``--runs`` takes hours.
:func:`expected_time` runs a first batch in this process, prints the expected total on stderr, and refuses
(one ``error:`` line naming the estimate and how to raise the cap) when it is above ``--max-time``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dpkit.render import stderr_console

if TYPE_CHECKING:
    from dpkit.audits.rl.setting import RlSetting

#: ``--max-time``'s default: an audit expected to take longer is refused until the user raises the cap.
DEFAULT_MAX_TIME = "10m"
#: The first batch grows (×4 from 2 runs per dataset) until it takes this long or reaches 1/8 of the runs.
_BATCH_SECONDS = 0.25


def format_duration(seconds: float) -> str:
    """A duration in words at the scale that fits it: ``40 s``, ``12 min``, ``1.8 h``, ``3.1 days``.

    Args:
        seconds: The duration in seconds (``inf``: ``no limit``).

    Returns:
        The duration, rounded to its unit.

    Examples:
        >>> format_duration(40.0), format_duration(720.0), format_duration(float("inf"))
        ('40 s', '12 min', 'no limit')
    """
    if math.isinf(seconds):
        return "no limit"
    if seconds < 90:
        return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def time_first_batch(setting: RlSetting, runs: int, seed: int) -> tuple[int, float]:
    """Run a first batch of the audit of ``setting`` here and time it.

    The batch is ``n`` runs on D and ``n`` on D′, n growing ×4 from 2 until the batch takes :data:`_BATCH_SECONDS`
    or n reaches ``runs``/8. Its outputs are discarded: the audit itself reruns every run from ``seed``, so its
    result does not change.

    Args:
        setting: The audit's :class:`~dpkit.audits.rl.setting.RlSetting`.
        runs: The audit's runs per dataset.
        seed: The audit's seed.

    Returns:
        ``(n, seconds)`` of the last batch.

    Raises:
        ValueError: The batch cannot run (a σ of 0, an observer that needs another attack, …).
    """
    from dpkit.algorithms.executors import run_pair
    from dpkit.audits.rl import neighbouring_datasets, rl_release

    d0, d1 = neighbouring_datasets(setting)
    n = 2
    while True:
        started = time.perf_counter()
        run_pair(rl_release, d0, d1, n, seed)
        seconds = time.perf_counter() - started
        if seconds >= _BATCH_SECONDS or 4 * n > max(2, runs // 8):
            return n, seconds
        n *= 4


def expected_time(
    setting: RlSetting,
    *,
    runs: int,
    seed: int,
    workers: int,
    max_time: float,
    positions: int = 1,
    probe: int = 0,
    alone_below: float = 0.0,
) -> str | None:
    """The expected time of an audit, from a first batch of its runs (:func:`time_first_batch`).

    Args:
        setting: The audit's :class:`~dpkit.audits.rl.setting.RlSetting`.
        runs: Runs per dataset at each position (the audit runs ``2 × runs`` there).
        seed: The audit's seed.
        workers: The parallel workers the runs go to.
        max_time: The longest expected time accepted, in seconds (``--max-time``).
        positions: The positions of the changed user audited.
        probe: Runs per dataset of the audit's plan probe (pilots included).
        alone_below: Below this many seconds in this process the audit stays on one worker (an auto executor's
            threshold).

    Returns:
        The line to print when the audit starts (``expected time: about …``), or None when the first batch cannot
        run (a σ of 0, an observer that needs another attack, …): the audit's own checks, which come before its
        first run, then name what is wrong.

    Raises:
        ValueError: The expected time is above ``max_time`` (the estimate and how to raise ``--max-time`` named).
    """
    try:
        n, seconds = time_first_batch(setting, runs, seed)
    except ValueError:
        return None
    per_run = seconds / (2 * n)
    alone = per_run * 2 * (runs * positions + probe)
    workers = 1 if alone < alone_below else workers
    expected = alone / workers
    basis = (
        ("" if positions == 1 else f"{positions} positions × ")
        + f"2 × {runs:,} runs"
        + (f" and a plan probe of 2 × {probe:,}" if probe else "")
        + f" at {per_run * 1e3:.3g} ms each"
        + (f" over {workers} workers" if workers > 1 else "")
        + f", timed on a first batch of 2 × {n}"
    )
    if expected > max_time:
        raise ValueError(
            f"the audit would take about {format_duration(expected)} ({basis}), above --max-time "
            f"{format_duration(max_time)}: raise it to run it (e.g. --max-time {_cap_above(expected)}, or inf), "
            "or lower --runs"
        )
    return f"expected time: about {format_duration(expected)} ({basis})"


def planned_workers(executor: Any) -> dict[str, Any]:
    """How an audit's time is estimated on ``executor``: :func:`expected_time`'s ``workers`` and ``alone_below``.

    Args:
        executor: The executor the audit runs on.

    Returns:
        For an auto executor, its pool's workers (which it moves to once the work is slow) and its threshold (below
        it, it stays alone in this process); else the executor's own workers.
    """
    pool = getattr(executor, "pool_workers", None)
    if pool is None:
        return {"workers": executor.workers}
    return {"workers": int(pool), "alone_below": float(executor.slow_seconds)}


def announced(note: str | None, advance: Callable[[float], None]) -> Callable[[float], None]:
    """``advance``, printing ``note`` on stderr first, once, when the audit reports its first runs.

    An audit its own checks refuse so prints their one error line alone.

    Args:
        note: The line to print (:func:`expected_time`'s), or None for none.
        advance: The progress callback to wrap.

    Returns:
        The wrapped callback, ``step(k)``.
    """
    pending = [note]

    def step(k: float) -> None:
        if pending[0] is not None:
            stderr_console().print(pending[0], markup=False, highlight=False, soft_wrap=True)
            pending[0] = None
        advance(k)

    return step


def _cap_above(seconds: float) -> str:
    """A ``--max-time`` comfortably above ``seconds`` (1.5× it, in whole minutes or hours): ``15m``, ``3h``."""
    target = 1.5 * seconds
    if target >= 5400:
        return f"{math.ceil(target / 3600)}h"
    return f"{math.ceil(target / 60)}m"


def target_note(algorithm: str, epsilon: float | None, delta: float | None) -> str | None:
    """The line an RL audit prints after its tables when the user left its target (ε, δ) to dpkit: the values it
    audited at and where they come from (the algorithm's audit defaults: ε = 8, δ = 1e-5 for a user's agent), so
    no figure of the audit rests on a claim the user never made unawares.

    Args:
        algorithm: The registered algorithm (or a user's agent, registered under its name).
        epsilon: The ``--epsilon`` given, or None.
        delta: The ``--delta`` given, or None.

    Returns:
        The line, or None when both were given.
    """
    if epsilon is not None and delta is not None:
        return None
    from dpkit.audits.rl import default_setting

    setting = default_setting(algorithm, epsilon=epsilon, delta=delta)
    target = f"target (ε, δ) = ({setting.epsilon:g}, {setting.delta:g})"
    if epsilon is None and delta is None:
        return f"{target}: the default of {algorithm}'s audit, not a claim you made (--epsilon and --delta set it)"
    name, option = ("ε", "--epsilon") if epsilon is None else ("δ", "--delta")
    return f"{target}: {name} is the default of {algorithm}'s audit ({option} sets it)"
