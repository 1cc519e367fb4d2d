"""Exact (ε, δ) profiles of single releases that have a closed form: Laplace, randomized response, (ε₀, δ₀)-DP.

Each profile is the hockey-stick divergence δ(ε) = sup_S P(S) − e^ε Q(S) of the two worst
neighbouring output distributions P, Q, and its inverse ε(δ) (the smallest ε with δ(ε) <= δ), for
Laplace, k-ary randomized response (replace-one) and a release known only to be (ε₀, δ₀)-DP (Kairouz, Oh
and Viswanath 2015); the profiles, derived: docs/FORMULAS.md §11 (Closed-form profiles).

All values are computed in mpmath at 50 digits and rounded up to the next double (δ and ε),
so no value is below the truth. Ends: δ(+inf) = 0 (every mechanism is (+inf, 0)-DP by
convention), ε(1) = 0, ε(0) is the pure ε (+inf when the mechanism is not pure DP).
"""

from __future__ import annotations

import math
from typing import Any

from .validation import check_count, check_extended_nonnegative, check_unit_interval

__all__ = [
    "laplace_delta",
    "laplace_epsilon",
    "randomized_response_delta",
    "randomized_response_epsilon",
    "epsilon_delta_delta",
    "epsilon_delta_epsilon",
    "laplace_delta_unchecked",
    "laplace_epsilon_unchecked",
    "randomized_response_delta_unchecked",
    "randomized_response_epsilon_unchecked",
    "epsilon_delta_delta_unchecked",
    "epsilon_delta_epsilon_unchecked",
]

_DPS = 50


def _up(x: Any) -> float:
    """The smallest double >= the mpmath number ``x`` (x finite or ±inf)."""
    import mpmath

    if mpmath.isinf(x):
        return math.inf if x > 0 else -math.inf
    f = float(x)
    if mpmath.mpf(f) < x:
        f = math.nextafter(f, math.inf)
    return f


# --------------------------------------------------------------------------------------------
# Laplace


def laplace_delta(epsilon0: float, epsilon: float) -> float:
    """δ(ε) of one Laplace release with pure ε₀ (= sensitivity/scale): max(0, 1 − e^{(ε − ε₀)/2}), rounded up.

    ``epsilon0`` in [0, +inf] (+inf: no noise, δ = 1 at every finite ε); ``epsilon`` in [0, +inf].

    Args:
        epsilon0: ε₀, the release's pure ε (>= 0, +inf allowed).
        epsilon: the ε (>= 0, +inf allowed).

    Returns:
        δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ε₀ or ε negative or NaN.

    Examples:
        >>> laplace_delta(1.0, 1.0)
        0.0
        >>> round(laplace_delta(1.0, 0.0), 12)  # total variation 1 − e^{−1/2}
        0.393469340287
    """
    epsilon0 = check_extended_nonnegative("epsilon0", epsilon0)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    return laplace_delta_unchecked(epsilon0, epsilon)


def laplace_delta_unchecked(epsilon0: float, epsilon: float) -> float:
    """Unvalidated :func:`laplace_delta` (ε0, ε trusted).

    Args:
        epsilon0: ε₀, the release's pure ε (>= 0, +inf allowed; not checked).
        epsilon: the ε (>= 0, +inf allowed; not checked).

    Returns:
        δ, rounded up.
    """
    import mpmath

    if epsilon == math.inf or epsilon >= epsilon0:
        return 0.0
    if epsilon0 == math.inf:
        return 1.0
    with mpmath.workdps(_DPS):
        return min(1.0, _up(-mpmath.expm1((mpmath.mpf(epsilon) - mpmath.mpf(epsilon0)) / 2)))


def laplace_epsilon(epsilon0: float, delta: float) -> float:
    """ε(δ) of one Laplace release with pure ε₀: max(0, ε₀ + 2 log(1 − δ)), rounded up (ε(0) = ε₀).

    Args:
        epsilon0: ε₀, the release's pure ε (>= 0, +inf allowed).
        delta: the δ, in [0, 1].

    Returns:
        ε, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ε₀ negative or NaN, or δ outside [0, 1].

    Examples:
        >>> laplace_epsilon(2.0, 0.0)
        2.0
        >>> laplace_epsilon(2.0, 1.0)
        0.0
    """
    epsilon0 = check_extended_nonnegative("epsilon0", epsilon0)
    delta = check_unit_interval("delta", delta)
    return laplace_epsilon_unchecked(epsilon0, delta)


