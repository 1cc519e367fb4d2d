"""Progress of named stages that may run side by side (``dpkit report``'s ledgers, simulations, audits and
figures): :class:`StageClock` counts them and says when each finished, :func:`stage_progress` shows them on stderr."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping

from dpkit.render import stderr_console

__all__ = ["StageClock", "stage_progress"]


class StageClock:
    """The progress of named stages that may run side by side: ``advance(stage, k)`` moves a stage on by ``k`` of its
    ``totals[stage]`` steps. :attr:`finished` holds the time at which each stage finished, in seconds since ``start``
    (a :func:`time.perf_counter` reading; default: now) — the stages overlap, so these are not durations to add up.
    ``on_advance(stage, k)``, ``on_finish(stage, at)`` and ``on_status(stage, text, at)`` (:meth:`status`: what a
    stage does now) are called as they happen."""

    def __init__(
        self,
        totals: Mapping[str, float],
        *,
        start: float | None = None,
        on_advance: Callable[[str, float], None] | None = None,
        on_finish: Callable[[str, float], None] | None = None,
        on_status: Callable[[str, str, float], None] | None = None,
    ) -> None:
        self.totals = dict(totals)
        self.done = dict.fromkeys(self.totals, 0.0)
        self.start = time.perf_counter() if start is None else start
        self.finished: dict[str, float] = {}
        self._on_advance = on_advance
        self._on_finish = on_finish
        self._on_status = on_status

    def advance(self, stage: str, k: float) -> None:
        """Move ``stage`` on by ``k`` steps, noting when it finishes (its total reached).

        Args:
            stage: The stage's name, one of ``totals``.
            k: The steps done.

        Raises:
            ValueError: ``stage`` is not one of the stages.
        """
        if stage not in self.totals:
            raise ValueError(f"unknown stage {stage!r} (stages: {', '.join(self.totals)})")
        self.done[stage] += k
        if self._on_advance is not None:
            self._on_advance(stage, k)
        if stage not in self.finished and self.done[stage] >= self.totals[stage] - 1e-9:
            self.finished[stage] = time.perf_counter() - self.start
            if self._on_finish is not None:
                self._on_finish(stage, self.finished[stage])

    def status(self, stage: str, text: str) -> None:
        """Say what ``stage`` does now (e.g. the algorithm and position an audit has reached).

        Args:
            stage: The stage's name, one of ``totals``.
            text: What it does, in words.

        Raises:
            ValueError: ``stage`` is not one of the stages.
        """
        if stage not in self.totals:
            raise ValueError(f"unknown stage {stage!r} (stages: {', '.join(self.totals)})")
        if self._on_status is not None:
            self._on_status(stage, text, time.perf_counter() - self.start)

    def summary(self) -> str:
        """When each finished stage finished, in the order given.

        Returns:
            ``ledgers 0.4 s, simulations 41.2 s, …`` (empty while no stage has finished).

        Examples:
            >>> clock = StageClock({"ledgers": 2, "audits": 5})
            >>> clock.advance("ledgers", 2)
            >>> clock.advance("audits", 1)
            >>> clock.summary()
            'ledgers ... s'
        """
        return ", ".join(f"{stage} {self.finished[stage]:.1f} s" for stage in self.totals if stage in self.finished)


@contextlib.contextmanager
def stage_progress(totals: Mapping[str, float], *, start: float | None = None) -> Iterator[StageClock]:
    """Show the progress of named stages on stderr: one bar per stage on a terminal, lines elsewhere.

    On a terminal, the bars of stages that run side by side move together, each with the time left at its pace so
    far and what it does now; a stage of no steps has no bar. Elsewhere (the logs of CI runs), one line
    ``STAGE done at T s`` as each stage finishes and ``STAGE at T s: TEXT`` as it says what it does.

    Args:
        totals: The steps of each stage, by name.
        start: The time T is counted from (a :func:`time.perf_counter` reading; default: now).

    Yields:
        The :class:`StageClock`, whose ``advance(stage, k)`` moves a stage on and ``status(stage, text)`` names its
        work.
    """
    console = stderr_console()
    if not console.is_terminal:

        def line(stage: str, at: float) -> None:
            console.print(f"{stage} done at {at:.1f} s", markup=False, highlight=False)

        def said(stage: str, text: str, at: float) -> None:
            console.print(f"{stage} at {at:.1f} s: {text}", markup=False, highlight=False)

        yield StageClock(totals, start=start, on_finish=line, on_status=said)
        return
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description:<12}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[doing]}"),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        tasks = {stage: progress.add_task(stage, total=total, doing="") for stage, total in totals.items() if total > 0}

        def doing(stage: str, text: str, at: float) -> None:
            if stage in tasks:
                progress.update(tasks[stage], doing=text)

        def moved(stage: str, k: float) -> None:
            if stage in tasks:
                progress.advance(tasks[stage], k)

        def stopped(stage: str, at: float) -> None:
            if stage in tasks:
                progress.update(tasks[stage], doing="")
                progress.stop_task(tasks[stage])

        try:
            yield StageClock(totals, start=start, on_advance=moved, on_finish=stopped, on_status=doing)
        except BaseException:  # interrupted or failed: the bars go, the one error line says what happened
            progress.live.transient = True
            raise
