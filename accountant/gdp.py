"""Gaussian differential privacy (μ-GDP): the exact privacy of the Gaussian mechanism.

A Gaussian mechanism with ℓ2 sensitivity Δ and noise N(0, σ²I) is μ-GDP with μ = Δ/σ, and
an adaptive composition of Gaussian mechanisms is μ-GDP with μ² = Σ Δᵢ²/σᵢ² (Dong, Roth and
Su 2019). Its exact (ε, δ) profile is the analytic Gaussian mechanism's (Balle and Wang 2018):

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

No (ε, δ) claim for the mechanism can be smaller. δ is rounded up, ε up and the largest μ down;
the log-space evaluation and the answered ends are in docs/FORMULAS.md (Evaluating μ-GDP).
"""

from __future__ import annotations

import math

from scipy import special

from .numerics import conservative_delta, feasible_root, log_delta_margin, round_down, round_up
from .validation import check_extended_nonnegative, check_positive, check_unit_interval

__all__ = [
    "gdp_log_delta",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "gdp_delta_unchecked",
    "gdp_epsilon_unchecked",
    "gdp_mu_unchecked",
]

_SQRT1_2 = math.sqrt(0.5)
_LN2 = math.log(2.0)
_EPS = 2.0**-52
#: Largest relative error tolerated in a double evaluation of δ before mpmath takes over.
_MAX_RELATIVE_ERROR = 1e-12
#: Beyond this μ (ε(δ) > ~5e299) the squares of δ(ε)'s evaluation may overflow: δ(ε) is reported as 1 there
#: (conservative), and zCDP's ρ = μ²/2 is read at most here. ε(δ) and the calibrated μ go on to the largest μ
#: whose ε is a double (about 1.9e154, by the tail bound, computed without squaring μ). The documented working range
#: is μ <= 1e3.
MU_OVERFLOW = 1e150
#: From this μ on, ε(δ) and the calibrated μ are read from the Gaussian tail bound ε = μ²/2 + μz, z = sqrt(2 ln 1/δ)
#: (:func:`_tail_epsilon`, :func:`_tail_mu`): sound (δ(ε) <= Φ(−z) <= δ/2, checked in exact arithmetic) and within
#: 2(z − Φ⁻¹(1 − δ))/μ < 1e-14 relative of the exact figure, where evaluating the exact δ needs mpmath at hundreds
#: of digits (seconds a call).
TAIL_MU = 1e15
#: Every search loop here stops after this many steps (so every call terminates).
_MAX_STEPS = 1200
_LOG_MAX = math.log(1.7e308)


def _log1mexp(d: float) -> float:
    """log(1 − e^d) for d < 0, accurate on both sides of −ln 2."""
    return math.log(-math.expm1(d)) if d > -_LN2 else math.log1p(-math.exp(d))


def _log_delta_mpmath(mu: float, epsilon: float, digits_lost: float) -> float:
    """log δ(ε) for μ-GDP with mpmath, at 30 digits beyond those the difference loses."""
    import mpmath  # imported where used: only the rare cancellation cases need it

    dps = 30 + int(math.ceil(min(max(0.0, digits_lost), 2000.0)))  # bounded precision (and time)
    for _ in range(6):
        with mpmath.workdps(dps):
            m, e = mpmath.mpf(mu), mpmath.mpf(epsilon)
            a = -e / m + m / 2
            b = -e / m - m / 2
            value = mpmath.ncdf(a) - mpmath.exp(e) * mpmath.ncdf(b)
            if value > 0:
                return float(mpmath.log(value))
        dps *= 2
    return -math.inf  # the difference is below every precision tried: δ is 0 to within 10^-(dps)


def gdp_log_delta(mu: float, epsilon: float) -> float:
    """Exact log δ(ε) of a μ-GDP mechanism (not rounded; ε >= 0, μ > 0 trusted).

    This is the unvalidated kernel used by the root-finds; use :func:`gdp_delta` for a
    validated, conservatively rounded δ.

    Args:
        mu: the GDP parameter μ (> 0, not checked).
        epsilon: the ε (>= 0, +inf allowed; not checked).

    Returns:
        log δ(ε), −inf where δ is 0 in doubles.
    """
    a = -epsilon / mu + mu / 2.0
    b = -epsilon / mu - mu / 2.0
    if not a > -1e154:  # ε/μ overflows or a²/2 would: log δ <= log Φ(a) < -1e307, i.e. -inf in doubles
        return -math.inf
    if a < 0.0:
        ea = special.erfcx(-a * _SQRT1_2)
        eb = special.erfcx(-b * _SQRT1_2)
        diff = ea - eb
        if diff > 0.0 and 4.0 * _EPS * ea / diff <= _MAX_RELATIVE_ERROR:
            return -0.5 * a * a - _LN2 + math.log(diff)
        gap = diff / ea if diff > 0.0 else mu / (1.0 + abs(b))
    else:
        la = float(special.log_ndtr(a))
        lb = epsilon + float(special.log_ndtr(b))
        d = lb - la
        if d < 0.0:
            one_minus = -math.expm1(d)
            if 4.0 * _EPS * (1.0 + abs(la) + abs(lb)) / one_minus <= _MAX_RELATIVE_ERROR:
                return la + _log1mexp(d)
            gap = one_minus
        else:
            gap = mu / (1.0 + abs(b))
    gap = max(gap, mu / (1.0 + abs(b)) * 1e-3, 1e-300)
    return _log_delta_mpmath(mu, epsilon, -math.log10(gap))


def gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of a μ-GDP mechanism (μ > 0, 0 <= ε <= +inf), rounded up.

    Args:
        mu: the GDP parameter μ = Δ/σ (> 0).
        epsilon: the ε (>= 0; +inf gives δ = 0, 0 gives 2Φ(μ/2) − 1).

    Returns:
        δ(ε), rounded up.

    Raises:
        ArgumentTypeError: μ or ε not a real number.
        ValueError: μ not positive and finite, or ε negative or NaN.

    Examples:
        >>> round(gdp_delta(1.0, 1.0), 6)
        0.126937
        >>> round(gdp_delta(1.0, 0.0), 6)  # 2Φ(μ/2) − 1
        0.382925
    """
    mu = check_positive("mu", mu)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    return gdp_delta_unchecked(mu, epsilon)


def gdp_delta_unchecked(mu: float, epsilon: float) -> float:
    """Unvalidated :func:`gdp_delta` (μ, ε trusted).

    Args:
        mu: the GDP parameter μ (> 0, not checked).
        epsilon: the ε (>= 0, +inf allowed; not checked).

    Returns:
        δ(ε), rounded up (1 beyond :data:`MU_OVERFLOW`).
    """
    if epsilon == math.inf:
        return 0.0
    if mu > MU_OVERFLOW:
        return 1.0
    return conservative_delta(gdp_log_delta(mu, epsilon))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The smallest ε with δ(ε) <= ``delta`` for a μ-GDP mechanism, rounded up.

    Args:
        mu: the GDP parameter μ = Δ/σ (> 0).
        delta: the target δ, in [0, 1].

    Returns:
        ε, rounded up: 0.0 when the mechanism is already (0, δ)-DP (δ >= 2Φ(μ/2) − 1, δ = 1
        included) and +inf at δ = 0.

    Raises:
        ArgumentTypeError: μ or δ not a real number.
        ValueError: μ not positive and finite, or δ outside [0, 1].
    """
    mu = check_positive("mu", mu)
    delta = check_unit_interval("delta", delta)
    return gdp_epsilon_unchecked(mu, delta)


