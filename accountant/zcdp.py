"""Zero-concentrated differential privacy (Bun and Steinke 2016).

A mechanism is ρ-zCDP when its RDP curve is bounded by αρ for every α > 1; compositions add
ρ, and a Gaussian mechanism is ρ-zCDP with ρ = Δ²/(2σ²). Conversions to (ε, δ)-DP:

* ``bun-steinke``   ε = ρ + 2 sqrt(ρ ln(1/δ))  (Bun–Steinke Prop. 1.3; Mironov's conversion
  minimised over continuous α, so no RDP-on-a-grid bound with Mironov's formula beats it);
* ``rdp-optimal``   the improved RDP conversion (Canonne, Kamath, Steinke 2020) minimised over
  continuous α > 1 — valid for every ρ-zCDP mechanism and tighter;
* ``gaussian-exact`` valid only when the ρ comes from Gaussian mechanisms: such a composition
  is μ-GDP with μ = sqrt(2ρ), whose exact profile is :mod:`dpkit.accountant.gdp`'s.

Order (same ρ, δ): gaussian-exact <= rdp-optimal <= bun-steinke. Trivial ends are answered, not refused:
ε(δ = 0) = +inf, ε(δ = 1) = 0, δ(ε = +inf) = 0, and ρ = 0 at δ = 0, ρ = +inf at δ = 1 or ε = +inf;
δ(ε = 0) and ρ(ε = 0) are each conversion's own.
"""

from __future__ import annotations

import math
from typing import Literal

from .gdp import gdp_delta_unchecked, gdp_epsilon_unchecked, gdp_mu_unchecked
from .numerics import feasible_root, round_down
from .rdp import linear_rdp_delta_unchecked, linear_rdp_epsilon_unchecked
from .validation import check_choice, check_extended_nonnegative, check_positive, check_unit_interval

__all__ = [
    "ZCDP_CONVERSIONS",
    "zcdp_epsilon",
    "zcdp_delta",
    "zcdp_rho",
    "zcdp_epsilon_unchecked",
    "zcdp_delta_unchecked",
    "zcdp_rho_unchecked",
]

ZcdpConversionName = Literal["bun-steinke", "rdp-optimal", "gaussian-exact"]
ZCDP_CONVERSIONS: tuple[ZcdpConversionName, ...] = ("bun-steinke", "rdp-optimal", "gaussian-exact")
#: Every search loop here stops after this many steps (so every call terminates).
_MAX_STEPS = 400
_LARGEST = 1.7976931348623157e308


def zcdp_epsilon(rho: float, delta: float, *, conversion: ZcdpConversionName = "bun-steinke") -> float:
    """ε(δ) of a ρ-zCDP mechanism under ``conversion``, rounded up.

    Args:
        rho: the zCDP parameter ρ (> 0).
        delta: the δ, in [0, 1].
        conversion: "bun-steinke", "rdp-optimal" or "gaussian-exact" (ρ from Gaussian mechanisms only); "bun-steinke"
            by default.

    Returns:
        ε, rounded up (+inf at δ = 0, 0 at δ = 1).

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ρ not positive and finite, δ outside [0, 1], or an unknown conversion.
    """
    rho = check_positive("rho", rho)
    delta = check_unit_interval("delta", delta)
    conversion = check_choice("conversion", conversion, ZCDP_CONVERSIONS)
    return zcdp_epsilon_unchecked(rho, delta, conversion)


def zcdp_epsilon_unchecked(rho: float, delta: float, conversion: str) -> float:
    """Unvalidated :func:`zcdp_epsilon` (ρ, δ and the conversion trusted).

    Args:
        rho: the zCDP parameter ρ (> 0, not checked).
        delta: the δ, in [0, 1] (not checked).
        conversion: one of :data:`ZCDP_CONVERSIONS` (not checked).

    Returns:
        ε, rounded up (as :func:`zcdp_epsilon`).
    """
    if delta == 1.0:  # every mechanism is (0, 1)-DP
        return 0.0
    if delta == 0.0:  # ρ > 0: not pure DP at any finite ε
        return math.inf
    if conversion == "bun-steinke":
        return linear_rdp_epsilon_unchecked(rho, delta, "mironov").epsilon
    if conversion == "rdp-optimal":
        return linear_rdp_epsilon_unchecked(rho, delta, "improved").epsilon
    return gdp_epsilon_unchecked(_gaussian_mu(rho), delta)


def _gaussian_mu(rho: float) -> float:
    """μ = √(2ρ), the GDP of a Gaussian mechanism that is ρ-zCDP (√2·√ρ where 2ρ is beyond the doubles)."""
    return math.sqrt(2.0 * rho) if rho <= 8e307 else math.sqrt(2.0) * math.sqrt(rho)


def _gaussian_rho(mu: float) -> float:
    """ρ = μ²/2, as μ·(μ/2): a double for every μ up to the largest of a finite ε (about 1.9e154)."""
    return mu * (mu / 2.0)


def zcdp_delta(rho: float, epsilon: float, *, conversion: ZcdpConversionName = "bun-steinke") -> float:
    """δ(ε) of a ρ-zCDP mechanism under ``conversion``, rounded up.

    Args:
        rho: the zCDP parameter ρ (> 0).
        epsilon: the ε (>= 0, +inf allowed).
        conversion: "bun-steinke", "rdp-optimal" or "gaussian-exact" (ρ from Gaussian mechanisms only); "bun-steinke"
            by default.

    Returns:
        δ, rounded up (0 at ε = +inf).

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ρ not positive and finite, ε negative or NaN, or an unknown conversion.
    """
    rho = check_positive("rho", rho)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    conversion = check_choice("conversion", conversion, ZCDP_CONVERSIONS)
    return zcdp_delta_unchecked(rho, epsilon, conversion)


