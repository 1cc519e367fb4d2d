"""The binary counting mechanism (tree aggregation): which items its p-sums cover, and how many.

The binary mechanism of Chan, Shi and Song (2011, Algorithm 2) releases running sums of a
stream x_1, x_2, … with noise that grows only logarithmically in the stream length.

Every p-sum is noised once; the prefix 1 … t sums popcount(t) of them. Under a release schedule
(:data:`SCHEDULES`: ``after-each`` or the RL seeds' ``before-episode``) the functions here count the p-sums that
hold an item (m = bit_length(T′)) or make a prefix, and bound a prefix's noise. The algorithm, the schedules and
the counts, derived: docs/explanation/neighbours.md (The binary counter's counts).

The privacy of a counter is in :mod:`dpkit.accountant.tree`; the working counter is
:class:`~dpkit.accountant.binary_counter.BinaryCounter`.
"""

from __future__ import annotations

import enum
import math
from fractions import Fraction

import numpy as np

from .numerics import round_up
from .validation import (
    check_count,
    check_index,
    check_member,
    check_nonnegative,
    check_probability,
    check_real,
    enum_values,
)

__all__ = [
    "SCHEDULES",
    "Schedule",
    "max_psums_per_item",
    "max_psums_per_prefix",
    "paper_depth",
    "prefix_decomposition",
    "prefix_noise_variance",
    "psum_interval",
    "psums_per_item",
    "released_prefixes",
    "symmetric_noise_norm_bound",
    "worst_item",
]


class Schedule(enum.StrEnum):
    """The release schedules of the binary mechanism (see the module docstring)."""

    AFTER_EACH = "after-each"
    BEFORE_EPISODE = "before-episode"


#: The values of :class:`Schedule`.
SCHEDULES: tuple[str, ...] = enum_values(Schedule)


def released_prefixes(steps: int, *, schedule: Schedule | str = "after-each") -> int:
    """T′: the number of released prefixes (1 … T′) of a counter over ``steps`` items.

    ``steps`` for ``after-each``, ``steps − 1`` for ``before-episode``.

    Args:
        steps: T, the number of items (an integer >= 1).
        schedule: "after-each" or "before-episode" (:data:`SCHEDULES`); "after-each" by default.

    Returns:
        T′.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: T below 1 or an unknown schedule.

    Examples:
        >>> released_prefixes(8, schedule="after-each"), released_prefixes(8, schedule="before-episode")
        (8, 7)
    """
    steps = check_count("steps", steps)
    schedule = check_member("schedule", schedule, Schedule)
    return steps if schedule == Schedule.AFTER_EACH else steps - 1


