"""The binary counting mechanism as a working counter: :class:`BinaryCounter`, used by the RL algorithms.

The mechanism (which p-sums it forms and releases) is described in :mod:`dpkit.accountant.tree_counts`; the
privacy of one counter is :func:`dpkit.accountant.tree.tree_ledger`.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .validation import ArgumentTypeError, check_count, check_nonnegative, check_rng

__all__ = ["BinaryCounter"]


def _check_counter_sigma(sigma: Any, shape: tuple[int, ...], symmetric: bool = False) -> float | np.ndarray:
    """A counter's σ: one number, or one per index of the item's first axis (e.g. one per step of a batch of H
    counters), each >= 0; a symmetric counter needs a batch axis before its two matrix axes for that."""
    if np.ndim(sigma) == 0:
        return check_nonnegative("sigma", sigma)
    if symmetric and len(shape) < 3:
        raise ValueError(
            f"a symmetric counter of shape {shape} takes one σ (one per index needs a batch axis), got {sigma!r}"
        )
    values = np.array([check_nonnegative(f"sigma[{i}]", v) for i, v in enumerate(np.ravel(np.asarray(sigma)))])
    if np.ndim(sigma) != 1 or values.shape[0] != shape[0]:
        raise ValueError(f"sigma must be one number or one per index of the first axis ({shape[0]}), got {sigma!r}")
    return values


def _check_shape(shape: object) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence) or isinstance(shape, str):
        raise ArgumentTypeError(f"shape must be a tuple of integers >= 1, got {shape!r}")
    dims = []
    for i, n in enumerate(shape):
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"shape must be a tuple of integers >= 1, got {tuple(shape)!r} (shape[{i}] = {n!r})")
        dims.append(int(n))
    return tuple(dims)


def _check_rng(rng: object) -> np.random.Generator:
    return check_rng("rng", rng)


@functools.lru_cache(maxsize=64)
def _triu_indices(d: int) -> tuple[np.ndarray, np.ndarray]:
    """The upper triangle's indices of a d × d matrix (read-only, cached: a counter is built per audit run)."""
    rows, cols = np.triu_indices(d)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


