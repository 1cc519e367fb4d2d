"""Executors for batched runs of a release function: in-process, a process pool or a Dask cluster.

A release function ``release(dataset, rng, n)`` returns ``n`` runs of a mechanism, shape ``(n, ...)``.
:func:`run_batched` (:func:`run_pair`: D and D′) splits the runs into chunks seeded by :func:`spawn_seeds`, so the
output depends only on ``(n, chunk_size, seed)``, never on the executor. The executors (:data:`EXECUTORS`,
:func:`make_executor`) map a function over tasks in task order; each is a context manager. Chunks, seeds and the
executors in full: docs/explanation/observers.md.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import multiprocessing
import numbers
import os
import pickle
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from dpkit.accountant.validation import check_choice, check_count

from .worker_processes import quiet_context

__all__ = [
    "EXECUTORS",
    "AUTO_SLOW_SECONDS",
    "AutoExecutor",
    "DaskExecutor",
    "Executor",
    "InProcessExecutor",
    "ProcessPoolExecutor",
    "describe_executor",
    "make_executor",
    "run_batched",
    "run_pair",
    "spawn_seeds",
]

EXECUTORS: tuple[str, ...] = ("in-process", "processes", "dask", "auto")
"""The names accepted by :func:`make_executor` (``auto``: :class:`AutoExecutor`)."""

START_METHODS: tuple[str, ...] = ("spawn", "forkserver", "fork")

T = TypeVar("T")
R = TypeVar("R")

ReleaseFn = Callable[[Any, np.random.Generator, int], np.ndarray]
OnDone = Callable[[int, Any], None]


# --------------------------------------------------------------------------------------------
# Executors


class Executor(ABC):
    """Runs ``fn`` on each of a sequence of tasks and returns the results in task order.

    Subclasses set :attr:`name` and :attr:`workers` and implement :meth:`map`. An executor is a context manager;
    :meth:`close` releases its resources (a no-op by default).
    """

    name: str = ""
    """The executor's name, one of :data:`EXECUTORS` for the built-in executors."""

    @property
    def workers(self) -> int:
        """The number of tasks that can run at the same time."""
        return 1

    @abstractmethod
    def map(self, fn: Callable[[T], R], tasks: Sequence[T], *, on_done: OnDone | None = None) -> list[R]:
        """Return ``[fn(t) for t in tasks]``, possibly computed in parallel.

        ``on_done(i, result)`` is called in the calling process as each task finishes, in completion order; an
        exception it raises stops the map (pending tasks are cancelled) and propagates, as does one ``fn`` raises.

        Args:
            fn: The function, called once per task.
            tasks: The tasks.
            on_done: Called as ``on_done(i, result)`` in the calling process as task i finishes (``None``: not called).

        Returns:
            ``[fn(t) for t in tasks]``, in task order.
        """

    def close(self) -> None:  # noqa: B027 - optional: executors without workers need not override it
        """Release the executor's workers; the executor should not be used afterwards."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class InProcessExecutor(Executor):
    """Runs the tasks one after the other in the calling process; nothing is pickled."""

    name = "in-process"

    def map(self, fn: Callable[[T], R], tasks: Sequence[T], *, on_done: OnDone | None = None) -> list[R]:
        """Run the tasks one after the other in the calling process (:meth:`Executor.map`).

        Args:
            fn: The function, called once per task.
            tasks: The tasks.
            on_done: Called as ``on_done(i, result)`` in the calling process as task i finishes (``None``: not called).

        Returns:
            ``[fn(t) for t in tasks]``, in task order.

        Examples:
            >>> InProcessExecutor().map(abs, [-1, 2, -3])
            [1, 2, 3]
        """
        results: list[R] = []
        for i, task in enumerate(tasks):
            result = fn(task)
            results.append(result)
            if on_done is not None:
                on_done(i, result)
        return results


def _default_workers() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class ProcessPoolExecutor(Executor):
    """Runs the tasks in a pool of worker processes (:class:`concurrent.futures.ProcessPoolExecutor`).

    The processes are started on the first :meth:`map` and reused until :meth:`close`. ``fn``, the tasks and the
    results must be picklable: ``fn`` and any function inside a task must be top-level functions of an importable
    module. As with any ``spawn`` pool, a script that uses it must guard its entry point with
    ``if __name__ == "__main__":``.

    Args:
        workers: The worker processes (default: the CPUs available to this process).
        start_method: How the processes are started (default ``"spawn"``: safe when the caller has threads and the
            same on every platform).

    Raises:
        ValueError: ``workers`` is not a count, or ``start_method`` is unknown or not available on this platform.
    """

    name = "processes"

    def __init__(self, workers: int | None = None, *, start_method: str = "spawn") -> None:
        self._workers = _default_workers() if workers is None else check_count("workers", workers)
        self.start_method = check_choice("start_method", start_method, START_METHODS)
        if start_method not in multiprocessing.get_all_start_methods():
            raise ValueError(f"start_method {start_method!r} is not available on this platform")
        self._pool: cf.ProcessPoolExecutor | None = None
        self._generation = -1

    @property
    def workers(self) -> int:
        """The worker processes."""
        return self._workers

    def _get_pool(self) -> cf.ProcessPoolExecutor:
        from . import registry

        if self._pool is not None and self._generation != registry.generation():
            self._pool.shutdown(wait=True)  # an algorithm was registered since: the workers must learn it
            self._pool = None
        if self._pool is None:
            self._generation = registry.generation()
            context = quiet_context(self.start_method)  # a Ctrl-C is the parent's to report
            self._pool = cf.ProcessPoolExecutor(
                max_workers=self._workers,
                mp_context=context,
                initializer=registry.replay,  # algorithms registered at run time exist in the workers too
                initargs=(registry.travelling(),),
            )
        return self._pool

    def map(self, fn: Callable[[T], R], tasks: Sequence[T], *, on_done: OnDone | None = None) -> list[R]:
        """Run the tasks in the pool's processes (:meth:`Executor.map`).

        Args:
            fn: The function, called once per task.
            tasks: The tasks.
            on_done: Called as ``on_done(i, result)`` in the calling process as task i finishes (``None``: not called).

        Returns:
            ``[fn(t) for t in tasks]``, in task order.
        """
        tasks = list(tasks)
        if not tasks:
            return []
        pool = self._get_pool()
        futures = [pool.submit(fn, task) for task in tasks]
        index = {f: i for i, f in enumerate(futures)}
        results: list[Any] = [None] * len(futures)
        try:
            for future in cf.as_completed(futures):
                i = index[future]
                results[i] = future.result()
                if on_done is not None:
                    on_done(i, results[i])
        except BaseException:
            for future in futures:
                future.cancel()
            raise
        return results

    def close(self) -> None:
        """Shut the pool down, cancelling the tasks not started."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __repr__(self) -> str:
        return f"ProcessPoolExecutor(workers={self._workers}, start_method={self.start_method!r})"