def psums_per_item(steps: int, *, schedule: Schedule | str = "after-each") -> np.ndarray:
    """For each item s = 1 … ``steps``, the number of released p-sums that contain it.

    Item s lies in the p-sums created at t = s, s + lowbit(s), … (its Fenwick update path) up
    to the last released prefix T′. Vectorised: one pass per tree level, none per item.

    Args:
        steps: T, the number of items (an integer >= 1).
        schedule: "after-each" or "before-episode" (:data:`SCHEDULES`); "after-each" by default.

    Returns:
        An int array of T counts, item 1 first.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: T below 1 or an unknown schedule.

    Examples:
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


def max_psums_per_item(steps: int, *, schedule: Schedule | str = "after-each") -> int:
    """m: the largest number of released p-sums that contain one item, bit_length(T′).

    That is ⌊log2 T′⌋ + 1, or 0 when nothing is released (T′ = 0).

    Args:
        steps: T, the number of items (an integer >= 1).
        schedule: "after-each" or "before-episode" (:data:`SCHEDULES`); "after-each" by default.

    Returns:
        m.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: T below 1 or an unknown schedule.

    Examples:
        >>> max_psums_per_item(8, schedule="after-each"), max_psums_per_item(8, schedule="before-episode")
        (4, 3)
    """
    return released_prefixes(steps, schedule=schedule).bit_length()


def worst_item(steps: int, *, schedule: Schedule | str = "after-each") -> int:
    """The first item (1-based) lying in :func:`max_psums_per_item` released p-sums: always item 1.

    Raises ``ValueError`` when nothing is released (``before-episode`` with one step).

    Args:
        steps: T, the number of items (an integer >= 1).
        schedule: "after-each" or "before-episode" (:data:`SCHEDULES`); "after-each" by default.

    Returns:
        1.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: T below 1 or an unknown schedule, or nothing released.
    """
    if released_prefixes(steps, schedule=schedule) == 0:
        raise ValueError(
            f"no item is in any released p-sum: with schedule '{schedule}' and steps = {steps!r} nothing is released"
        )
    return 1


def max_psums_per_prefix(steps: int, *, schedule: Schedule | str = "after-each") -> int:
    """The largest number of p-sums summed into one released prefix: max popcount(t), t <= T′.

    That is bit_length(T′ + 1) − 1 (0 when nothing is released).

    Args:
        steps: T, the number of items (an integer >= 1).
        schedule: "after-each" or "before-episode" (:data:`SCHEDULES`); "after-each" by default.

    Returns:
        The largest popcount(t) over the released prefixes t.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: T below 1 or an unknown schedule.

    Examples:
        >>> max_psums_per_prefix(7), max_psums_per_prefix(8)
        (3, 3)
    """
    return (released_prefixes(steps, schedule=schedule) + 1).bit_length() - 1


def psum_interval(t: int) -> tuple[int, int]:
    """The items (first, last) covered by the p-sum created when item ``t`` arrives.

    Args:
        t: the item (an integer >= 1).

    Returns:
        (t − lowbit(t) + 1, t).

    Raises:
        ArgumentTypeError: t not a number.
        ValueError: t not an integer >= 1.

    Examples:
        >>> psum_interval(12)
        (9, 12)
    """
    t = check_count("t", t)
    return t - (t & -t) + 1, t


def prefix_decomposition(t: int) -> list[tuple[int, int]]:
    """The p-sums (as item intervals, in item order) whose noisy values sum to the prefix 1 … ``t``.

    One per set bit of ``t``; empty for ``t = 0``.

    Args:
        t: the prefix's last item (an integer >= 0).

    Returns:
        The intervals (first, last).

    Raises:
        ArgumentTypeError: t not a number.
        ValueError: t not an integer >= 0.

    Examples:
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

    Args:
        steps: K, the number of items (an integer >= 1).
        base: the logarithm's base (> 1); 2 by default.

    Returns:
        m = ⌈log_base K⌉.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: K below 1, or a base not finite or not above 1.

    Examples:
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
# Utility
# ------------------------------------------------------------------------------------------


def prefix_noise_variance(t: int, sigma: float) -> float:
    """Variance of each entry of the noise of the prefix 1 … ``t``: popcount(t)·σ².

    Args:
        t: the prefix's last item (an integer >= 0).
        sigma: the noise σ per p-sum (>= 0).

    Returns:
        popcount(t)·σ².

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: t negative or not an integer, or σ negative or not finite.

    Examples:
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

    Args:
        sigma: σ, the noise per entry of each matrix (>= 0).
        psums: m, the number of matrices summed (an integer >= 0).
        dim: d, the matrices' dimension (an integer >= 1).
        failure_probability: p, in (0, 1).

    Returns:
        The bound, rounded up (0 when m = 0 or σ = 0).

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: σ negative, m negative, d below 1, or p outside (0, 1).
    """
    sigma = check_nonnegative("sigma", sigma)
    psums = check_index("psums", psums)
    dim = check_count("dim", dim)
    p = check_probability("failure_probability", failure_probability)
    if psums == 0 or sigma == 0.0:
        return 0.0
    return round_up(sigma * math.sqrt(psums) * (4.0 * math.sqrt(dim) + math.sqrt(8.0 * math.log(2.0 / p))))
