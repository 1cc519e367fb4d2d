"""The simulations' progress by episodes, from wherever they run: a report's regret and RLSVI tasks report the
episodes they have played (of all their seeds together), so its simulations' bar moves as they play instead of
jumping when a whole batch of seeds ends.

In a process pool the workers send their episodes through a queue (:func:`start_worker_feed`, set up by the pool's
initializer); :class:`EpisodeFeed` reads it in the parent and pays each task the rest of its episodes when it ends,
so every task advances the stage by exactly :func:`task_episodes` in all, whatever arrives late.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from .regret_runs import RegretTask, RlsviTask, run_task

__all__ = ["EpisodeFeed", "run_reported", "start_worker_feed", "task_episodes"]

Progress = Callable[[float], None]

#: How often a worker sends the episodes it has played (seconds): a few messages a second, not one per episode.
_SEND_EVERY = 0.25
_queue: Any = None  # in a pool's worker: the queue to the parent (start_worker_feed)


def task_episodes(task: RegretTask | RlsviTask) -> int:
    """The episodes a task plays: its steps in the report's simulations stage.

    Args:
        task: A regret task (every seed of one experiment) or an RLSVI run.

    Returns:
        K × its seeds (a regret task), or K (an RLSVI run).
    """
    if isinstance(task, RegretTask):
        return task.experiment.episodes * len(task.seeds)
    return task.episodes


def start_worker_feed(queue: Any) -> None:
    """In a pool's worker (from its initializer): send the episodes of the tasks it runs to ``queue``.

    Args:
        queue: A multiprocessing queue the parent's :class:`EpisodeFeed` reads.
    """
    global _queue
    _queue = queue


def run_reported(index: int, task: RegretTask | RlsviTask) -> Any:
    """Run a task (:func:`~dpkit.reports.regret_runs.run_task`) in a pool's worker, sending ``(index, episodes)`` to
    the parent a few times a second as its episodes are played (nothing without :func:`start_worker_feed`).

    Args:
        index: The task's index, as the parent's :class:`EpisodeFeed` knows it.
        task: The task.

    Returns:
        The task's result.
    """
    if _queue is None:
        return run_task(task)
    queue = _queue
    played, sent_at = [0], [time.monotonic()]

    def episodes(k: int) -> None:
        played[0] += k
        if time.monotonic() - sent_at[0] >= _SEND_EVERY:
            queue.put((index, played[0]))
            played[0], sent_at[0] = 0, time.monotonic()

    result = run_task(task, progress=episodes)
    if played[0]:
        queue.put((index, played[0]))
    return result


class EpisodeFeed:
    """The parent's end of the workers' queue: advances ``progress`` by the episodes each task reports, and by the
    rest of a task's :func:`task_episodes` when it ends (:meth:`finish`); reports of a finished task are dropped, so
    the stage advances by exactly its total.

    Use it as a context manager around the pool: it reads the queue in a thread until it leaves.
    """

    def __init__(self, tasks: list[RegretTask | RlsviTask], queue: Any, progress: Progress) -> None:
        self._totals = [task_episodes(t) for t in tasks]
        self._paid = [0] * len(tasks)
        self._done = [False] * len(tasks)
        self._queue = queue
        self._progress = progress
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, name="episode-feed", daemon=True)

    def __enter__(self) -> EpisodeFeed:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)

    def _read(self) -> None:
        while (message := self._queue.get()) is not None:
            index, k = message
            self._pay(index, k)

    def _pay(self, index: int, k: int) -> None:
        with self._lock:
            if self._done[index]:
                return
            k = min(k, self._totals[index] - self._paid[index])
            self._paid[index] += k
        if k > 0:
            self._progress(k)

    def finish(self, index: int) -> None:
        """Task ``index`` has ended: advance by the rest of its episodes; later reports of it are dropped.

        Args:
            index: The task's index.
        """
        with self._lock:
            rest = self._totals[index] - self._paid[index]
            self._paid[index], self._done[index] = self._totals[index], True
        if rest > 0:
            self._progress(rest)