class BinaryCounter:
    """The binary mechanism as a running counter of arrays of shape ``shape``.

    ``add(item)`` inserts the next item; ``prefix()`` is the current noisy sum of all items so
    far. When item t arrives the p-sum α_i of items t − lowbit(t) + 1 … t is formed from the
    item and the exact p-sums of the lower levels, which are then discarded, and one noisy
    p-sum α̂_i = α_i + noise is created. Noise is fresh for every p-sum and every p-sum is noised
    exactly once; ``prefix()`` sums the held noisy p-sums (popcount(t) of them) and draws no
    noise, so repeated calls at the same t return the same value. Only what is still needed is
    stored: the exact and noisy p-sums of the levels in use, O(log t) arrays.

    For the ``after-each`` schedule call ``add`` then ``prefix``; for ``before-episode`` (the
    seeds) call ``prefix`` at the start of each episode, then ``add`` the episode's item. The
    privacy of the counter is :func:`~dpkit.accountant.tree.tree_ledger` with ``steps`` the number of items added.

    Args:
        shape: Shape of one item. Leading batch axes are allowed (e.g. ``(runs, d, d)`` for independent
            runs): noise is i.i.d. across them.
        sigma: Noise standard deviation per p-sum (>= 0; 0 turns noise off, so prefixes are the exact
            cumulative sums); or one per index of the first axis (a batch of counters of different σ, e.g. the H
            per-step counters of an allocation with per-step σ).
        rng: A numpy ``Generator`` (used, and advanced, in place) or an integer seed; or a sequence of Generators, one
            per run: the counter is then a batch of ``len(rng)`` independent counters (items and prefixes get a leading
            run axis, ``shape`` stays one run's), and run i draws from ``rng[i]`` exactly what a counter of ``shape``
            with that Generator draws — a batch of one is that counter, bit for bit.
        symmetric: Draw symmetric noise over the last two axes (which must be equal): i.i.d. N(0, σ²) on
            the entries i <= j, mirrored; exactly d(d + 1)/2 normals per matrix are drawn.
            Otherwise every entry gets i.i.d. N(0, σ²) noise.
        steps: The number of items the counter may take (``None``: unbounded).

    Raises:
        ArgumentTypeError: a shape, σ, seed or count of the wrong type.
        ValueError: a shape not of integers >= 1, a negative σ (or as many σ as neither 1 nor the first axis), an
            empty sequence of Generators, a negative seed, a non-bool ``symmetric`` or one with unequal last axes,
            or ``steps`` below 1.
    """

    def __init__(
        self,
        shape: int | Sequence[int],
        sigma: float | Sequence[float] | np.ndarray,
        rng: np.random.Generator | int,
        *,
        symmetric: bool = False,
        steps: int | None = None,
    ) -> None:
        self.shape: tuple[int, ...] = _check_shape(shape)
        if not isinstance(symmetric, (bool, np.bool_)):
            raise ValueError(f"symmetric must be True or False, got {symmetric!r}")  # noqa: TRY004 - as above
        self.sigma: float | np.ndarray = _check_counter_sigma(sigma, self.shape, bool(symmetric))
        self._rngs: tuple[np.random.Generator, ...] | None = None
        if isinstance(rng, Sequence) and not isinstance(rng, str):
            if not rng:
                raise ValueError("rng must hold at least one Generator (one per run), got an empty sequence")
            self._rngs = tuple(check_rng(f"rng[{i}]", g) for i, g in enumerate(rng))
            self._rng = self._rngs[0]
        else:
            self._rng = _check_rng(rng)
        self.symmetric: bool = bool(symmetric)
        if self.symmetric and (len(self.shape) < 2 or self.shape[-1] != self.shape[-2]):
            raise ValueError(f"symmetric noise needs the last two axes of shape to be equal, got shape {self.shape}")
        self.steps: int | None = None if steps is None else check_count("steps", steps)
        self._triu = _triu_indices(self.shape[-1]) if self.symmetric else None
        self._exact: list[np.ndarray | None] = []  # α_j by level j
        self._noisy: list[np.ndarray | None] = []  # α̂_j by level j
        self._t = 0
        self._draws = 0
        self._prefix: np.ndarray | None = None

    @property
    def t(self) -> int:
        """The number of items added so far."""
        return self._t

    @property
    def runs(self) -> int | None:
        """The number of runs of a batch of counters (``None``: one counter, no run axis)."""
        return None if self._rngs is None else len(self._rngs)

    @property
    def item_shape(self) -> tuple[int, ...]:
        """The shape of what :meth:`add` takes and :meth:`prefix` returns: ``(runs, *shape)`` for a batch of runs."""
        return self.shape if self._rngs is None else (len(self._rngs), *self.shape)

    @property
    def stored_psums(self) -> int:
        """The number of noisy p-sums currently held: popcount(t)."""
        return sum(a is not None for a in self._noisy)

    @property
    def noise_draws(self) -> int:
        """The number of noisy p-sums ever created (one per item: t)."""
        return self._draws

    def _check_item(self, item: object) -> np.ndarray:
        index = self._t + 1
        raw = np.asarray(item)
        if raw.dtype.kind not in "biuf":
            raise ValueError(f"item {index} must be a real array of shape {self.shape}, got dtype {raw.dtype}")
        if raw.shape != self.item_shape:
            raise ValueError(f"item {index} must have shape {self.item_shape}, got shape {raw.shape}")
        x = np.array(raw, dtype=np.float64)
        finite = np.isfinite(x)
        if not finite.all():
            where = tuple(int(i) for i in np.argwhere(~finite)[0])
            raise ValueError(f"item {index} must be finite, got {x[where]!r} at index {where}")
        return x

    def _normals(self, shape: tuple[int, ...]) -> np.ndarray:
        """Standard normals of one run's ``shape``: from the Generator, or from each run's, stacked on the run axis."""
        if self._rngs is None:
            return self._rng.standard_normal(shape)
        return np.stack([g.standard_normal(shape) for g in self._rngs])

    def _noise(self) -> np.ndarray:
        sigma = self.sigma
        if self._triu is None:
            if np.ndim(sigma):
                sigma = np.asarray(sigma).reshape(np.shape(sigma) + (1,) * (len(self.shape) - 1))
            return sigma * self._normals(self.shape)
        rows, cols = self._triu
        upper = self._normals(self.shape[:-2] + (rows.size,))
        if np.ndim(sigma):
            sigma = np.asarray(sigma).reshape(np.shape(sigma) + (1,) * (len(self.shape) - 2))
        upper *= sigma
        out = np.empty(self.item_shape)
        out[..., rows, cols] = upper
        out[..., cols, rows] = upper
        return out

    def add(self, item: np.ndarray | Sequence[Any] | float) -> None:
        """Insert the next item (an array of ``shape`` with finite entries).

        Args:
            item: the item, an array of :attr:`item_shape` (a number for shape ()).

        Raises:
            ValueError: more than ``steps`` items, or an item of the wrong shape, not real or not finite.
        """
        if self.steps is not None and self._t >= self.steps:
            raise ValueError(f"the counter takes at most steps = {self.steps} items; cannot add item {self._t + 1}")
        alpha = self._check_item(item)
        t = self._t + 1
        level = (t & -t).bit_length() - 1
        for j in range(level):  # levels 0 … level − 1 are all in use, since t − 1 ends in `level` ones
            alpha += self._exact[j]
            self._exact[j] = self._noisy[j] = None
        if level == len(self._exact):
            self._exact.append(None)
            self._noisy.append(None)
        self._exact[level] = alpha
        self._noisy[level] = alpha + self._noise() if np.any(self.sigma) else alpha
        self._t = t
        self._draws += 1
        self._prefix = None

    def prefix(self) -> np.ndarray:
        """The noisy sum of all items so far (zeros before any item); draws no new noise.

        Returns:
            The noisy prefix sum, an array of :attr:`item_shape`.
        """
        if self._prefix is None:
            total = np.zeros(self.item_shape)
            for noisy in reversed(self._noisy):  # highest level first: the items in order
                if noisy is not None:
                    total += noisy
            self._prefix = total
        return self._prefix.copy()

    def __repr__(self) -> str:
        return (
            f"BinaryCounter(shape={self.shape}, sigma={self.sigma!r}, symmetric={self.symmetric}, "
            f"steps={self.steps}, t={self._t}" + ("" if self._rngs is None else f", runs={len(self._rngs)}") + ")"
        )