def zcdp_delta_unchecked(rho: float, epsilon: float, conversion: str) -> float:
    """Unvalidated :func:`zcdp_delta` (ρ, ε and the conversion trusted).

    Args:
        rho: the zCDP parameter ρ (> 0, not checked).
        epsilon: the ε (>= 0, +inf allowed; not checked).
        conversion: one of :data:`ZCDP_CONVERSIONS` (not checked).

    Returns:
        δ, rounded up (as :func:`zcdp_delta`).
    """
    if epsilon == math.inf:  # every mechanism is (+inf, 0)-DP
        return 0.0
    if conversion == "bun-steinke":
        return linear_rdp_delta_unchecked(rho, epsilon, "mironov").delta
    if conversion == "rdp-optimal":
        return linear_rdp_delta_unchecked(rho, epsilon, "improved").delta
    return gdp_delta_unchecked(_gaussian_mu(rho), epsilon)


def zcdp_rho(epsilon: float, delta: float, *, conversion: ZcdpConversionName = "bun-steinke") -> float:
    """The largest ρ such that ρ-zCDP implies (ε, δ)-DP under ``conversion``, rounded down.

    Args:
        epsilon: the target ε (>= 0, +inf allowed).
        delta: the target δ, in [0, 1].
        conversion: "bun-steinke", "rdp-optimal" or "gaussian-exact" (ρ from Gaussian mechanisms only); "bun-steinke"
            by default.

    Returns:
        ρ, rounded down (0 at δ = 0, +inf at δ = 1 or ε = +inf).

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ε negative or NaN, δ outside [0, 1], an unknown conversion, or an ε too large to convert.
    """
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    delta = check_unit_interval("delta", delta)
    conversion = check_choice("conversion", conversion, ZCDP_CONVERSIONS)
    return zcdp_rho_unchecked(epsilon, delta, conversion)


def zcdp_rho_unchecked(epsilon: float, delta: float, conversion: str) -> float:
    """Unvalidated :func:`zcdp_rho` (ε, δ and the conversion trusted).

    Args:
        epsilon: the target ε (>= 0, +inf allowed; not checked).
        delta: the target δ, in [0, 1] (not checked).
        conversion: one of :data:`ZCDP_CONVERSIONS` (not checked).

    Returns:
        ρ, rounded down (as :func:`zcdp_rho`).

    Raises:
        ValueError: an ε too large to convert under the conversion.
    """
    if epsilon == math.inf or delta == 1.0:  # the target holds for every mechanism
        return math.inf
    if delta == 0.0:  # only ρ = 0 is pure DP
        return 0.0
    ln_inv = -math.log(delta)
    # Bun–Steinke inverse: sqrt(ρ) = ε / (sqrt(L) + sqrt(L + ε)), free of cancellation.
    root = epsilon / (math.sqrt(ln_inv) + math.sqrt(ln_inv + epsilon))
    rho_bs = min(root * root, _LARGEST)  # the square of ε near the largest double may round past it (checked below)
    if conversion in ("gaussian-exact", "bun-steinke"):
        # Closed form / one root-find, then stepped down until the conversion itself agrees
        # (ε is rounded up, so the round trip may otherwise land a few ulps above the target).
        lo = round_down(_gaussian_rho(gdp_mu_unchecked(epsilon, delta)) if conversion == "gaussian-exact" else rho_bs)
        if not lo > 0.0:  # the largest ρ underflows: 0 is the largest double that is sound
            return 0.0
        step = 64.0 * 2.0**-52
        for _ in range(_MAX_STEPS):  # bounded: the relative step doubles up to halving
            if zcdp_epsilon_unchecked(lo, delta, conversion) <= epsilon:
                return lo
            lo, step = lo * (1.0 - step), min(2.0 * step, 0.5)
        raise ValueError(f"epsilon = {epsilon!r} is too large to convert to rho under {conversion}")

    # rdp-optimal lies between the Bun–Steinke ρ (looser conversion) and the exact one.
    def g(log_rho: float) -> float:
        if log_rho >= math.log(_LARGEST):  # a ρ beyond the doubles: infeasible for every finite ε
            return math.inf
        return zcdp_epsilon_unchecked(math.exp(log_rho), delta, conversion) - epsilon

    if not rho_bs > 0.0:  # below the smallest double: 0 is sound
        return 0.0
    ok = math.log(rho_bs) - 1e-9
    step = 0.01
    for _ in range(_MAX_STEPS):  # bounded: the step doubles
        if g(ok) <= 0.0:
            break
        ok, step = ok - step, 2.0 * step
    else:
        raise ValueError(f"epsilon = {epsilon!r} is too large to convert to rho under {conversion}")
    bad = 2.0 * math.log(gdp_mu_unchecked(epsilon, delta)) - math.log(2.0) + 1e-6  # in logs: μ² may overflow
    for _ in range(_MAX_STEPS):
        if not g(bad) <= 0.0:
            break
        ok, bad = bad, bad + 0.1
    else:  # no infeasible point found: ok is feasible, and a smaller ρ is always sound
        return round_down(math.exp(ok))
    return round_down(math.exp(feasible_root(g, ok, bad, xtol=1e-14)))
