"""The binary counting mechanism (tree aggregation): its p-sum counts, privacy and a working counter.

The binary mechanism of Chan, Shi and Song (2011, Algorithm 2) releases running sums of a
stream x_1, x_2, … with noise that grows only logarithmically in the stream length.

**The algorithm.** When item t arrives, let i be the index of the lowest set bit of t. The
p-sum α_i = x_t + Σ_{j<i} α_j is formed; it covers the items t − lowbit(t) + 1 … t
(:func:`psum_interval`). The α_j with j < i are discarded, and *one* noisy p-sum
α̂_i = α_i + N(0, σ²) is created: every p-sum is noised exactly once, with fresh noise
(for matrices with symmetric noise: i.i.d. N(0, σ²) on the entries i ≤ j, mirrored). The noisy
prefix sum 1 … t is the sum of the α̂_j over the set bits j of t: popcount(t) p-sums
(:func:`prefix_decomposition`).

**Release schedules** (:data:`SCHEDULES`); T is the number of items (``steps``):

* ``after-each`` — the prefix 1 … t is released after item t, for t = 1 … T;
* ``before-episode`` — the schedule of the RL seeds ("at the start of episode k, the tree has
  k − 1 leaves", T = K episodes): at the start of episode k the prefix 1 … k − 1 is released
  (nothing at k = 1), then the episode's item is added. Item K is never released.

So the released prefixes are 1 … T′ (:func:`released_prefixes`) with T′ = T for ``after-each``
and T′ = K − 1 for ``before-episode``; the released p-sums are those created at t = 1 … T′.

**Counts.** Item s lies in the p-sums created at t = s, s + lowbit(s), … (its Fenwick update
path), up to T′ (:func:`psums_per_item`). The maximum over items is bit_length(T′) =
⌊log2 T′⌋ + 1 (0 when T′ = 0), attained by item 1 (p-sums 1, 2, 4, …)
(:func:`max_psums_per_item`, :func:`worst_item`). For ``before-episode`` this equals
⌈log2 K⌉ for K >= 2 — the seeds' m = ⌈log K⌉ (:func:`paper_depth`), which is right only with
log base 2 and this schedule; with ``after-each`` and T a power of 2 the true count is one more.
A released prefix t is a sum of popcount(t) p-sums; the maximum over the released prefixes
is bit_length(T′ + 1) − 1 (:func:`max_psums_per_prefix`).

The full dyadic interval tree — every node [(j − 1)2^i + 1, j 2^i] with j 2^i <= T′ released,
not only the Fenwick nodes (odd j) — has the same maximum count per item, bit_length(T′): item 1
lies in [1, 2^i] for each 2^i <= T′, and the node at level i containing any item ends at
a multiple of 2^i, so exists only if 2^i <= T′.

**Privacy.** A user changes one item, by at most Δ in ℓ2 norm, so each released p-sum changes
by at most Δ and at most m = :func:`max_psums_per_item` of them change. The release of all
noisy p-sums is therefore one Gaussian mechanism with sensitivity Δ√m and noise σ per p-sum:
μ = Δ√m/σ (:func:`tree_mu`), the same as m composed Gaussian releases of sensitivity Δ
(:func:`tree_ledger`). Every prefix is a post-processing of the p-sums released so far, so
the whole released sequence of prefixes is covered.

**Utility.** A prefix's noise has variance popcount(t)·σ² per entry
(:func:`prefix_noise_variance`); for symmetric matrix noise, the operator norm of the sum of
m noise matrices is bounded by :func:`symmetric_noise_norm_bound`.

:class:`BinaryCounter` is the working counter used by the RL algorithms.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .accountants import Guarantee, make_accountant
from .calibration import Calibration, calibrate_sigma
from .ledger import Ledger
from .numerics import round_up
from .validation import (
    ArgumentTypeError,
    check_choice,
    check_count,
    check_extended_nonnegative,
    check_index,
    check_nonnegative,
    check_positive,
    check_probability,
    check_real,
    check_rng,
    check_unit_interval,
)

__all__ = [
    "SCHEDULES",
    "BinaryCounter",
    "calibrate_tree_sigma",
    "max_psums_per_item",
    "max_psums_per_prefix",
    "paper_depth",
    "prefix_decomposition",
    "prefix_noise_variance",
    "psum_interval",
    "psums_per_item",
    "released_prefixes",
    "symmetric_noise_norm_bound",
    "tree_delta",
    "tree_epsilon",
    "tree_ledger",
    "tree_mu",
    "worst_item",
]

#: Release schedules of the binary mechanism (see the module docstring).
SCHEDULES: tuple[str, ...] = ("after-each", "before-episode")


def released_prefixes(steps: int, *, schedule: str = "after-each") -> int:
    """T′: the number of released prefixes (1 … T′) of a counter over ``steps`` items.

    ``steps`` for ``after-each``, ``steps − 1`` for ``before-episode``.

    >>> released_prefixes(8, schedule="after-each"), released_prefixes(8, schedule="before-episode")
    (8, 7)
    """
    steps = check_count("steps", steps)
    schedule = check_choice("schedule", schedule, SCHEDULES)
    return steps if schedule == "after-each" else steps - 1


def psums_per_item(steps: int, *, schedule: str = "after-each") -> np.ndarray:
    """For each item s = 1 … ``steps``, the number of released p-sums that contain it.

    Item s lies in the p-sums created at t = s, s + lowbit(s), … (its Fenwick update path) up
    to the last released prefix T′. Vectorised: one pass per tree level, none per item.

    >>> psums_per_item(8).tolist()
    [4, 3, 3, 2, 3, 2, 2, 1]
    """
    last = released_prefixes(steps, schedule=schedule)
    steps = int(steps)
    position = np.arange(1, steps + 1, dtype=np.int64)
    counts = np.zeros(steps, dtype=np.int64)
    active = position <= last
    while active.any():  # at most bit_length(T′) rounds: lowbit(position) doubles each round
        counts += active
        position = np.where(active, position + (position & -position), position)
        active &= position <= last
    return counts


def max_psums_per_item(steps: int, *, schedule: str = "after-each") -> int:
    """m: the largest number of released p-sums that contain one item, bit_length(T′).

    That is ⌊log2 T′⌋ + 1, or 0 when nothing is released (T′ = 0).

    >>> max_psums_per_item(8, schedule="after-each"), max_psums_per_item(8, schedule="before-episode")
    (4, 3)
    """
    return released_prefixes(steps, schedule=schedule).bit_length()


def worst_item(steps: int, *, schedule: str = "after-each") -> int:
    """The first item (1-based) lying in :func:`max_psums_per_item` released p-sums: always item 1.

    Raises ``ValueError`` when nothing is released (``before-episode`` with one step).
    """
    if released_prefixes(steps, schedule=schedule) == 0:
        raise ValueError(
            f"no item is in any released p-sum: with schedule {schedule!r} and steps = {steps!r} nothing is released"
        )
    return 1


def max_psums_per_prefix(steps: int, *, schedule: str = "after-each") -> int:
    """The largest number of p-sums summed into one released prefix: max popcount(t), t <= T′.

    That is bit_length(T′ + 1) − 1 (0 when nothing is released).

    >>> max_psums_per_prefix(7), max_psums_per_prefix(8)
    (3, 3)
    """
    return (released_prefixes(steps, schedule=schedule) + 1).bit_length() - 1


def psum_interval(t: int) -> tuple[int, int]:
    """The items (first, last) covered by the p-sum created when item ``t`` arrives.

    >>> psum_interval(12)
    (9, 12)
    """
    t = check_count("t", t)
    return t - (t & -t) + 1, t


def prefix_decomposition(t: int) -> list[tuple[int, int]]:
    """The p-sums (as item intervals, in item order) whose noisy values sum to the prefix 1 … ``t``.

    One per set bit of ``t``; empty for ``t = 0``.

    >>> prefix_decomposition(13)
    [(1, 8), (9, 12), (13, 13)]
    """
    t = check_index("t", t)
    out: list[tuple[int, int]] = []
    start = 0
    for level in reversed(range(t.bit_length())):
        if t >> level & 1:
            out.append((start + 1, start + (1 << level)))
            start += 1 << level
    return out


def _power_at_least(base: float, exponent: int, value: int) -> bool:
    """Whether base**exponent >= value, decided exactly (``base`` is a float, hence rational)."""
    import mpmath  # imported where used: only this exact check needs it

    with mpmath.workdps(60):
        gap = exponent * mpmath.log(mpmath.mpf(base)) - mpmath.log(value)
    if abs(gap) > mpmath.mpf("1e-45"):
        return bool(gap > 0)
    return Fraction(base) ** exponent >= value  # a near tie: settle it in rational arithmetic


def paper_depth(steps: int, *, base: float = 2.0) -> int:
    """⌈log_base steps⌉: the seeds' tree depth m = ⌈log K⌉.

    The smallest m >= 0 with base^m >= steps, computed exactly: with integer arithmetic for
    base 2, otherwise by a float estimate corrected by exact comparisons. Equals
    :func:`max_psums_per_item` for ``before-episode`` and base 2 (for steps >= 2), not in
    general: with ``after-each`` it is one short when steps is a power of 2.

    >>> paper_depth(8), paper_depth(9), paper_depth(1000, base=10)
    (3, 4, 3)
    """
    steps = check_count("steps", steps)
    base = check_real("base", base)
    if base <= 1.0:
        raise ValueError(f"base must be > 1, got {base!r}")
    if base == 2.0:
        return (steps - 1).bit_length()
    if steps == 1:
        return 0
    depth = max(0, math.ceil(math.log(steps) / math.log(base)))
    while depth > 0 and _power_at_least(base, depth - 1, steps):
        depth -= 1
    while not _power_at_least(base, depth, steps):
        depth += 1
    return depth


# ------------------------------------------------------------------------------------------
# Privacy of one whole counter
# ------------------------------------------------------------------------------------------


def tree_ledger(
    steps: int,
    *,
    sigma: float,
    sensitivity: float = 1.0,
    schedule: str = "after-each",
    name: str = "binary-counter",
) -> Ledger:
    """The ledger of one counter: a Gaussian release of sensitivity Δ and noise σ, ``count`` = m.

    m = :func:`max_psums_per_item`: the release of all noisy p-sums is one Gaussian mechanism
    with sensitivity Δ√m, i.e. m composed releases of sensitivity Δ. Raises ``ValueError``
    when nothing is released (m = 0).
    """
    sigma = check_positive("sigma", sigma)
    sensitivity = check_positive("sensitivity", sensitivity)
    m = max_psums_per_item(steps, schedule=schedule)
    if m == 0:
        raise ValueError(
            f"nothing is released by a counter with schedule {schedule!r} and steps = {steps!r}: the ledger would "
            f"be empty"
        )
    return Ledger.homogeneous(sensitivity, sigma, compositions=m, name=name)


def tree_mu(steps: int, *, sigma: float, sensitivity: float = 1.0, schedule: str = "after-each") -> float:
    """μ of one counter, Δ√m/σ with m = :func:`max_psums_per_item` (rounded up; 0 if m = 0).

    >>> tree_mu(8, sigma=2.0)
    1.0000000000000009
    """
    sigma = check_positive("sigma", sigma)
    sensitivity = check_positive("sensitivity", sensitivity)
    if max_psums_per_item(steps, schedule=schedule) == 0:
        return 0.0
    return tree_ledger(steps, sigma=sigma, sensitivity=sensitivity, schedule=schedule).mu


def tree_epsilon(
    steps: int,
    *,
    sigma: float,
    delta: float,
    sensitivity: float = 1.0,
    schedule: str = "after-each",
    method: str = "exact",
    conversion: str | None = None,
    **options: Any,
) -> Guarantee:
    """ε(δ) of one counter under ``method`` (any of :data:`~dpkit.accountant.accountants.METHODS`).

    The counter's ledger is :func:`tree_ledger`; when nothing is released the guarantee is ε = 0.
    """
    acc = make_accountant(method, conversion=conversion, **options)
    sigma = check_positive("sigma", sigma)
    delta = check_unit_interval("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    if max_psums_per_item(steps, schedule=schedule) == 0:
        return Guarantee(0.0, delta, acc.method, acc.conversion)
    return acc.epsilon(tree_ledger(steps, sigma=sigma, sensitivity=sensitivity, schedule=schedule), delta)


def tree_delta(
    steps: int,
    *,
    sigma: float,
    epsilon: float,
    sensitivity: float = 1.0,
    schedule: str = "after-each",
    method: str = "exact",
    conversion: str | None = None,
    **options: Any,
) -> Guarantee:
    """δ(ε) of one counter under ``method``; δ = 0 when nothing is released."""
    acc = make_accountant(method, conversion=conversion, **options)
    sigma = check_positive("sigma", sigma)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    if max_psums_per_item(steps, schedule=schedule) == 0:
        return Guarantee(epsilon, 0.0, acc.method, acc.conversion)
    return acc.delta(tree_ledger(steps, sigma=sigma, sensitivity=sensitivity, schedule=schedule), epsilon)


def calibrate_tree_sigma(
    steps: int,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    schedule: str = "after-each",
    method: str = "exact",
    conversion: str | None = None,
    **options: Any,
) -> Calibration:
    """The smallest σ per p-sum for which one counter is (ε, δ)-DP under ``method``.

    :func:`~dpkit.accountant.calibration.calibrate_sigma` with ``compositions`` = m =
    :func:`max_psums_per_item`. Raises ``ValueError`` when nothing is released (m = 0: no
    noise is needed).
    """
    m = max_psums_per_item(steps, schedule=schedule)
    if m == 0:
        raise ValueError(
            f"nothing is released by a counter with schedule {schedule!r} and steps = {steps!r}: no sigma to calibrate"
        )
    return calibrate_sigma(
        epsilon, delta, sensitivity=sensitivity, compositions=m, method=method, conversion=conversion, **options
    )


# ------------------------------------------------------------------------------------------
# Utility
# ------------------------------------------------------------------------------------------


def prefix_noise_variance(t: int, sigma: float) -> float:
    """Variance of each entry of the noise of the prefix 1 … ``t``: popcount(t)·σ².

    >>> prefix_noise_variance(7, 2.0)
    12.0
    """
    t = check_index("t", t)
    sigma = check_nonnegative("sigma", sigma)
    return t.bit_count() * sigma * sigma


def symmetric_noise_norm_bound(sigma: float, *, psums: int, dim: int, failure_probability: float) -> float:
    """Operator-norm bound on the sum of ``psums`` symmetric d×d Gaussian noise matrices.

    Each matrix has i.i.d. N(0, σ²) entries on i <= j, mirrored, so the sum is one such matrix
    with σ_total = σ√m. From ‖A‖ <= 4σ√d + 2s with probability >= 1 − 2exp(−s²/(2σ²)) (seed
    003, Lemma 4), applied with σ_total and solved for the failure probability p:

        ‖Σ noise‖ <= σ√m (4√d + √(8 ln(2/p)))   with probability >= 1 − p.

    The seeds shift the noisy Gram matrices by 2Λ with this Λ. For a bound over every prefix of
    a counter, pass m = :func:`max_psums_per_prefix` and p divided by the number of prefixes
    (union bound). Rounded up; 0 when m = 0 or σ = 0.
    """
    sigma = check_nonnegative("sigma", sigma)
    psums = check_index("psums", psums)
    dim = check_count("dim", dim)
    p = check_probability("failure_probability", failure_probability)
    if psums == 0 or sigma == 0.0:
        return 0.0
    return round_up(sigma * math.sqrt(psums) * (4.0 * math.sqrt(dim) + math.sqrt(8.0 * math.log(2.0 / p))))


# ------------------------------------------------------------------------------------------
# The working counter
# ------------------------------------------------------------------------------------------


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
    privacy of the counter is :func:`tree_ledger` with ``steps`` the number of items added.

    Parameters
    ----------
    shape:
        Shape of one item. Leading batch axes are allowed (e.g. ``(runs, d, d)`` for independent
        runs): noise is i.i.d. across them.
    sigma:
        Noise standard deviation per p-sum (>= 0; 0 turns noise off, so prefixes are the exact
        cumulative sums); or one per index of the first axis (a batch of counters of different σ, e.g. the H
        per-step counters of an allocation with per-step σ).
    rng:
        A numpy ``Generator`` (used, and advanced, in place) or an integer seed.
    symmetric:
        Draw symmetric noise over the last two axes (which must be equal): i.i.d. N(0, σ²) on
        the entries i <= j, mirrored; exactly d(d + 1)/2 normals per matrix are drawn.
        Otherwise every entry gets i.i.d. N(0, σ²) noise.
    steps:
        The number of items the counter may take (``None``: unbounded).
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
        if raw.shape != self.shape:
            raise ValueError(f"item {index} must have shape {self.shape}, got shape {raw.shape}")
        x = np.array(raw, dtype=np.float64)
        finite = np.isfinite(x)
        if not finite.all():
            where = tuple(int(i) for i in np.argwhere(~finite)[0])
            raise ValueError(f"item {index} must be finite, got {x[where]!r} at index {where}")
        return x

    def _noise(self) -> np.ndarray:
        sigma = self.sigma
        if self._triu is None:
            if np.ndim(sigma):
                sigma = np.asarray(sigma).reshape(np.shape(sigma) + (1,) * (len(self.shape) - 1))
            return sigma * self._rng.standard_normal(self.shape)
        rows, cols = self._triu
        upper = self._rng.standard_normal(self.shape[:-2] + (rows.size,))
        if np.ndim(sigma):
            sigma = np.asarray(sigma).reshape(np.shape(sigma) + (1,) * (len(self.shape) - 2))
        upper *= sigma
        out = np.empty(self.shape)
        out[..., rows, cols] = upper
        out[..., cols, rows] = upper
        return out

    def add(self, item: np.ndarray | Sequence[Any] | float) -> None:
        """Insert the next item (an array of ``shape`` with finite entries)."""
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
        """The noisy sum of all items so far (zeros before any item); draws no new noise."""
        if self._prefix is None:
            total = np.zeros(self.shape)
            for noisy in reversed(self._noisy):  # highest level first: the items in order
                if noisy is not None:
                    total += noisy
            self._prefix = total
        return self._prefix.copy()

    def __repr__(self) -> str:
        return (
            f"BinaryCounter(shape={self.shape}, sigma={self.sigma!r}, symmetric={self.symmetric}, "
            f"steps={self.steps}, t={self._t})"
        )