@dataclass(frozen=True)
class _Boxed:
    """Hides a task from Dask, which would otherwise look inside tuples, lists and dicts."""

    value: Any


def _call_boxed(fn: Callable[[Any], Any], boxed: _Boxed) -> Any:
    return fn(boxed.value)


def _import_distributed() -> Any:
    try:
        from dask import distributed as dd
    except ImportError as exc:
        raise ValueError(
            "the dask executor needs dask.distributed, which is not installed: "
            "install dpkit[distributed] (pip install 'dpkit[distributed]')"
        ) from exc
    return dd


class DaskExecutor(Executor):
    """Runs the tasks on a :mod:`dask.distributed` cluster with ``client.map``.

    ``fn``, the tasks and the results must be picklable (see :class:`ProcessPoolExecutor`), and the module defining the
    release function must be importable on the workers. Dask is imported only here.

    Args:
        scheduler: The address of a running scheduler (for example ``"tcp://10.0.0.1:8786"``), for which a
            :class:`dask.distributed.Client` is created and closed by :meth:`close`.
        client: An existing client, which is left open (give it or ``scheduler``, not both).
        local: Start a ``LocalCluster`` of processes on this machine instead, closed with the executor.
        workers: The local cluster's workers (default: the CPUs available).

    Raises:
        ValueError: Not exactly one of ``scheduler`` and ``client`` (or either with ``local``), a scheduler that
            cannot be reached, or dask.distributed not installed (install ``dpkit[distributed]``).
    """

    name = "dask"

    #: Seconds to wait for a scheduler before giving up with a ValueError naming its address.
    connect_timeout = 5.0

    def __init__(
        self, scheduler: str | None = None, client: Any = None, *, local: bool = False, workers: int | None = None
    ) -> None:
        if local:
            if scheduler is not None or client is not None:
                raise ValueError("a local Dask cluster takes neither scheduler nor client")
        elif (scheduler is None) == (client is None):
            raise ValueError(
                "the dask executor needs exactly one of scheduler (an address) and client, "
                f"got scheduler={scheduler!r} and client={client!r}"
            )
        if scheduler is not None and (not isinstance(scheduler, str) or not scheduler):
            raise ValueError(f"scheduler must be a scheduler address such as 'tcp://host:8786', got {scheduler!r}")
        dd = _import_distributed()
        self.scheduler = scheduler
        self._cluster: Any = None
        if local:  # a LocalCluster of processes on this machine, closed with the executor
            self._cluster = dd.LocalCluster(
                n_workers=workers or _default_workers(), threads_per_worker=1, processes=True, dashboard_address=None
            )
            self.client = dd.Client(self._cluster)
            self.scheduler = self._cluster.scheduler_address
            self._owns_client = True
        elif client is None:
            try:
                self.client = dd.Client(scheduler, timeout=self.connect_timeout)
            except (OSError, TimeoutError) as err:
                raise ValueError(
                    f"cannot reach the Dask scheduler at {scheduler!r} within "
                    f"{self.connect_timeout:g} s: {type(err).__name__}"
                ) from None
            self._owns_client = True
        else:
            self.client = client
            self._owns_client = False
        self._as_completed = dd.as_completed

    @property
    def workers(self) -> int:
        """The number of worker threads in the cluster now (at least 1)."""
        info = self.client.scheduler_info()
        return max(1, sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()))

    def map(self, fn: Callable[[T], R], tasks: Sequence[T], *, on_done: OnDone | None = None) -> list[R]:
        """Run the tasks on the cluster (:meth:`Executor.map`).

        Args:
            fn: The function, called once per task.
            tasks: The tasks.
            on_done: Called as ``on_done(i, result)`` in the calling process as task i finishes (``None``: not called).

        Returns:
            ``[fn(t) for t in tasks]``, in task order.
        """
        boxed = [_Boxed(task) for task in tasks]
        if not boxed:
            return []
        # pure=False: unique keys, no hashing of (possibly large) datasets, no result caching.
        futures = self.client.map(_call_boxed, [fn] * len(boxed), boxed, pure=False)
        index = {future.key: i for i, future in enumerate(futures)}
        results: list[Any] = [None] * len(futures)
        try:
            if on_done is None:
                results = list(self.client.gather(futures))
            else:
                for future in self._as_completed(futures):
                    i = index[future.key]
                    results[i] = future.result()
                    on_done(i, results[i])
        except BaseException:
            self.client.cancel(futures)
            raise
        finally:
            del futures
        return results

    def close(self) -> None:
        """Close the client (if the executor made it) and the local cluster (if it started one)."""
        if self._owns_client and self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def __repr__(self) -> str:
        return f"DaskExecutor(scheduler={self.scheduler!r})"


