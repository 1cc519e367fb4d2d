"""σ calibration: the smallest noise that meets an (ε, δ) target under each method.

Fast paths need no accountant per candidate σ:

* ``exact`` — one root-find on μ (:func:`dpkit.accountant.gdp.gdp_mu`), then σ = Δ sqrt(K)/μ;
* ``rdp`` / ``zcdp`` — one root-find (or closed form) on ρ, then σ = Δ sqrt(K/(2ρ));
* ``classic`` — closed form, refused when ε/K >= 1.

``pld`` and an ``rdp`` accountant restricted to explicit orders are calibrated by a root-find
on log σ that re-runs the accountant, bracketed from the exact σ (no sound method needs less).

Every calibration ends with a check: the method's own ε at the returned σ must not exceed
the target; σ is nudged up until it does not. So ``Calibration.epsilon <= target`` always.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .accountants import Accountant, AccountingMethod, RdpAccountant, make_accountant
from .classic import classic_sigma
from .gdp import gdp_mu_unchecked
from .ledger import GaussianRelease, Ledger
from .numerics import feasible_root, round_up, times_count, times_sqrt_count
from .validation import (
    ArgumentTypeError,
    SuspiciousTargetWarning,
    check_count,
    check_extended_nonnegative,
    check_member,
    check_positive,
    check_probability,
    check_unit_interval,
    shown_int,
    target_warnings,
)
from .zcdp import zcdp_rho_unchecked

__all__ = ["Calibration", "calibrate_sigma", "calibrate_ledger_scale", "clear_calibration_cache"]

_RDP_TO_ZCDP = {"improved": "rdp-optimal", "mironov": "bun-steinke"}


@dataclass(frozen=True)
class Calibration:
    """A calibrated σ and the ε it really achieves (``epsilon <= target_epsilon``).

    Attributes:
        sigma: the calibrated noise standard deviation σ (rounded up; 0 or +inf at the ends).
        epsilon: the ε the method certifies at ``sigma`` (<= ``target_epsilon``).
        delta: the target δ.
        target_epsilon: the target ε.
        method: the accounting method used.
        conversion: the RDP or zCDP conversion used, None for the other methods.
        sensitivity: the ℓ2 sensitivity Δ of each release.
        compositions: how many releases compose.
    """

    sigma: float
    epsilon: float
    delta: float
    target_epsilon: float
    method: str
    conversion: str | None
    sensitivity: float
    compositions: int

    @property
    def noise_multiplier(self) -> float:
        """σ/Δ."""
        return self.sigma / self.sensitivity

    def to_dict(self) -> dict[str, Any]:
        """The calibration as a plain dict.

        Returns:
            The fields and the noise multiplier σ/Δ, by name (JSON-ready).
        """
        return {
            "sigma": self.sigma,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "target_epsilon": self.target_epsilon,
            "method": self.method,
            "conversion": self.conversion,
            "sensitivity": self.sensitivity,
            "compositions": self.compositions,
            "noise_multiplier": self.noise_multiplier,
        }


def _achieved(acc: Accountant, ledger: Ledger, delta: float) -> float:
    return acc.epsilon(ledger, delta).epsilon


#: The widest noise scale factor the search over a ledger of events tries, either way (e^±690 ~ 1e±300).
_LOG_SCALE_RANGE = 690.0


def _event_scale(acc: Accountant, base: Ledger, epsilon: float, delta: float) -> float:
    """Smallest factor c (approximately) with ε(base.scaled(c)) <= ε for a ledger holding events: a root-find on
    log c, bracketed by doubling steps from c = 1 (ε falls as the noise grows)."""
    support = acc.supports(base)
    if not support:
        raise ValueError(f"{acc.label}: {support.reason}")
    base.scaled(2.0)  # an event with no noise scale (randomized response, an (ε, δ) release) says so here

    def g(log_c: float) -> float:
        try:
            return _achieved(acc, base.scaled(math.exp(log_c)), delta) - epsilon
        except ValueError:  # a bound that holds only with more noise (classic's ε < 1 per release)
            return math.inf

    step = 1.0
    if g(0.0) > 0.0:
        bad, ok = 0.0, step
        while g(ok) > 0.0:
            step *= 2.0
            bad, ok = ok, min(ok + step, _LOG_SCALE_RANGE)
            if bad >= _LOG_SCALE_RANGE:
                over = "" if base.compositions == 1 else f" over compositions = {shown_int(base.compositions)}"
                raise ValueError(
                    f"(epsilon, delta) = ({epsilon!r}, {delta!r}){over} needs a noise scale beyond doubles"
                )
    else:
        ok, bad = 0.0, -step
        while g(bad) <= 0.0:
            if bad <= -_LOG_SCALE_RANGE:
                return math.exp(bad)
            step *= 2.0
            ok, bad = bad, max(bad - step, -_LOG_SCALE_RANGE)
    return math.exp(feasible_root(g, ok, bad, xtol=1e-11))


def _make_feasible(acc: Accountant, ledger: Ledger, factor: float, epsilon: float, delta: float) -> tuple[float, float]:
    """Nudge a σ-scale factor up until the accountant's ε meets the target; return (factor, ε)."""
    step = 1e-9
    for i in range(200):
        achieved = _achieved(acc, ledger.scaled(factor), delta)
        if achieved <= epsilon:
            return factor, achieved
        if achieved <= epsilon * (1 + 1e-12):
            factor = round_up(factor, ulps=64)
        else:  # relative steps grow geometrically, so even a target ε near 0 is met in a few dozen steps
            factor *= 1 + step
            step = min(step * 2.0, 1.0) if i >= 10 else step
    raise ArithmeticError(f"could not meet epsilon = {epsilon!r} with {acc.label}")  # pragma: no cover