def laplace_epsilon_unchecked(epsilon0: float, delta: float) -> float:
    """Unvalidated :func:`laplace_epsilon` (ε0, δ trusted).

    Args:
        epsilon0: ε₀, the release's pure ε (>= 0, +inf allowed).
        delta: the δ, in [0, 1].

    Returns:
        ε, rounded up.
    """
    import mpmath

    if delta == 1.0 or epsilon0 == 0.0:
        return 0.0
    if epsilon0 == math.inf:
        return math.inf
    if delta == 0.0:
        return epsilon0
    with mpmath.workdps(_DPS):
        return max(0.0, _up(mpmath.mpf(epsilon0) + 2 * mpmath.log1p(-mpmath.mpf(delta))))


# --------------------------------------------------------------------------------------------
# randomized response


def _rr_masses(noise_parameter: float, num_buckets: int) -> tuple[Any, Any]:
    """(a, b): the probability of the true bucket and of any one other bucket, in mpmath."""
    import mpmath

    p, k = mpmath.mpf(noise_parameter), mpmath.mpf(num_buckets)
    return 1 - p * (k - 1) / k, p / k


def randomized_response_delta(noise_parameter: float, epsilon: float, *, num_buckets: int = 2) -> float:
    """δ(ε) of one k-ary randomized response (replace-one): max(0, a − e^ε b), rounded up.

    a = 1 − p(k − 1)/k, b = p/k. ``noise_parameter`` p in [0, 1] (0: the true value, δ = 1 at
    finite ε; 1: a uniform draw, δ = 0), ``num_buckets`` k >= 1.

    Args:
        noise_parameter: p, the probability of a uniform draw, in [0, 1].
        epsilon: the ε (>= 0, +inf allowed).
        num_buckets: k, the number of buckets (an integer >= 1); 2 by default.

    Returns:
        δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: p outside [0, 1], ε negative, or k below 1.

    Examples:
        >>> randomized_response_delta(0.5, 0.0)  # total variation a − b = 1 − p
        0.5
    """
    p = check_unit_interval("noise_parameter", noise_parameter)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    k = check_count("num_buckets", num_buckets)
    return randomized_response_delta_unchecked(p, k, epsilon)


def randomized_response_delta_unchecked(p: float, k: int, epsilon: float) -> float:
    """Unvalidated :func:`randomized_response_delta`: p the noise parameter, k the buckets (trusted).

    Args:
        p: the noise parameter (not checked).
        k: the number of buckets (not checked).
        epsilon: the ε (>= 0, +inf allowed).

    Returns:
        δ, rounded up.
    """
    import mpmath

    if epsilon == math.inf or k == 1 or p == 1.0:
        return 0.0
    if p == 0.0:
        return 1.0
    with mpmath.workdps(_DPS):
        a, b = _rr_masses(p, k)
        value = a - mpmath.exp(mpmath.mpf(epsilon)) * b
        return 0.0 if value <= 0 else min(1.0, _up(value))


def randomized_response_epsilon(noise_parameter: float, delta: float, *, num_buckets: int = 2) -> float:
    """ε(δ) of one k-ary randomized response (replace-one): log((a − δ)/b), or 0 once δ >= a − b; rounded up.

    ε(0) is the pure ε₀ = log(1 + k(1 − p)/p).

    Args:
        noise_parameter: p, the probability of a uniform draw, in [0, 1].
        delta: the δ, in [0, 1].
        num_buckets: k, the number of buckets (an integer >= 1); 2 by default.

    Returns:
        ε, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: p or δ outside [0, 1], or k below 1.

    Examples:
        >>> round(randomized_response_epsilon(0.5, 0.0), 12)  # log 3
        1.098612288668
    """
    p = check_unit_interval("noise_parameter", noise_parameter)
    delta = check_unit_interval("delta", delta)
    k = check_count("num_buckets", num_buckets)
    return randomized_response_epsilon_unchecked(p, k, delta)


def randomized_response_epsilon_unchecked(p: float, k: int, delta: float) -> float:
    """Unvalidated :func:`randomized_response_epsilon`: p the noise parameter, k the buckets (trusted).

    Args:
        p: the noise parameter (not checked).
        k: the number of buckets (not checked).
        delta: the δ, in [0, 1].

    Returns:
        ε, rounded up.
    """
    import mpmath

    if delta == 1.0 or k == 1 or p == 1.0:
        return 0.0
    if p == 0.0:
        return math.inf
    with mpmath.workdps(_DPS):
        a, b = _rr_masses(p, k)
        rest = a - mpmath.mpf(delta)
        if rest <= b:
            return 0.0
        return max(0.0, _up(mpmath.log(rest / b)))