#: The auto executor moves a map onto a process pool when the in-process work ahead of it, projected from the time
#: per run measured so far, is at least this many seconds (starting spawned workers takes about 1–2 s).
AUTO_SLOW_SECONDS = 2.0


def _task_runs(task: Any) -> int:
    """The runs a task stands for (a chunk's size; 1 for any other task)."""
    size = getattr(task, "size", 1)
    return max(1, int(size)) if isinstance(size, numbers.Integral) else 1


class AutoExecutor(Executor):
    """In-process while the work is cheap; a process pool of every available core once it is slow.

    Each :meth:`map` runs its tasks in the calling process, timing them, until the work left in that map, projected
    from the seconds per run measured so far (a chunk's runs: its ``size``), reaches ``slow_seconds``; the rest of that
    map, and every later map, then runs on a :class:`ProcessPoolExecutor`. It never switches with fewer than 2 workers,
    for a map with one task left, or when the function or a task does not pickle (a lambda, a closure): then
    everything stays in-process and :attr:`note` says why. Results do not depend on where they were computed, so
    switching never changes them. :attr:`name` is the executor that runs now (``in-process``, then ``processes``);
    :meth:`describe` says what ran and why.

    Args:
        workers: The processes of the pool it moves to (default: the CPUs available).
        slow_seconds: The projected in-process seconds at which it moves (:data:`AUTO_SLOW_SECONDS`).

    Raises:
        ValueError: ``workers`` is not a count, or ``slow_seconds`` not a finite number >= 0.
    """

    def __init__(self, workers: int | None = None, *, slow_seconds: float = AUTO_SLOW_SECONDS) -> None:
        self._workers = _default_workers() if workers is None else check_count("workers", workers)
        if not (isinstance(slow_seconds, numbers.Real) and math.isfinite(slow_seconds) and slow_seconds >= 0):
            raise ValueError(f"slow_seconds must be a finite number >= 0, got {slow_seconds!r}")
        self.slow_seconds: float = float(slow_seconds)
        self.name = "in-process"
        self._pool: ProcessPoolExecutor | None = None
        self._seconds: float = 0.0
        self._runs: int = 0
        self._picklable: bool | None = None
        self.note: str = ""
        #: Runs done in-process before the switch (``None`` while in-process).
        self.switched_after: int | None = None

    @property
    def workers(self) -> int:
        """The tasks that can run at once: the pool's workers once it moved, else 1."""
        return self._workers if self._pool is not None else 1

    @property
    def pool_workers(self) -> int:
        """The workers of the process pool it moves to once the work is slow."""
        return self._workers

    @property
    def seconds_per_run(self) -> float | None:
        """The in-process seconds per run measured so far (``None`` before the first task)."""
        return self._seconds / self._runs if self._runs else None

    def _worth_a_pool(self, fn: Callable[[Any], Any], rest: Sequence[Any]) -> bool:
        rate = self.seconds_per_run
        if rate is None or self._workers < 2 or len(rest) < 2:
            return False
        if rate * sum(_task_runs(t) for t in rest) < self.slow_seconds:
            return False
        if self._picklable is None:
            try:
                pickle.dumps((fn, rest[0]))
                self._picklable = True
            except Exception as err:  # noqa: BLE001 - any pickling failure means: stay in-process
                self._picklable = False
                self.note = f"stayed in-process: the work does not pickle ({type(err).__name__})"
        return self._picklable

    def map(self, fn: Callable[[T], R], tasks: Sequence[T], *, on_done: OnDone | None = None) -> list[R]:
        """Run the tasks in-process, moving to the pool once the work left is slow (:meth:`Executor.map`).

        Args:
            fn: The function, called once per task.
            tasks: The tasks.
            on_done: Called as ``on_done(i, result)`` in the calling process as task i finishes (``None``: not called).

        Returns:
            ``[fn(t) for t in tasks]``, in task order.
        """
        tasks = list(tasks)
        if self._pool is not None:
            return self._pool.map(fn, tasks, on_done=on_done)
        results: list[R] = []
        for i, task in enumerate(tasks):
            if self._worth_a_pool(fn, tasks[i:]):
                self.switched_after = self._runs
                self.note = (
                    f"slow target: {self.seconds_per_run * 1e6:.3g} µs a run measured in-process over "  # type: ignore[operator]
                    f"{self._runs:,} runs; a process pool from then on"
                )
                self._pool = ProcessPoolExecutor(self._workers)
                self.name = "processes"

                def shifted(j: int, result: Any, _at: int = i) -> None:
                    if on_done is not None:
                        on_done(_at + j, result)

                return results + self._pool.map(fn, tasks[i:], on_done=shifted)
            started = time.perf_counter()
            result = fn(task)
            self._seconds += time.perf_counter() - started
            self._runs += _task_runs(task)
            results.append(result)
            if on_done is not None:
                on_done(i, result)
        return results

    def describe(self) -> str:
        """What ran: ``in-process``, or ``processes (N workers)`` with when and why it switched.

        Returns:
            The description.

        Examples:
            >>> AutoExecutor(2).describe()
            'in-process'
        """
        if self._pool is None:
            return "in-process" + (f" ({self.note})" if self.note else "")
        return f"processes ({self._workers} workers; auto, {self.note})"

    def close(self) -> None:
        """Close the process pool, if it moved to one."""
        if self._pool is not None:
            self._pool.close()

    def __repr__(self) -> str:
        return f"AutoExecutor(workers={self._workers}, slow_seconds={self.slow_seconds!r})"


