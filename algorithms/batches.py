"""When an audit's runs may go in one batch, and how many at a time.

A batched observer simulates many runs of dpkit's own agent along a run axis. It may do so only while the agent's
class is as shipped: a class whose methods a test or a user patched in place is an implementation under test, whose
scalar methods the batch would bypass (:class:`ShippedClass`); an implementation under test may join it only by
saying it plays a run axis (:func:`plays_runs`). And a batch holds every run's arrays at once: in a
world of large features (FrozenLake's d = S²A = 1,024) one run holds tens of megabytes, so the runs go in parts
that fit :data:`BATCH_BYTES` (:func:`batch_parts`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["BATCH_BYTES", "ShippedClass", "batch_parts", "batchable", "plays_runs"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

#: The attribute :func:`plays_runs` sets on a factory.
_PLAYS_RUNS = "dpkit_plays_runs"

#: The most bytes of per-run arrays one batch of runs holds (estimated by the observer from the world's sizes).
BATCH_BYTES = 1 << 28


class ShippedClass:
    """Whether a class's methods are still those its module defines, to tell dpkit's agent from one patched in place.

    A method is as shipped when it was defined in its class's body: its ``__module__`` is the class's and its
    ``__qualname__`` is ``Class.name``. A function put there afterwards (a test's monkeypatch, a lambda, a user's
    function) has its own, whenever the modules were imported.

    Args:
        cls: the agent's class; it and every dpkit class it derives from are read.
    """

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def intact(self) -> bool:
        """Whether every method of the class, and of every dpkit class it derives from, is as its module defines it.

        Returns:
            False as soon as one was replaced or added from elsewhere.
        """
        for owner in self.cls.__mro__:
            if not owner.__module__.startswith("dpkit."):
                continue
            for name, value in vars(owner).items():
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                elif isinstance(value, property):
                    value = value.fget
                if not callable(value) or isinstance(value, type):
                    continue
                module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
                if module != owner.__module__ or qualname != f"{owner.__qualname__}.{name}":
                    return False
        return True


def batch_parts(items: Sequence[T], bytes_per_run: float, *, budget: float = BATCH_BYTES) -> list[Sequence[T]]:
    """``items`` (one per run) in consecutive parts of at most ``budget`` bytes of per-run arrays.

    Every part holds at least one run.

    Args:
        items: one entry per run (e.g. the runs' Generators).
        bytes_per_run: the observer's estimate of one run's arrays.
        budget: the most bytes a part may hold.

    Returns:
        The parts, in order; their concatenation is ``items``.

    Examples:
        >>> [len(p) for p in batch_parts(list(range(10)), 300.0, budget=1000.0)]
        [3, 3, 3, 1]
    """
    size = max(1, int(budget // max(float(bytes_per_run), 1.0)))
    return [items[i : i + size] for i in range(0, len(items), size)]


def plays_runs(factory: F) -> F:
    """Mark an implementation factory as playing a run axis, so an audit may build it with R Generators at once.

    The factory must then accept a sequence of Generators where it accepts one, and return one agent of those R runs
    whose run i is what the factory given ``rngs[i]`` alone gives (the contract of dpkit's own agents; an audit
    reads the rows as independent runs). Mark only factories whose overrides keep the run axis: an unmarked factory
    is built and played one run at a time, which is always right.

    Args:
        factory: a factory of :func:`dpkit.algorithms.simulation.make_agent`'s signature.

    Returns:
        The factory itself, marked.

    Examples:
        >>> from dpkit.algorithms.simulation import make_agent
        >>> @plays_runs
        ... def mine(name, env, episodes, rng, **kw):
        ...     return make_agent(name, env, episodes, rng, **kw)
        >>> mine.dpkit_plays_runs
        True
    """
    setattr(factory, _PLAYS_RUNS, True)
    return factory


def batchable(implementation: Callable[..., Any] | None, shipped: Sequence[ShippedClass]) -> bool:
    """Whether an audit's runs of an implementation may go through the agent's run axis.

    They may for dpkit's own agent or an implementation marked by :func:`plays_runs`, while every class of
    ``shipped`` is as its module defines it.

    Args:
        implementation: the audit setting's ``implementation``: None for dpkit's own agent, or a factory.
        shipped: the dpkit classes the batch plays.

    Returns:
        False for an unmarked implementation under test or a class patched in place.
    """
    if implementation is not None and not getattr(implementation, _PLAYS_RUNS, False):
        return False
    return all(c.intact() for c in shipped)