# --------------------------------------------------------------------------------------------
# a release known only to be (ε₀, δ₀)-DP


def epsilon_delta_delta(epsilon0: float, delta0: float, epsilon: float) -> float:
    """δ(ε) of the worst (ε₀, δ₀)-DP release: δ₀ + (1 − δ₀)(e^{ε₀} − e^ε)₊/(1 + e^{ε₀}), rounded up.

    Args:
        epsilon0: ε₀, the release's pure ε (>= 0, +inf allowed).
        delta0: δ₀, the release's δ, in [0, 1].
        epsilon: the ε (>= 0, +inf allowed).

    Returns:
        δ, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ε₀ or ε negative, or δ₀ outside [0, 1].

    Examples:
        >>> epsilon_delta_delta(1.0, 1e-6, 2.0)
        1e-06
    """
    epsilon0 = check_extended_nonnegative("epsilon0", epsilon0)
    delta0 = check_unit_interval("delta0", delta0)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    return epsilon_delta_delta_unchecked(epsilon0, delta0, epsilon)


def epsilon_delta_delta_unchecked(epsilon0: float, delta0: float, epsilon: float) -> float:
    """Unvalidated :func:`epsilon_delta_delta` (ε0, δ0, ε trusted).

    Args:
        epsilon0: ε₀, the release's pure ε (>= 0, +inf allowed).
        delta0: δ₀, the release's δ, in [0, 1].
        epsilon: the ε (>= 0, +inf allowed).

    Returns:
        δ, rounded up.
    """
    import mpmath

    if epsilon == math.inf:
        return 0.0
    if epsilon0 == math.inf or delta0 == 1.0:
        return 1.0
    if epsilon >= epsilon0:
        return delta0
    with mpmath.workdps(_DPS):
        e0, d0 = mpmath.mpf(epsilon0), mpmath.mpf(delta0)
        # (e^{ε₀} − e^ε)/(1 + e^{ε₀}) = (1 − e^{ε − ε₀})/(1 + e^{−ε₀}): no overflow for huge ε₀
        frac = -mpmath.expm1(mpmath.mpf(epsilon) - e0) / (1 + mpmath.exp(-e0))
        return min(1.0, _up(d0 + (1 - d0) * frac))


def epsilon_delta_epsilon(epsilon0: float, delta0: float, delta: float) -> float:
    """ε(δ) of the worst (ε₀, δ₀)-DP release, rounded up: +inf below δ₀, ε₀ at δ₀, 0 from δ(0) on.

    Args:
        epsilon0: ε₀, the release's pure ε (>= 0, +inf allowed).
        delta0: δ₀, the release's δ, in [0, 1].
        delta: the δ, in [0, 1].

    Returns:
        ε, rounded up.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ε₀ negative, or δ₀ or δ outside [0, 1].

    Examples:
        >>> epsilon_delta_epsilon(1.0, 1e-6, 1e-6)
        1.0
    """
    epsilon0 = check_extended_nonnegative("epsilon0", epsilon0)
    delta0 = check_unit_interval("delta0", delta0)
    delta = check_unit_interval("delta", delta)
    return epsilon_delta_epsilon_unchecked(epsilon0, delta0, delta)


def epsilon_delta_epsilon_unchecked(epsilon0: float, delta0: float, delta: float) -> float:
    """Unvalidated :func:`epsilon_delta_epsilon` (ε0, δ0, δ trusted).

    Args:
        epsilon0: ε₀, the release's pure ε (>= 0, +inf allowed).
        delta0: δ₀, the release's δ, in [0, 1].
        delta: the δ, in [0, 1].

    Returns:
        ε, rounded up.
    """
    import mpmath

    if delta == 1.0 or epsilon0 == 0.0 and delta >= delta0:
        return 0.0
    if delta < delta0 or epsilon0 == math.inf or delta0 == 1.0:
        return math.inf
    if delta == delta0:
        return epsilon0
    with mpmath.workdps(_DPS):
        e0, d0, d = mpmath.mpf(epsilon0), mpmath.mpf(delta0), mpmath.mpf(delta)
        # solve (1 − e^{ε − ε₀}) = (δ − δ₀)(1 + e^{−ε₀})/(1 − δ₀) for ε
        rhs = (d - d0) * (1 + mpmath.exp(-e0)) / (1 - d0)
        if rhs >= 1 - mpmath.exp(-e0):  # δ >= δ(0)
            return 0.0
        return max(0.0, _up(e0 + mpmath.log1p(-rhs)))