def describe_executor(executor: Executor | None) -> str:
    """The executor that ran, for a result: its :meth:`AutoExecutor.describe`, else its name.

    Args:
        executor: The executor (``None``: in-process).

    Returns:
        The description.

    Examples:
        >>> describe_executor(None), describe_executor(InProcessExecutor())
        ('in-process', 'in-process')
    """
    if executor is None:
        return "in-process"
    describe = getattr(executor, "describe", None)
    return str(describe()) if callable(describe) else str(executor.name)


def make_executor(name: str = "in-process", *, workers: int | None = None, scheduler: str | None = None) -> Executor:
    """Return the executor called ``name`` (one of :data:`EXECUTORS`).

    To use an existing Dask client, construct :class:`DaskExecutor` directly.

    Args:
        name: ``"in-process"``, ``"processes"``, ``"dask"`` or ``"auto"``.
        workers: An int >= 1 (default: the CPUs available); applies to ``"processes"``, to ``"auto"`` (the pool it
            switches to, :class:`AutoExecutor`) and to a local Dask cluster.
        scheduler: A Dask scheduler's address, only for ``"dask"``: without it a Dask ``LocalCluster`` is started (and
            closed with the executor).

    Returns:
        The executor.

    Raises:
        ValueError: An unknown name, or ``workers`` or ``scheduler`` given where they do not apply.

    Examples:
        >>> make_executor().name
        'in-process'
    """
    check_choice("executor", name, EXECUTORS)
    if workers is not None and not (name in ("processes", "auto") or (name == "dask" and scheduler is None)):
        raise ValueError(
            f"workers applies only to the 'processes' and 'auto' executors and a local Dask cluster, "
            f"got workers={workers!r} for {name!r}"
        )
    if scheduler is not None and name != "dask":
        raise ValueError(f"scheduler applies only to the 'dask' executor, got scheduler={scheduler!r} for {name!r}")
    if name == "in-process":
        return InProcessExecutor()
    if name == "processes":
        return ProcessPoolExecutor(workers)
    if name == "auto":
        return AutoExecutor(workers)
    if scheduler is None:
        return DaskExecutor(local=True, workers=workers)
    return DaskExecutor(scheduler)