def _generic_scale(acc: Accountant, ledger: Ledger, epsilon: float, delta: float, lower: float) -> float:
    """Smallest factor c >= ``lower`` (approximately) with ε(ledger.scaled(c)) <= ε, by root-find on log c."""

    def g(log_c: float) -> float:
        return _achieved(acc, ledger.scaled(math.exp(log_c)), delta) - epsilon

    bad = math.log(lower) - 1e-12
    if g(bad) <= 0.0:  # the method is as tight as exact here (e.g. PLD raised to the exact value)
        return math.exp(bad)
    ok = bad + 0.01
    while g(ok) > 0.0:
        bad, ok = ok, ok + 0.1
    return math.exp(feasible_root(g, ok, bad, xtol=1e-11))


def calibrate_ledger_scale(
    ledger: Ledger,
    epsilon: float,
    delta: float,
    *,
    method: AccountingMethod | str = "exact",
    conversion: str | None = None,
    **options: Any,
) -> float:
    """The smallest factor c such that ``ledger.scaled(c)`` (every σ, and every noise multiplier of its events,
    times c) meets (ε, δ).

    Works for heterogeneous ledgers; for Gaussian releases the fast paths use that μ and ρ scale as 1/c and
    1/c², a ledger holding other events is searched on log c with the accountant itself.

    Args:
        ledger: the ledger to scale (a :class:`~dpkit.accountant.ledger.Ledger`).
        epsilon: the target ε (> 0).
        delta: the target δ, in (0, 1).
        method: the accounting method (see :data:`~dpkit.accountant.accountants.METHODS`); "exact" by default.
        conversion: the RDP or zCDP conversion; None takes the method's default.
        **options: further options of the accountant (see :func:`~dpkit.accountant.accountants.make_accountant`).

    Returns:
        The factor c, rounded up, at which the method's ε meets the target.

    Raises:
        ArgumentTypeError: ``ledger`` is not a Ledger, or a number of the wrong type.
        ValueError: ε not positive, δ outside (0, 1), an unknown method, a method that cannot account the ledger,
            or a target that needs a σ beyond the doubles.
    """
    if not isinstance(ledger, Ledger):
        raise ArgumentTypeError(f"ledger must be a dpkit.accountant.Ledger, got {type(ledger).__name__}")
    epsilon = check_positive("epsilon", epsilon)
    delta = check_probability("delta", delta)
    acc = make_accountant(method, conversion=conversion, **options)
    return _scale_and_epsilon(acc, ledger, epsilon, delta)[0]