def gdp_epsilon_unchecked(mu: float, delta: float) -> float:
    """Unvalidated :func:`gdp_epsilon` (μ, δ trusted).

    Args:
        mu: the GDP parameter μ (> 0, not checked).
        delta: the target δ, in [0, 1] (not checked).

    Returns:
        ε, rounded up (as :func:`gdp_epsilon`).
    """
    if delta == 1.0:  # every mechanism is (0, 1)-DP
        return 0.0
    if delta == 0.0:
        return math.inf
    if mu >= TAIL_MU:  # +inf where ε is beyond the doubles
        return _tail_epsilon(mu, delta)
    target = math.log(delta)
    target -= log_delta_margin(target)
    if gdp_log_delta(mu, 0.0) <= target:
        return 0.0

    def g(log_eps: float) -> float:
        return gdp_log_delta(mu, math.exp(log_eps)) - target

    # Start from the Gaussian-tail approximation ε ≈ μ²/2 + μ·sqrt(2 ln(1/δ)).
    guess = max(mu * mu / 2.0 + mu * math.sqrt(2.0 * -math.log(delta)), 1e-300)
    hi = math.log(guess)
    for _ in range(_MAX_STEPS):  # bounded: ε grows by 4x a step up to the largest double
        if g(hi) <= 0.0:
            break
        hi += math.log(4.0)
        if hi > _LOG_MAX:
            return math.inf  # conservative: no finite ε found
    else:
        return math.inf
    lo = hi - math.log(4.0)
    while g(lo) <= 0.0:
        hi, lo = lo, lo - math.log(4.0)
        if lo < math.log(1e-300):
            return round_up(math.exp(hi))
    return round_up(math.exp(feasible_root(g, hi, lo)))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest μ such that μ-GDP implies (ε, δ)-DP, rounded down (0 <= ε <= +inf, 0 <= δ <= 1).

    Args:
        epsilon: the target ε (>= 0, +inf allowed).
        delta: the target δ, in [0, 1].

    Returns:
        μ, rounded down: 0.0 at δ = 0 and +inf when the target holds for every mechanism
        (δ = 1 or ε = +inf).

    Raises:
        ArgumentTypeError: ε or δ not a real number.
        ValueError: ε negative or NaN, or δ outside [0, 1].
    """
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    delta = check_unit_interval("delta", delta)
    return gdp_mu_unchecked(epsilon, delta)


def gdp_mu_unchecked(epsilon: float, delta: float) -> float:
    """Unvalidated :func:`gdp_mu` (ε, δ trusted).

    Args:
        epsilon: the target ε (>= 0, +inf allowed; not checked).
        delta: the target δ, in [0, 1] (not checked).

    Returns:
        μ, rounded down (as :func:`gdp_mu`).

    Raises:
        ValueError: no μ > 0 meets the target (not reached for a valid target).
    """
    if epsilon == math.inf or delta == 1.0:
        return math.inf
    if delta == 0.0:
        return 0.0
    if epsilon == 0.0:  # δ(0) = 2Φ(μ/2) − 1: the closed form starts the search below
        guess = round_down(2.0 * float(special.ndtri(0.5 + 0.5 * delta)))
        return _step_down_mu(guess, 0.0, delta)
    target = math.log(delta)
    target -= log_delta_margin(target)

    def g(log_mu: float) -> float:
        return gdp_log_delta(math.exp(log_mu), epsilon) - target

    z = math.sqrt(2.0 * -math.log(delta))
    # solves ε = μ²/2 + μ z (hypot: no overflow for ε near the largest double; no underflow to 0)
    guess = epsilon / (z + math.hypot(z, math.sqrt(2.0) * math.sqrt(epsilon)))
    if 2.0 * guess >= TAIL_MU:  # the root is 2 × guess (the search below starts at half of it)
        return _tail_mu(epsilon, delta)
    ok = math.log(max(guess, 5e-324))
    for _ in range(_MAX_STEPS):  # bounded: μ shrinks by 4x a step
        if g(ok) <= 0.0:
            break
        ok -= math.log(4.0)
    else:
        raise ValueError(f"no mu > 0 gives (epsilon, delta) = ({epsilon!r}, {delta!r})")
    bad = ok + math.log(4.0)
    for _ in range(_MAX_STEPS):
        if not g(bad) <= 0.0:
            break
        ok, bad = bad, bad + math.log(4.0)
        if bad > _LOG_MAX:
            return round_down(math.exp(ok))  # a smaller μ is always sound
    else:
        return round_down(math.exp(ok))
    return round_down(math.exp(feasible_root(g, ok, bad)))


def _tail_z(delta: float) -> float:
    """z = sqrt(2 ln(1/δ)) rounded up (0 < δ < 1): Φ(−z) <= e^{−z²/2}/2 <= δ/2."""
    return round_up(math.sqrt(2.0 * -math.log(delta)), ulps=8)


def _below_tail(mu: float, epsilon: float, z: float) -> bool:
    """Whether μ/2 − ε/μ <= −z in exact arithmetic: then δ(ε) <= Φ(μ/2 − ε/μ) <= Φ(−z) for μ-GDP."""
    from fractions import Fraction

    m = Fraction(mu)
    return m / 2 - Fraction(epsilon) / m <= -Fraction(z)


def _tail_epsilon(mu: float, delta: float) -> float:
    """ε = μ²/2 + μz = μ(μ/2 + z) rounded up until the tail bound holds exactly (μ >= :data:`TAIL_MU`); +inf where
    it is beyond the doubles (μ above about 1.9e154)."""
    z = _tail_z(delta)
    epsilon = round_up(mu * (mu / 2.0 + z))  # not μ·μ/2: that overflows from μ = 1.3e154 on, ε from 1.9e154 only
    for _ in range(_MAX_STEPS):
        if epsilon == math.inf:
            return math.inf
        if _below_tail(mu, epsilon, z):
            return epsilon
        epsilon = round_up(epsilon, ulps=64)
    return math.inf  # pragma: no cover - the first candidate is within a few ulps


def _tail_mu(epsilon: float, delta: float) -> float:
    """The μ solving ε = μ²/2 + μz, rounded down until the tail bound holds exactly (ε finite: μ is at most about
    1.9e154, a double)."""
    z = _tail_z(delta)
    # μ = 2ε/(z + sqrt(z² + 2ε)) (the root of μ²/2 + μz − ε, without cancellation or overflow)
    mu = round_down(2.0 * (epsilon / (z + math.hypot(z, math.sqrt(2.0) * math.sqrt(epsilon)))))
    for _ in range(_MAX_STEPS):
        if _below_tail(mu, epsilon, z):
            return mu
        mu = round_down(mu, ulps=64)
    return 0.0  # pragma: no cover - μ = 0 is always sound


def _step_down_mu(mu: float, epsilon: float, delta: float) -> float:
    """``mu`` stepped down until μ-GDP implies (ε, δ)-DP by :func:`gdp_log_delta` with its margin."""
    target = math.log(delta)
    target -= log_delta_margin(target)
    step = 64.0 * _EPS
    for _ in range(_MAX_STEPS):  # bounded: the relative step doubles up to halving
        if not mu > 0.0 or gdp_log_delta(mu, epsilon) <= target:
            return max(mu, 0.0)
        mu, step = mu * (1.0 - step), min(2.0 * step, 0.5)
    return 0.0  # μ = 0 is always sound