# --------------------------------------------------------------------------------------------
# Seeds and batched runs


def _check_seed(seed: object) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer >= 0 or a numpy.random.SeedSequence, got {seed!r}")
    if int(seed) < 0:
        raise ValueError(f"seed must be an integer >= 0 or a numpy.random.SeedSequence, got {int(seed)}")
    return np.random.SeedSequence(int(seed))


def spawn_seeds(seed: int | np.random.SeedSequence, k: int) -> list[np.random.SeedSequence]:
    """Return the first ``k`` children of ``SeedSequence(seed)``: independent, reproducible streams.

    For an int seed this is ``np.random.SeedSequence(seed).spawn(k)``. A given :class:`~numpy.random.SeedSequence` is
    not modified (``spawn`` would advance its count of spawned children, so calling twice would give different
    streams): its children ``0 … k − 1`` are returned every time.

    Args:
        seed: An integer >= 0 or a :class:`~numpy.random.SeedSequence`.
        k: How many children.

    Returns:
        The children, in order.

    Raises:
        ValueError: A seed that is neither, or ``k`` not a count.

    Examples:
        >>> [s.spawn_key for s in spawn_seeds(7, 2)]
        [(0,), (1,)]
    """
    parent = _check_seed(seed)
    k = check_count("k", k)
    return [
        np.random.SeedSequence(parent.entropy, spawn_key=(*parent.spawn_key, i), pool_size=parent.pool_size)
        for i in range(k)
    ]


@dataclass(frozen=True)
class _Chunk:
    """One chunk of runs: ``size`` runs of ``release`` on ``dataset`` seeded with ``seed``."""

    release: ReleaseFn
    dataset: Any
    seed: np.random.SeedSequence
    size: int
    index: int
    start: int = 0
    transform: Callable[[np.ndarray], np.ndarray] | None = None


