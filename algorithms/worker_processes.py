"""Worker processes that leave Ctrl-C to their parent: a multiprocessing context (:func:`quiet_context`) whose
processes start with SIGINT ignored (so that a Ctrl-C while they import prints no traceback of theirs) and, once
running, die of it silently (the default action), while the parent — the command — says ``error: interrupted``.

A Ctrl-C reaches every process of the terminal's foreground group: without this, each worker of a pool printed its
own ``KeyboardInterrupt`` traceback, and the pool's manager thread its own.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
import signal
import threading
from typing import Any

__all__ = ["quiet_context"]


def _ignoring_sigint(start: Any) -> None:
    """Call ``start()`` (which spawns a process) with SIGINT ignored, as the child inherits it, then restore the
    parent's handler. Off the main thread (where no handler can be set) the process starts as it would."""
    if threading.current_thread() is not threading.main_thread():
        start()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        start()
    finally:
        signal.signal(signal.SIGINT, previous)


class _QuietSpawnProcess(multiprocessing.context.SpawnProcess):
    """A spawned process that ignores SIGINT while it starts and dies of it silently once it runs."""

    def start(self) -> None:
        """Start the process, SIGINT ignored while it is spawned (it inherits the disposition)."""
        _ignoring_sigint(super().start)

    def run(self) -> None:
        """Run the process's target, SIGINT at its default action (a silent exit)."""
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        super().run()


class _QuietForkProcess(multiprocessing.context.ForkProcess):
    """A forked process that ignores SIGINT while it forks and dies of it silently once it runs."""

    def start(self) -> None:
        """Start the process, SIGINT ignored while it is forked."""
        _ignoring_sigint(super().start)

    def run(self) -> None:
        """Run the process's target, SIGINT at its default action (a silent exit)."""
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        super().run()


class _QuietSpawnContext(multiprocessing.context.SpawnContext):
    Process = _QuietSpawnProcess


class _QuietForkContext(multiprocessing.context.ForkContext):
    Process = _QuietForkProcess


def quiet_context(start_method: str | None = None) -> multiprocessing.context.BaseContext:
    """The multiprocessing context of ``start_method`` whose processes leave Ctrl-C to their parent.

    Args:
        start_method: ``spawn``, ``fork`` or ``forkserver`` (the last as multiprocessing has it: its server
            ignores SIGINT itself), or None for the platform's default.

    Returns:
        The context, to pass as a process pool's ``mp_context``.
    """
    context = multiprocessing.get_context(start_method)
    name = context.get_start_method()
    if name == "spawn":
        return _QuietSpawnContext()
    if name == "fork":
        return _QuietForkContext()
    return context