def _scale_and_epsilon(acc: Accountant, base: Ledger, epsilon: float, delta: float) -> tuple[float, float]:
    """The smallest σ-scale factor meeting (ε, δ) under ``acc``, and the ε it achieves."""
    if not base.is_gaussian:
        return _make_feasible(acc, base, round_up(_event_scale(acc, base, epsilon, delta)), epsilon, delta)
    # μ of the base ledger, scaled so that tiny μᵢ (σ near the top of the doubles) do not underflow when squared
    releases = [r for r in base.releases if isinstance(r, GaussianRelease)]
    mus = [times_sqrt_count(r.count, r.sensitivity / r.sigma) for r in releases]  # any count
    top = max(mus)
    if math.isinf(top):  # a template beyond the doubles: search from the ledger's own accountant
        return _make_feasible(acc, base, round_up(_event_scale(acc, base, epsilon, delta)), epsilon, delta)
    mu1 = top * math.sqrt(math.fsum((m / top) ** 2 for m in mus)) if top > 0.0 else 0.0
    exact_factor = mu1 / gdp_mu_unchecked(epsilon, delta)
    if acc.method == AccountingMethod.EXACT:
        factor = exact_factor
    elif acc.method in (AccountingMethod.RDP, AccountingMethod.ZCDP) and not (
        isinstance(acc, RdpAccountant) and acc.orders is not None
    ):
        conv = acc.conversion or ""
        zconv = _RDP_TO_ZCDP.get(conv, conv) if acc.method == AccountingMethod.RDP else conv
        rho = zcdp_rho_unchecked(epsilon, delta, zconv)
        if not rho > 0.0:
            raise ValueError(
                f"(epsilon, delta) = ({epsilon!r}, {delta!r}) is below what any positive rho-zCDP "
                f"meets under {zconv} (in doubles): no finite sigma"
            )
        factor = mu1 / (math.sqrt(2.0) * math.sqrt(rho))  # 2ρ may overflow where ρ does not
    elif acc.method == AccountingMethod.PLD and epsilon == 0.0:
        raise ValueError(
            "pld: a discretised PLD certifies no epsilon = 0 (its epsilon carries the discretisation); use exact"
        )
    elif acc.method == AccountingMethod.CLASSIC and epsilon == 0.0:
        raise ValueError("classic: the Dwork–Roth bound certifies no epsilon = 0 at any finite sigma")
    elif acc.method == AccountingMethod.CLASSIC and len(base.releases) == 1:
        r = releases[0]
        factor = classic_sigma(epsilon, delta, sensitivity=r.sensitivity, compositions=r.count) / r.sigma
    elif acc.method == AccountingMethod.CLASSIC:
        # Closed form: ε(c) = z Σ countᵢ Δᵢ/(c σᵢ) with z = sqrt(2 ln(1.25 N/δ)). (A root-find
        # bracketed from the exact factor would hit the per-release refusal below the answer.)
        z = math.sqrt(2.0 * (math.log(1.25) + math.log(base.compositions) - math.log(delta)))  # logs: any count
        factor = z * math.fsum(times_count(r.count, r.sensitivity / r.sigma) for r in releases) / epsilon
    else:
        factor = _generic_scale(acc, base, epsilon, delta, exact_factor)
    if not 0.0 < factor < math.inf:
        over = "" if base.compositions == 1 else f" over compositions = {shown_int(base.compositions)}"
        raise ValueError(f"(epsilon, delta) = ({epsilon!r}, {delta!r}){over} needs a sigma beyond the range of doubles")
    return _make_feasible(acc, base, round_up(factor), epsilon, delta)