def _run_chunk(chunk: _Chunk) -> np.ndarray:
    """Run one chunk (top-level, so that process pools and Dask can pickle it). With a
    ``transform`` (e.g. a fitted attack's ``score``), the outputs are checked and transformed where
    they are produced, and only the transformed rows travel back: the outputs never accumulate."""
    out = np.asarray(chunk.release(chunk.dataset, np.random.default_rng(chunk.seed), chunk.size))
    if chunk.transform is None:
        return out
    _check_chunk(chunk, chunk.start, out)
    return np.asarray(chunk.transform(out))


def _describe(chunk: _Chunk, start: int) -> str:
    return f"chunk {chunk.index} (runs {start}..{start + chunk.size - 1})"


def _check_chunk(chunk: _Chunk, start: int, result: np.ndarray) -> None:
    where = _describe(chunk, start)
    if result.ndim == 0 or result.shape[0] != chunk.size:
        raise ValueError(
            f"release returned an array of shape {result.shape} for {where}; "
            f"expected a leading axis of length {chunk.size} (one row per run)"
        )
    if result.dtype.kind not in "biufc":
        raise ValueError(f"release returned a non-numeric array (dtype {result.dtype}) for {where}")
    if result.dtype.kind in "fc" and not np.all(np.isfinite(result)):
        bad = int(np.size(result) - np.count_nonzero(np.isfinite(result)))
        raise ValueError(f"release returned {bad} non-finite value(s) (NaN or ±inf) for {where}")


def _plan(
    release: ReleaseFn,
    dataset: Any,
    n: int,
    seed: int | np.random.SeedSequence,
    chunk_size: int,
    transform: Callable[[np.ndarray], np.ndarray] | None,
) -> list[_Chunk]:
    """The chunks of ``n`` runs of ``release`` on ``dataset`` (the seed contract of :func:`run_batched`)."""
    n_chunks = math.ceil(n / chunk_size)
    seeds = spawn_seeds(seed, n_chunks)
    return [
        _Chunk(release, dataset, seeds[i], min(chunk_size, n - i * chunk_size), i, i * chunk_size, transform)
        for i in range(n_chunks)
    ]


def _check_options(
    release: object, executor: Executor | None, progress: object, n: int, chunk_size: int
) -> tuple[Executor, int, int]:
    if not callable(release):
        raise ValueError(f"release must be callable, got {release!r}")
    n = check_count("n", n)
    chunk_size = check_count("chunk_size", chunk_size)
    if executor is None:
        executor = InProcessExecutor()
    elif not callable(getattr(executor, "map", None)):
        raise ValueError(f"executor must be an Executor (with a map method), got {executor!r}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be callable or None, got {progress!r}")
    return executor, n, chunk_size


def _run_plans(
    plans: list[list[_Chunk]], executor: Executor, progress: Callable[[int], None] | None
) -> list[np.ndarray]:
    """Run the chunks of every plan in one ``executor.map`` (so that the chunks of D and D′ run side by side) and
    return each plan's outputs, its chunks concatenated in chunk order."""
    chunks = [c for plan in plans for c in plan]

    def on_done(i: int, result: np.ndarray) -> None:
        _check_chunk(chunks[i], chunks[i].start, result)
        if progress is not None:
            progress(chunks[i].size)

    results = executor.map(_run_chunk, chunks, on_done=on_done)
    if len(results) != len(chunks):
        raise ValueError(f"executor {executor!r} returned {len(results)} results for {len(chunks)} chunks")
    outputs, at = [], 0
    for plan in plans:
        mine, at = results[at : at + len(plan)], at + len(plan)
        trailing = mine[0].shape[1:]
        for chunk, result in zip(plan, mine, strict=True):
            if result.shape[1:] != trailing:
                raise ValueError(
                    f"release returned an array of shape {result.shape} for {_describe(chunk, chunk.start)}; "
                    f"expected trailing shape {trailing} as for chunk 0"
                )
        outputs.append(mine[0] if len(mine) == 1 else np.concatenate(mine, axis=0))
    return outputs


