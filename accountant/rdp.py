"""Rényi differential privacy (Mironov 2017): curves over orders and their conversion to (ε, δ).

An RDP curve is a list of (order α > 1, ε_R(α)) pairs; curves of composed mechanisms add.
Two conversions to (ε, δ)-DP are provided, each minimised over the orders given:

* ``mironov`` (Mironov 2017, Prop. 3):      ε = ε_R(α) + ln(1/δ)/(α − 1)
* ``improved`` (Balle et al. 2020; Canonne, Kamath, Steinke 2020, Prop. 12):
  ε = ε_R(α) + ln((α − 1)/α) − (ln δ + ln α)/(α − 1)

with the KL-divergence shortcut; :func:`linear_rdp_epsilon` minimises the Gaussian's linear curve αρ over
continuous α. Every order yields a valid bound (the minimiser affects tightness only); α = ∞ and infinite values
are allowed, and the trivial ends are answered: see docs/FORMULAS.md §11 (Rényi DP conversions).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sized
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .numerics import conservative_delta, round_up
from .validation import (
    ArgumentTypeError,
    check_choice,
    check_extended_nonnegative,
    check_nonnegative,
    check_same_length,
    check_unit_interval,
)

__all__ = [
    "RdpConversion",
    "RDP_CONVERSIONS",
    "DEFAULT_ORDERS",
    "rdp_epsilon",
    "rdp_delta",
    "linear_rdp_epsilon",
    "linear_rdp_delta",
    "linear_rdp_epsilon_unchecked",
    "linear_rdp_delta_unchecked",
    "check_rdp_orders",
]

RdpConversionName = Literal["improved", "mironov"]
RDP_CONVERSIONS: tuple[RdpConversionName, ...] = ("improved", "mironov")

#: A fine grid of Rényi orders: 4001 orders with α − 1 log-spaced over [1e-4, 1e6]
#: (consecutive orders differ by 0.58 %), merged with dp-accounting's default orders.
DEFAULT_ORDERS: np.ndarray = np.unique(
    np.concatenate(
        [
            1.0 + np.logspace(-4.0, 6.0, 4001),
            1.0 + np.arange(1, 101) / 10.0,
            np.arange(12.0, 64.0),
            np.array([128.0, 256.0, 512.0, 1024.0]),
        ]
    )
)


@dataclass(frozen=True)
class RdpConversion:
    """An (ε, δ) guarantee obtained from an RDP curve, with the order that gave it.

    Attributes:
        epsilon: the ε (rounded up where it was computed).
        delta: the δ (rounded up where it was computed).
        order: the order α that gave the bound (NaN for a trivial answer, +inf for a zero curve's).
        conversion: the conversion used ("improved" or "mironov").
    """

    epsilon: float
    delta: float
    order: float
    conversion: str


def _epsilon_at_orders(orders: np.ndarray, values: np.ndarray, log_delta: float, conversion: str) -> np.ndarray:
    """ε(α) of each order (vectorised); the KL shortcut gives 0 where it applies."""
    am1 = orders - 1.0
    with np.errstate(over="ignore"):  # a huge value or order overflows to +inf: no bound from it
        if conversion == "mironov":
            eps = values - log_delta / am1
        else:
            eps = values - np.log1p(1.0 / am1) - (log_delta + np.log1p(am1)) / am1
    # δ >= sqrt(1 − e^{−KL}) >= TV  ⇒  (0, δ)-DP;  KL <= ε_R(α) for every α >= 1.
    kl_zero = math.exp(2.0 * log_delta) + np.expm1(-values) > 0.0
    return np.where(kl_zero, 0.0, np.maximum(eps, 0.0))


def _log_delta_at_orders(orders: np.ndarray, values: np.ndarray, epsilon: float, conversion: str) -> np.ndarray:
    """log δ(α) of each order for a target ε (vectorised), capped by the KL bound."""
    am1 = orders - 1.0
    with np.errstate(over="ignore"):  # overflows to ±inf: δ = 0 (a huge ε) or no bound (a huge value)
        if conversion == "mironov":
            log_delta = am1 * (values - epsilon)
        else:
            log_delta = am1 * (values - epsilon - np.log1p(1.0 / am1)) - np.log1p(am1)
    # The same Bretagnolle–Huber bound as in _epsilon_at_orders: δ <= sqrt(1 − e^{−ε_R(α)}).
    with np.errstate(divide="ignore"):
        kl = 0.5 * np.log(-np.expm1(-values))
    bound: np.ndarray = np.minimum(log_delta, kl)
    return bound


def _conservative_epsilon(eps: float) -> float:
    """ε rounded up past the evaluation error of a sum of a few O(ε)-sized terms (0 stays 0)."""
    return round_up(eps * (1.0 + 1e-14)) if eps > 0.0 else 0.0


def _as_list(name: str, seq: object) -> list[object]:
    """The items of a sized iterable (list, tuple, array), or TypeError naming ``name`` (a lone number, say)."""
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Sized) or not isinstance(seq, Iterable):
        raise ArgumentTypeError(f"{name} must be a sequence of numbers, got {seq!r}")
    return list(seq)


def _length(name: str, seq: object) -> int:
    """len(seq), or TypeError naming ``name`` when it is not a sequence."""
    return len(_as_list(name, seq))


def _extended_array(name: str, values: list[object]) -> np.ndarray:
    """A 1-d float array of numbers in [0, +inf] (+inf allowed: α = ∞, ε_R(α) = ∞), naming a bad entry."""
    return np.array([check_extended_nonnegative(f"{name}[{i}]", v) for i, v in enumerate(values)], dtype=float)


def _validate_curve(orders: object, values: object) -> tuple[np.ndarray, np.ndarray]:
    """The curve as float arrays: orders α > 1 (α = +inf allowed), values ε_R(α) in [0, +inf]."""
    orders_seq = _as_list("orders", orders)
    values_seq = _as_list("values", values)
    check_same_length("orders", orders_seq, "values", values_seq)
    o = _extended_array("orders", orders_seq)
    v = _extended_array("values", values_seq)
    bad = np.flatnonzero(o <= 1.0)
    if bad.size:
        raise ValueError(f"orders must be Rényi orders > 1, got orders[{bad[0]}] = {float(o[bad[0]])!r}")
    bad = np.flatnonzero(v < 0.0)
    if bad.size:
        raise ValueError(f"values must be >= 0, got values[{bad[0]}] = {float(v[bad[0]])!r}")
    return o, v


def check_rdp_orders(orders: object) -> np.ndarray:
    """Rényi orders as a 1-d float array, each > 1 (α = +inf allowed), or an error naming the bad one.

    Args:
        orders: the Rényi orders (a sequence of numbers).

    Returns:
        The orders as a 1-d float array.

    Raises:
        ArgumentTypeError: not a sequence of numbers.
        ValueError: empty, or an order <= 1 or NaN.
    """
    o, _ = _validate_curve(orders, [0.0] * _length("orders", orders))
    return o


def _pure_epsilon(values: np.ndarray, delta: float) -> np.ndarray:
    """ε(δ) from the order α = ∞, whose value ε0 = ε_R(∞) is the mechanism's pure ε (P <= e^{ε0} Q on every set).

    (ε0, 0)-DP; and P(S) − e^ε Q(S) <= P(S)(1 − e^{ε − ε0}) <= 1 − e^{ε − ε0}, so also
    (max(0, ε0 + ln(1 − δ)), δ)-DP. Rounded up, and never above ε0 itself (exact as given).
    """
    shifted = values + math.log1p(-delta)
    up = np.array([round_up(x, ulps=2) for x in shifted.tolist()]) if shifted.size else shifted
    eps: np.ndarray = np.minimum(values, np.maximum(up, 0.0))
    return eps


def rdp_epsilon(
    orders: object, values: object, delta: float, *, conversion: RdpConversionName = "improved"
) -> RdpConversion:
    """Convert an RDP curve to (ε, δ)-DP: the smallest ε over the given orders, rounded up.

    ``orders`` and ``values`` are equal-length sequences (α_i > 1, ε_R(α_i) >= 0); 0 <= δ <= 1.
    An order may be +inf (its value is the pure ε of the mechanism, so ε(δ) never exceeds it, also
    at δ = 0) and a value may be +inf (that order then gives no bound), as dp-accounting's curves have.

    Args:
        orders: the Rényi orders α_i (> 1; +inf allowed: its value is the mechanism's pure ε).
        values: ε_R(α_i) at each order (>= 0; +inf allowed: that order gives no bound), as many as the orders.
        delta: the δ, in [0, 1].
        conversion: "improved" (Balle et al. 2020) or "mironov" (Mironov 2017, Prop. 3); "improved" by default.

    Returns:
        The :class:`RdpConversion`: ε rounded up and the order that gave it.

    Raises:
        ArgumentTypeError: orders or values not a sequence of numbers, or a parameter of the wrong type.
        ValueError: orders and values empty or of different lengths, an order <= 1, a negative or NaN value,
            δ outside [0, 1], or an unknown conversion.

    Examples:
        >>> rdp_epsilon([2.0, 4.0, float("inf")], [0.1, 0.3, 1.0], 0.0).epsilon
        1.0
    """
    o, v = _validate_curve(orders, values)
    delta = check_unit_interval("delta", delta)
    conversion = check_choice("conversion", conversion, RDP_CONVERSIONS)
    if delta == 1.0 or (delta == 0.0 and not np.any(v > 0.0)):  # (0, 1)-DP always; a zero curve is P = Q
        return RdpConversion(0.0, delta, math.nan, conversion)
    infinite = np.isinf(o)
    # Every order gives a valid bound and the smallest wins; α = ∞ gives the pure ε (at δ = 0 too,
    # where every finite order gives +inf: a positive Rényi divergence of finite order is not pure DP).
    eps = np.full(len(o), math.inf)
    if delta > 0.0:
        eps[~infinite] = [
            _conservative_epsilon(x)
            for x in _epsilon_at_orders(o[~infinite], v[~infinite], math.log(delta), conversion).tolist()
        ]
    # The KL shortcut holds at α = ∞ as at every order >= 1 (KL <= ε_R(∞)).
    kl_zero = delta * delta + np.expm1(-v[infinite]) > 0.0
    eps[infinite] = np.where(kl_zero, 0.0, _pure_epsilon(v[infinite], delta))
    i = int(np.argmin(eps))
    if eps[i] == math.inf:  # every order has ε_R = ∞, or δ = 0 and ε_R(∞) = ∞
        return RdpConversion(math.inf, delta, math.nan, conversion)
    return RdpConversion(float(eps[i]), delta, float(o[i]), conversion)


def rdp_delta(
    orders: object, values: object, epsilon: float, *, conversion: RdpConversionName = "improved"
) -> RdpConversion:
    """Convert an RDP curve to (ε, δ)-DP for a given ε: the smallest δ over the orders, rounded up.

    Orders and values as for :func:`rdp_epsilon`; the order α = ∞ gives δ = 0 for every ε >= ε_R(∞)
    and 1 − e^{ε − ε_R(∞)} below it. δ(ε = +inf) = 0.

    Args:
        orders: the Rényi orders α_i (> 1; +inf allowed: its value is the mechanism's pure ε).
        values: ε_R(α_i) at each order (>= 0; +inf allowed: that order gives no bound), as many as the orders.
        epsilon: the ε (>= 0, +inf allowed).
        conversion: "improved" or "mironov"; "improved" by default.

    Returns:
        The :class:`RdpConversion`: δ rounded up and the order that gave it.

    Raises:
        ArgumentTypeError: orders or values not a sequence of numbers, or a parameter of the wrong type.
        ValueError: orders and values empty or of different lengths, an order <= 1, a negative or NaN value,
            ε negative, or an unknown conversion.
    """
    o, v = _validate_curve(orders, values)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    conversion = check_choice("conversion", conversion, RDP_CONVERSIONS)
    if epsilon == math.inf:
        return RdpConversion(epsilon, 0.0, math.nan, conversion)
    infinite = np.isinf(o)
    log_delta = np.full(len(o), math.inf)
    log_delta[~infinite] = _log_delta_at_orders(o[~infinite], v[~infinite], epsilon, conversion)
    log_delta[infinite] = _log_delta_pure(v[infinite], epsilon)
    i = int(np.argmin(log_delta))
    return RdpConversion(epsilon, conservative_delta(float(log_delta[i])), float(o[i]), conversion)


def _log_delta_pure(values: np.ndarray, epsilon: float) -> np.ndarray:
    """log δ(ε) from the order α = ∞ (pure ε0 = ε_R(∞)): −inf for ε >= ε0, else ln(1 − e^{ε − ε0}), capped by KL."""
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.minimum(epsilon - values, 0.0)  # ε − ε0 <= 0 (−inf where ε0 = inf)
        log_d = np.where(gap == 0.0, -math.inf, np.log(-np.expm1(gap)))
        kl = 0.5 * np.log(-np.expm1(-values))  # Bretagnolle–Huber, as at every finite order
    bound: np.ndarray = np.minimum(log_d, kl)
    return bound


def _trivial_epsilon(delta: float, conversion: str, *, zero_curve: bool) -> RdpConversion | None:
    """ε at δ = 1 (0: every mechanism is (0, 1)-DP) and at δ = 0 (+inf unless the curve is 0); else None."""
    if delta == 1.0 or (delta == 0.0 and zero_curve):
        return RdpConversion(0.0, delta, math.nan, conversion)
    if delta == 0.0:  # a positive Rényi divergence: the mechanism is not pure DP at any finite ε
        return RdpConversion(math.inf, delta, math.nan, conversion)
    return None


def _refine(f: object, orders: np.ndarray, values: np.ndarray, i: int) -> tuple[float, float]:
    """Brent refinement of a scalar objective of the order between the grid neighbours of i."""
    lo = float(orders[max(i - 1, 0)])
    hi = float(orders[min(i + 1, len(orders) - 1)])
    best_a, best_v = float(orders[i]), float(values[i])
    if hi > lo and math.isfinite(best_v):  # -inf (δ = 0 at a huge ε) is already the best there is
        from scipy import optimize  # imported here: it costs 0.3 s at startup

        res = optimize.minimize_scalar(
            f,
            bounds=(math.log(lo - 1.0), math.log(hi - 1.0)),
            method="bounded",
            options={"xatol": 1e-12},
        )
        if res.fun < best_v:
            best_a, best_v = 1.0 + math.exp(float(res.x)), float(res.fun)
    return best_a, best_v


def linear_rdp_epsilon(rho: float, delta: float, *, conversion: RdpConversionName = "improved") -> RdpConversion:
    """(ε, δ) of the linear RDP curve ε_R(α) = αρ (Gaussian compositions, ρ-zCDP), rounded up.

    Minimises over continuous α > 1: Mironov's conversion in closed form; the improved
    conversion over :data:`DEFAULT_ORDERS` plus Mironov's optimal order, refined by Brent.

    Args:
        rho: the slope ρ of the curve (>= 0; ρ = Δ²/(2σ²) for a Gaussian release).
        delta: the δ, in [0, 1].
        conversion: "improved" or "mironov"; "improved" by default.

    Returns:
        The :class:`RdpConversion`: ε rounded up and the order that gave it.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ρ negative or not finite, δ outside [0, 1], or an unknown conversion.
    """
    rho = check_nonnegative("rho", rho)
    delta = check_unit_interval("delta", delta)
    conversion = check_choice("conversion", conversion, RDP_CONVERSIONS)
    return linear_rdp_epsilon_unchecked(rho, delta, conversion)


def linear_rdp_epsilon_unchecked(rho: float, delta: float, conversion: str) -> RdpConversion:
    """Unvalidated :func:`linear_rdp_epsilon` (ρ, δ and the conversion trusted).

    Args:
        rho: the slope ρ (>= 0, not checked).
        delta: the δ, in [0, 1] (not checked).
        conversion: "improved" or "mironov" (not checked).

    Returns:
        The :class:`RdpConversion`, as :func:`linear_rdp_epsilon`.
    """
    if rho == 0.0:
        return RdpConversion(0.0, delta, math.inf, conversion)
    trivial = _trivial_epsilon(delta, conversion, zero_curve=False)
    if trivial is not None:
        return trivial
    if rho == math.inf:  # a ledger whose ρ overflowed (σ near 1e-154 or below): no privacy
        return RdpConversion(math.inf, delta, math.nan, conversion)
    log_delta = math.log(delta)
    ln_inv = -log_delta
    a_star = 1.0 + math.sqrt(ln_inv) / math.sqrt(rho)  # +inf for a subnormal ρ
    if conversion == "mironov":
        eps = rho + 2.0 * math.sqrt(rho) * math.sqrt(ln_inv)  # no overflow of ρ ln(1/δ) near the largest double
        return RdpConversion(_conservative_epsilon(eps), delta, a_star, conversion)
    # α* rounds to 1.0 for astronomically large ρ and overflows for a subnormal one; only a finite order > 1
    # joins the grid (Brent's bounds must be finite).
    orders = np.sort(np.append(DEFAULT_ORDERS, a_star)) if 1.0 < a_star < math.inf else DEFAULT_ORDERS
    with np.errstate(over="ignore"):  # αρ overflows to +inf near the largest ρ: no bound from that order
        eps_grid = _epsilon_at_orders(orders, orders * rho, log_delta, "improved")
    i = int(np.argmin(eps_grid))
    if eps_grid[i] == 0.0:
        return RdpConversion(0.0, delta, float(orders[i]), conversion)

    def f(log_am1: float) -> float:
        # In terms of h = α − 1 only (α = 1 + h may round to 1 for tiny h):
        # αρ + ln(1 − 1/α) − (ln δ + ln α)/(α − 1), with ln(1 − 1/α) = −ln(1 + 1/h).
        am1 = math.exp(log_am1)
        log_a = math.log1p(am1)
        return rho + am1 * rho - math.log1p(1.0 / am1) - (log_delta + log_a) / am1

    best_a, best = _refine(f, orders, eps_grid, i)
    # Mironov's optimal order, taken as h = sqrt(ln(1/δ)/ρ) itself: the improved objective there
    # is below Mironov's (= Bun–Steinke), also where ρ is so large that 1 + h rounds to 1.
    at_star = f(0.5 * (math.log(ln_inv) - math.log(rho)))
    if at_star < best:
        best_a, best = a_star, at_star
    return RdpConversion(_conservative_epsilon(best), delta, best_a, conversion)


def linear_rdp_delta(rho: float, epsilon: float, *, conversion: RdpConversionName = "improved") -> RdpConversion:
    """δ(ε) of the linear RDP curve αρ, minimised over continuous α > 1, rounded up.

    Args:
        rho: the slope ρ of the curve (>= 0).
        epsilon: the ε (>= 0, +inf allowed).
        conversion: "improved" or "mironov"; "improved" by default.

    Returns:
        The :class:`RdpConversion`: δ rounded up and the order that gave it.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ρ negative or not finite, ε negative, or an unknown conversion.
    """
    rho = check_nonnegative("rho", rho)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    conversion = check_choice("conversion", conversion, RDP_CONVERSIONS)
    return linear_rdp_delta_unchecked(rho, epsilon, conversion)


def linear_rdp_delta_unchecked(rho: float, epsilon: float, conversion: str) -> RdpConversion:
    """Unvalidated :func:`linear_rdp_delta` (ρ, ε and the conversion trusted).

    Args:
        rho: the slope ρ (>= 0, not checked).
        epsilon: the ε (>= 0, +inf allowed; not checked).
        conversion: "improved" or "mironov" (not checked).

    Returns:
        The :class:`RdpConversion`, as :func:`linear_rdp_delta`.
    """
    if rho == 0.0:
        return RdpConversion(epsilon, 0.0, math.inf, conversion)
    if epsilon == math.inf:
        return RdpConversion(epsilon, 0.0, math.nan, conversion)
    if rho == math.inf:
        return RdpConversion(epsilon, 1.0, math.nan, conversion)
    # Mironov: min over α of (α − 1)(αρ − ε) is at α* = (ε + ρ)/(2ρ), value −(ε − ρ)²/(4ρ).
    a_star = (epsilon + rho) / (2.0 * rho)  # +inf for a huge ε or a subnormal ρ
    if conversion == "mironov":
        if a_star <= 1.0:
            return RdpConversion(epsilon, 1.0, math.inf, conversion)
        t = (epsilon - rho) / (2.0 * math.sqrt(rho))
        log_delta = -(t * t)  # a product overflows to -inf (δ = 0); ``**`` would raise
        return RdpConversion(epsilon, conservative_delta(log_delta), a_star, conversion)
    orders = np.sort(np.append(DEFAULT_ORDERS, a_star)) if 1.0 < a_star < math.inf else DEFAULT_ORDERS
    with np.errstate(over="ignore"):
        log_d = _log_delta_at_orders(orders, orders * rho, epsilon, "improved")
    i = int(np.argmin(log_d))

    def f(log_am1: float) -> float:
        # (α − 1)(αρ − ε + ln(1 − 1/α)) − ln α in terms of h = α − 1 (see linear_rdp_epsilon).
        am1 = math.exp(log_am1)
        log_a = math.log1p(am1)
        return am1 * (rho + am1 * rho - epsilon - math.log1p(1.0 / am1)) - log_a

    best_a, best = _refine(f, orders, log_d, i)
    return RdpConversion(epsilon, conservative_delta(best), best_a, conversion)