def calibrate_sigma(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float = 1.0,
    compositions: int = 1,
    method: AccountingMethod | str = "exact",
    conversion: str | None = None,
    **options: Any,
) -> Calibration:
    """The smallest σ (rounded up) such that ``compositions`` Gaussian releases of sensitivity
    ``sensitivity`` with noise N(0, σ²I) are (ε, δ)-DP under ``method``.

    The ends are answered: ε = +inf or δ = 1 is met with no noise (σ = 0); δ = 0 by no finite σ (a
    Gaussian mechanism is never pure DP: σ = +inf, which achieves ε = 0); ε = 0 with 0 < δ < 1 has a
    finite σ under the exact method (δ(0) = 2Φ(μ/2) − 1), while a method that cannot certify ε = 0 at
    any finite σ says so. A target that looks like a mistake (δ >= 0.5, or δ > ε: swapped?) is answered too, with a
    :class:`~dpkit.accountant.validation.SuspiciousTargetWarning`.

    Args:
        epsilon: the target ε (>= 0, +inf allowed).
        delta: the target δ, in [0, 1].
        sensitivity: the ℓ2 sensitivity Δ of each release (> 0); 1 by default.
        compositions: how many identical releases compose (an integer >= 1); 1 by default.
        method: the accounting method (see :data:`~dpkit.accountant.accountants.METHODS`); "exact" by default.
        conversion: the RDP or zCDP conversion; None takes the method's default.
        **options: further options of the accountant (see :func:`~dpkit.accountant.accountants.make_accountant`).

    Returns:
        The :class:`Calibration`: σ and the ε it achieves.

    Raises:
        ArgumentTypeError: a parameter of the wrong type.
        ValueError: ε negative, δ outside [0, 1], Δ not positive, compositions not an integer >= 1, an unknown
            method, ε = 0 under a method that cannot certify it, or a σ beyond the doubles.

    Examples:
        >>> round(calibrate_sigma(1.0, 1e-5).sigma, 4)
        3.7306
        >>> calibrate_sigma(1.0, 0.0).sigma, calibrate_sigma(math.inf, 1e-5).sigma
        (inf, 0.0)
    """
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    delta = check_unit_interval("delta", delta)
    sensitivity = check_positive("sensitivity", sensitivity)
    compositions = check_count("compositions", compositions)
    for note in target_warnings(epsilon, delta):  # answered all the same (δ = 1: σ = 0), but said
        warnings.warn(note, SuspiciousTargetWarning, stacklevel=2)
    args = (epsilon, delta, sensitivity, compositions, check_member("method", method, AccountingMethod), conversion)
    key = tuple(sorted(options.items()))
    try:
        hash(key)
    except TypeError:  # an unhashable option (e.g. rdp's orders as a list): computed, not cached
        sigma, achieved, method, conversion = _calibrated(*args, options)
    else:
        sigma, achieved, method, conversion = _cached_calibration(*args, key)
    return Calibration(sigma, achieved, delta, epsilon, method, conversion, sensitivity, compositions)


def clear_calibration_cache() -> None:
    """Forget every σ :func:`calibrate_sigma` has calibrated (the next call of each target computes it again)."""
    _cached_calibration.cache_clear()


def _calibrated(
    epsilon: float,
    delta: float,
    sensitivity: float,
    compositions: int,
    method: AccountingMethod,
    conversion: str | None,
    options: Mapping[str, Any],
) -> tuple[float, float, str, str | None]:
    """σ, the ε it achieves, and the accountant's method and conversion of a checked target (the arithmetic of
    :func:`calibrate_sigma`; pure: the same arguments give the same σ)."""
    acc = make_accountant(method, conversion=conversion, **options)
    if epsilon == math.inf or delta == 1.0:  # met by every σ >= 0: no noise needed
        return 0.0, (0.0 if delta == 1.0 else math.inf), acc.method, acc.conversion
    if delta == 0.0:  # no finite σ: a Gaussian release is never (ε, 0)-DP; σ = +inf releases nothing
        return math.inf, 0.0, acc.method, acc.conversion
    # With σ = 1 in the template ledger, the scale factor is σ itself.
    sigma, achieved = _scale_and_epsilon(
        acc, Ledger.homogeneous(sensitivity, 1.0, compositions=compositions), epsilon, delta
    )
    return sigma, achieved, acc.method, acc.conversion


@functools.lru_cache(maxsize=256)
def _cached_calibration(
    epsilon: float,
    delta: float,
    sensitivity: float,
    compositions: int,
    method: AccountingMethod,
    conversion: str | None,
    options: tuple[tuple[str, Any], ...],
) -> tuple[float, float, str, str | None]:
    """:func:`_calibrated`, memoised on its (hashable) arguments: an agent built once per audit run (a user's agent
    calibrating its paper σ in its constructor) calibrates the same target thousands of times. The key is the
    checked target as floats and ints, so equal targets share one σ, and a σ is never computed differently: only
    once."""
    return _calibrated(epsilon, delta, sensitivity, compositions, method, conversion, dict(options))