def run_batched(
    release: ReleaseFn,
    dataset: Any,
    n: int,
    seed: int | np.random.SeedSequence,
    *,
    executor: Executor | None = None,
    chunk_size: int = 10_000,
    progress: Callable[[int], None] | None = None,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """Return ``n`` runs of ``release`` on ``dataset``: an array of shape ``(n, ...)``.

    The runs are split into ``ceil(n / chunk_size)`` chunks; chunk ``i`` (runs ``i·chunk_size …``) is
    ``release(dataset, np.random.default_rng(spawn_seeds(seed, n_chunks)[i]), m_i)``. The chunks run through
    ``executor.map`` and are concatenated in chunk order, so the result depends only on ``(release, dataset, n,
    chunk_size, seed)``, never on the executor or its number of workers.

    Args:
        release: The release function ``release(dataset, rng, n)``.
        dataset: Its dataset.
        n: How many runs (the increments of ``progress`` sum to it).
        seed: An integer >= 0 or a :class:`~numpy.random.SeedSequence`.
        executor: Where the chunks run (default: :class:`InProcessExecutor`).
        chunk_size: The runs per chunk (the output changes with it).
        progress: Called in the calling process with the number of runs of each chunk as it finishes (an increment, as
            ``tqdm``'s ``update`` expects).
        transform: A picklable callable (e.g. a fitted attack's ``score``) applied to each chunk's outputs in the
            worker that produced them; only the transformed rows are returned (streaming: memory is that of the
            transformed rows, not of the outputs).

    Returns:
        The outputs (or their transforms), chunks in order.

    Raises:
        ValueError: A bad option, or a chunk whose result lacks leading axis ``m_i``, the trailing shape of chunk 0 or
            finite numeric values (the chunk is named).

    Examples:
        >>> import numpy as np
        >>> def release(dataset, rng, n):
        ...     return np.full((n, 1), dataset)
        >>> run_batched(release, 3.0, 5, seed=0, chunk_size=2).ravel().tolist()
        [3.0, 3.0, 3.0, 3.0, 3.0]
    """
    executor, n, chunk_size = _check_options(release, executor, progress, n, chunk_size)
    return _run_plans([_plan(release, dataset, n, seed, chunk_size, transform)], executor, progress)[0]


def run_pair(
    release: ReleaseFn,
    dataset0: Any,
    dataset1: Any,
    n: int,
    seed: int | np.random.SeedSequence,
    *,
    executor: Executor | None = None,
    chunk_size: int = 10_000,
    progress: Callable[[int], None] | None = None,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Return ``n`` runs of ``release`` on ``dataset0`` (D) and ``n`` on ``dataset1`` (D′).

    The two datasets get independent streams, children 0 and 1 of ``SeedSequence(seed)`` (:func:`spawn_seeds`): each
    output is :func:`run_batched` of its dataset and stream with the other arguments, but the chunks of both datasets go
    to the executor in one ``map``, so that they run side by side (two single-chunk datasets use two workers).

    Args:
        release: The release function ``release(dataset, rng, n)``.
        dataset0: D.
        dataset1: D′.
        n: How many runs of each (the increments of ``progress`` sum to ``2n``).
        seed: An integer >= 0 or a :class:`~numpy.random.SeedSequence`.
        executor: Where the chunks run (default: :class:`InProcessExecutor`).
        chunk_size: The runs per chunk (the output changes with it).
        progress: Called in the calling process with the number of runs of each chunk as it finishes (an increment, as
            ``tqdm``'s ``update`` expects).
        transform: A picklable callable (e.g. a fitted attack's ``score``) applied to each chunk's outputs in the
            worker that produced them; only the transformed rows are returned (streaming: memory is that of the
            transformed rows, not of the outputs).

    Returns:
        (the runs on D, the runs on D′).

    Raises:
        ValueError: As :func:`run_batched`.
    """
    seed0, seed1 = spawn_seeds(seed, 2)
    executor, n, chunk_size = _check_options(release, executor, progress, n, chunk_size)
    plans = [_plan(release, d, n, s, chunk_size, transform) for d, s in ((dataset0, seed0), (dataset1, seed1))]
    out0, out1 = _run_plans(plans, executor, progress)
    return out0, out1
