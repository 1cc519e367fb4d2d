"""Calibrating DP-SGD: any one of (noise multiplier, steps, sampling probability) for a target (ε, δ).

The mechanism is dp-accounting's DP-SGD event ``SelfComposed(PoissonSampled(q, Gaussian(nm)), steps)``
(add/remove relation), accounted with dp-accounting's pessimistic PLD: :func:`calibrate_noise_multiplier` (nm for
q, T), :func:`largest_steps`, :func:`largest_sampling_probability` and :func:`largest_batch_size`.

The parameter is found by a root-find on a ladder of PLD discretisation intervals and checked at the end (its ε
at the final interval is <= the target); the ends (q = 0 or 1, nm = 0 or +inf) are answered. How, and why it is
sound: docs/how-to/dp-sgd.md (How the calibration works).
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .accountants import AccountingMethod
from .calibration import calibrate_sigma
from .gdp import gdp_epsilon_unchecked, gdp_mu_unchecked
from .numerics import (
    bracket_monotone,
    brent_root,
    decimal_round,
    feasible_secant,
    monotone_feasible_root,
    round_down,
    round_up,
)
from .validation import (
    check_count,
    check_extended_nonnegative,
    check_member,
    check_positive,
    check_probability,
    check_unit_interval,
)

if TYPE_CHECKING:  # dp-accounting is imported where it is used: it costs 0.6 s at startup
    from dp_accounting.pld import privacy_loss_distribution

    from .events import Event
    from .pld_events import PldGuarantee

__all__ = [
    "EventCalibration",
    "INTERVAL_LADDER",
    "calibrate_noise_multiplier",
    "largest_steps",
    "largest_sampling_probability",
    "largest_batch_size",
    "dpsgd_epsilon",
    "CalibrationMethod",
]

#: The discretisation intervals tried, coarse to fine; the last is dp-accounting's default.
INTERVAL_LADDER: tuple[float, ...] = (1e-2, 2e-3, 5e-4, 1e-4)
#: Secant steps at one interval stop once they move less than this (in log).
_XTOL = 2e-5


class CalibrationMethod(enum.StrEnum):
    """How DP-SGD is calibrated: through dp-accounting's pessimistic PLD (tight) or the RDP curve (looser, faster)."""

    PLD = "pld"
    RDP = "rdp"


@dataclass(frozen=True)
class EventCalibration:
    """A calibrated DP-SGD parameter and the ε the run really achieves (``epsilon <= target_epsilon``).

    ``parameter`` names what was calibrated ("noise_multiplier", "steps" or "sampling_probability")
    and ``value`` is it; the other two fields are the given ones. ``steps`` may be ``math.inf``
    (unbounded). ``method`` is "pld" (dp-accounting's pessimistic PLD at
    ``value_discretization_interval``) or "exact" (μ-GDP, q = 1, or a closed-form end); ``note``
    explains an end case. ``epsilon`` is an upper bound on the run's true ε; ``epsilon_lower`` a lower bound
    (the truth lies in between: :func:`dpkit.accountant.pld_events.pld_epsilon`, the very figure ``dpkit
    epsilon`` gives for the calibrated value), equal to ``epsilon`` where exact, None under rdp.
    """

    parameter: str
    value: float
    epsilon: float
    delta: float
    target_epsilon: float
    noise_multiplier: float
    steps: float
    sampling_probability: float
    method: str
    value_discretization_interval: float | None
    note: str = ""
    epsilon_lower: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The calibration as a plain dict.

        Returns:
            The fields, with ``epsilon_upper`` and ``epsilon_lower``.
        """
        return {
            "parameter": self.parameter,
            "value": self.value,
            "epsilon": self.epsilon,
            "epsilon_upper": self.epsilon,
            "epsilon_lower": self.epsilon_lower,
            "delta": self.delta,
            "target_epsilon": self.target_epsilon,
            "noise_multiplier": self.noise_multiplier,
            "steps": self.steps,
            "sampling_probability": self.sampling_probability,
            "method": self.method,
            "value_discretization_interval": self.value_discretization_interval,
            "note": self.note,
        }


# --------------------------------------------------------------------------------------------
# ε of DP-SGD under the pessimistic PLD


@functools.lru_cache(maxsize=32)
def _step_pld(q: float, nm: float, interval: float) -> privacy_loss_distribution.PrivacyLossDistribution:
    from .pld_fast import subsampled_gaussian_pld

    return subsampled_gaussian_pld(nm, q, interval)


def _pld_epsilon(q: float, nm: float, steps: int, delta: float, interval: float) -> float:
    """ε(δ) of ``steps`` Poisson-subsampled Gaussian steps under dp-accounting's pessimistic PLD (not rounded)."""
    from .pld_bounds import pessimistic_epsilon
    from .pld_fast import self_composed

    return pessimistic_epsilon(self_composed(_step_pld(q, nm, interval), steps), delta)


def _remove_epsilon(q: float, nm: float, steps: int, delta: float, interval: float) -> float:
    """ε(δ) of the remove pair alone: what the root-finds search on (half the work). It dominates DP-SGD's ε
    (the add pair's is smaller on the whole benchmark grid); the answer is certified with both pairs."""
    from .pld_bounds import pmf_epsilon
    from .pld_fast import Adjacency, composed_pmf

    return pmf_epsilon(composed_pmf(nm, q, interval, Adjacency.REMOVE, steps), delta)


def _event(q: float, nm: float, steps: int) -> Event:
    from .events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent

    step = PoissonSampledEvent(q, GaussianEvent(nm))
    return step if steps == 1 else SelfComposedEvent(step, steps)


def _certify(q: float, nm: float, steps: int, delta: float, given: float | None) -> PldGuarantee:
    """The certified ε of the run and its lower bound: exactly what ``dpkit epsilon`` (the pld method) answers."""
    from .pld_events import pld_epsilon

    return pld_epsilon(_event(q, nm, steps), delta, value_discretization_interval=given)


def _certified_interval(q: float, nm: float, steps: int, given: float | None) -> float:
    """The interval :func:`_certify` uses for this run (dp-accounting's 1e-4 unless ε is in the tens)."""
    from .pld_events import event_interval

    return given if given is not None else event_interval(_event(q, nm, steps))


def _decimal(x: float, *, up: bool) -> float:
    """``x`` to 10 significant decimal digits (up or down): the value a user reads is the value certified (``dpkit
    epsilon --sigma`` of the printed σ gives the same ε)."""
    return decimal_round(x, 10, up=up)


def _zero_noise_delta(q: float, steps: float) -> float:
    """1 − (1 − q)^T: δ at ε = 0 (and at every ε) of T steps without noise, rounded up."""
    if steps == math.inf or q == 1.0:
        return 1.0 if q > 0.0 else 0.0
    return min(1.0, round_up(-math.expm1(steps * math.log1p(-q)), ulps=16))


def dpsgd_epsilon(
    delta: float,
    *,
    sampling_probability: float,
    noise_multiplier: float,
    steps: int,
    value_discretization_interval: float = 1e-4,
) -> float:
    """ε(δ) of DP-SGD (``steps`` Poisson-subsampled Gaussian steps) under the pessimistic PLD, rounded up.

    Args:
        delta: the δ, in [0, 1].
        sampling_probability: q, in [0, 1] (1: exact μ-GDP; 0: ε = 0).
        noise_multiplier: nm = σ/Δ (>= 0; +inf: ε = 0; 0: ε = 0 or +inf).
        steps: T (an integer >= 1).
        value_discretization_interval: the PLD grid's interval (> 0); 1e-4 by default.

    Returns:
        ε, rounded up.

    Raises:
        ValueError: a value out of its range or of the wrong type (ArgumentTypeError).
    """
    delta = check_unit_interval("delta", delta)
    q = check_unit_interval("sampling_probability", sampling_probability)
    nm = check_extended_nonnegative("noise_multiplier", noise_multiplier)
    steps = check_count("steps", steps)
    interval = check_positive("value_discretization_interval", value_discretization_interval)
    if delta == 1.0 or q == 0.0 or nm == math.inf:
        return 0.0
    if nm == 0.0:
        return 0.0 if delta >= _zero_noise_delta(q, steps) else math.inf
    if q == 1.0:
        return gdp_epsilon_unchecked(round_up(math.sqrt(steps) / nm), delta)
    if delta == 0.0:
        return math.inf
    return round_up(_pld_epsilon(q, nm, steps, delta, interval))


# --------------------------------------------------------------------------------------------
# the ladder root-find


def _clt_mu(q: float, nm: float, steps: float) -> float:
    """The CLT approximation of DP-SGD's μ (Bu, Dong, Long and Su 2019): q·sqrt(T(e^{1/nm²} − 1))."""
    return q * math.sqrt(steps * math.expm1(min(1.0 / (nm * nm), 700.0)))


def _levels(coarsest: float, finest: float) -> list[float]:
    """The intervals of the ladder, coarse to fine: ``finest`` times powers of two up to ``coarsest`` (nested grids:
    each refines the one before, so its pessimistic ε is at most the coarser one's)."""
    levels = [finest]
    while levels[-1] * 2.0 <= coarsest * (1.0 + 1e-9) and len(levels) < 8:
        levels.append(levels[-1] * 2.0)
    return levels[::-1]


def _ladder(
    evaluate: Callable[[float, float], float],
    target: float,
    u0: float,
    *,
    increasing: bool,
    finest: float,
    u_min: float = -math.inf,
    u_max: float = math.inf,
    coarsest: float = INTERVAL_LADDER[0],
) -> tuple[float, float, float]:
    """Solve ε_h(e^u) = target down a ladder of intervals; return (u, ε at u, ``finest``) with ε <= target at u."""
    levels = _levels(coarsest, finest)
    sign = 1.0 if increasing else -1.0
    aim, accept = target * (1.0 - 2.5e-4), target * (1.0 - 5e-4)
    memo: dict[tuple[float, float], float] = {}

    def ev(u: float, h: float) -> float:
        key = (u, h)
        if key not in memo:
            memo[key] = evaluate(u, h)
        return memo[key]

    def clip(u: float) -> float:
        return min(max(u, u_min), u_max)

    # the coarsest interval: bracket from the guess, then Brent
    h0 = levels[0]
    u, gu, v, gv = bracket_monotone(
        lambda x: ev(x, h0) - target, u0, increasing=increasing, step=0.2, x_min=u_min, x_max=u_max
    )
    slope = sign * max(abs(target), 1e-3)  # a safe guess: dε/du ~ ε
    if v == u:  # clipped at an end still on one side: that end is the answer at this interval
        roots = [u]
    else:
        lo, hi = (u, v) if u < v else (v, u)
        roots = [brent_root(lambda x: ev(x, h0) - target, lo, hi, xtol=1e-4, rtol=0.0)]
        near = sorted(((abs(x - roots[0]), x, e) for (x, h), e in memo.items() if h == h0), key=lambda t: t[0])
        if len(near) >= 2 and near[0][1] != near[1][1]:
            slope = (near[0][2] - near[1][2]) / (near[0][1] - near[1][1])
        if slope * sign <= 0.0:
            slope = (gv - gu) / (v - u)

    def extrapolated() -> float:
        """The next interval's root, from the roots so far (a quarter of the last shift, or as observed)."""
        if len(roots) < 2:
            return roots[-1]
        d1 = roots[-1] - roots[-2]
        ratio = 0.25
        if len(roots) >= 3 and (roots[-2] - roots[-3]) * d1 > 0.0:
            ratio = min(0.5, max(0.1, d1 / (roots[-2] - roots[-3])))
        return roots[-1] + max(-0.05, min(0.05, ratio * d1))

    for h in levels[1:-1]:  # one secant step per intermediate interval
        u_cur = clip(extrapolated())
        e = ev(u_cur, h)
        root = clip(u_cur - (e - target) / slope)
        if abs(e - target) > 0.02 * abs(target):  # far off: one more step, and the slope of this interval
            e2 = ev(root, h)
            if root != u_cur and (e2 - e) / (root - u_cur) * sign > 0.0:
                slope = (e2 - e) / (root - u_cur)
            root = clip(root - (e2 - target) / slope)
        roots.append(root)

    # the finest interval: secant steps to a feasible point within 0.05 % of the target
    h = levels[-1]
    start = clip(extrapolated()) if len(levels) > 1 else roots[-1]
    u, e = feasible_secant(
        lambda x: ev(x, h),
        start,
        target=target,
        aim=aim,
        accept=accept,
        slope=slope,
        increasing=increasing,
        x_min=u_min,
        x_max=u_max,
        xtol=_XTOL,
    )
    return u, e, h


def _coarsest(step_mu: float) -> float:
    """The coarsest useful interval: a grid much coarser than the per-step privacy loss (its CLT μ) is biased."""
    return max(INTERVAL_LADDER[-1], min(INTERVAL_LADDER[0], 2.0 * step_mu))


def _check_common(epsilon: float, delta: float) -> tuple[float, float]:
    return check_positive("epsilon", epsilon), check_probability("delta", delta)


def _given(value: object) -> float | None:
    return None if value is None else check_positive("value_discretization_interval", value)


# --------------------------------------------------------------------------------------------
# the rdp method (optional): dpkit.accountant.rdp_events' exact Poisson-subsampled Gaussian curve


#: Orders for the rdp method: fractional ones near 1 (where small ε lives), integers, then a sparse tail.
_RDP_ORDERS = np.concatenate(
    [np.linspace(1.1, 10.9, 99), np.arange(11.0, 64.0), [80.0, 96.0, 128.0, 192.0, 256.0, 384.0, 512.0, 768.0, 1024.0]]
)


def _rdp_epsilon(q: float, nm: float, steps: float, delta: float) -> float:
    """ε(δ) of DP-SGD through RDP (the curve of :mod:`dpkit.accountant.rdp_events`, improved conversion)."""
    from .events import GaussianEvent, PoissonSampledEvent
    from .rdp import rdp_epsilon
    from .rdp_events import rdp_curve

    curve = rdp_curve(PoissonSampledEvent(q, GaussianEvent(nm)), _RDP_ORDERS)
    return rdp_epsilon(_RDP_ORDERS, steps * curve, delta).epsilon


def _rdp_solve(g: Callable[[float], float], u0: float, *, increasing: bool, u_min: float, u_max: float) -> float:
    """The feasible end (g <= 0) of the root of the monotone ``g`` in u, bracketed from ``u0`` by doubling."""
    try:
        return monotone_feasible_root(g, u0, increasing=increasing, step=0.25, x_min=u_min, x_max=u_max, xtol=1e-9)
    except ArithmeticError as exc:
        raise ArithmeticError("event calibration (rdp): the target cannot be met in range") from exc


# --------------------------------------------------------------------------------------------
# public calibrations


#: The smallest δ the pld method resolves (dp-accounting truncates about 1e-15 of the tails) and the smallest noise
#: multiplier it calibrates in reasonable time (a PLD's grid grows as 1/nm²: at nm = 0.01 one evaluation takes ~10 s).
PLD_MIN_DELTA = 1e-14
PLD_MIN_NOISE_MULTIPLIER = 0.05


def _check_pld_reach(delta: float, guess: float) -> None:
    """Refuse, with the reason and the way out, a calibration the pld method cannot answer (or not in time)."""
    if delta < PLD_MIN_DELTA:
        raise ValueError(
            f"pld: delta = {delta:g} is below what dp-accounting's PLD resolves (it truncates about 1e-15 of the "
            f"tails; delta >= {PLD_MIN_DELTA:g}): use method rdp"
        )
    if guess < PLD_MIN_NOISE_MULTIPLIER:
        raise ValueError(
            f"pld: the target needs a noise multiplier near {guess:.3g}, below {PLD_MIN_NOISE_MULTIPLIER:g}, where "
            "one PLD takes minutes: use method rdp"
        )


def _meet(
    certify: Callable[[float], PldGuarantee], value: float, target: float, *, up: bool, limit: float
) -> tuple[float, PldGuarantee]:
    """``value`` and its certificate, moved towards the feasible side (``up``: larger is safer) in growing steps
    until the certified ε meets ``target``: the root-finds search on the remove pair at the certificate's
    interval, so this runs only where the add pair or a rounding tips the balance."""
    cert = certify(value)
    step = 1e-4
    for _ in range(40):
        if cert.epsilon <= target:
            return value, cert
        value = _decimal(min(limit, value * (1.0 + step)) if up else max(limit, value * (1.0 - step)), up=up)
        cert = certify(value)
        step *= 2.0
    raise ArithmeticError("event calibration: the certified epsilon does not meet the target")  # pragma: no cover


def calibrate_noise_multiplier(
    epsilon: float,
    delta: float,
    *,
    sampling_probability: float,
    steps: int,
    value_discretization_interval: float | None = None,
    method: CalibrationMethod | str = "pld",
) -> EventCalibration:
    """The smallest noise multiplier (10 significant digits, rounded up) for which DP-SGD meets (ε, δ) (PLD).

    Args:
        epsilon: the target ε (> 0).
        delta: the target δ, in (0, 1).
        sampling_probability: q, in [0, 1].
        steps: T (an integer >= 1).
        value_discretization_interval: the ladder's finest interval (None: 1e-4 unless ε is in the tens).
        method: "pld" (tight) or "rdp" (looser, faster); "pld" by default.

    Returns:
        The :class:`EventCalibration`: nm, its certified ε and the lower bound on the true ε.

    Raises:
        ValueError: a bad value or type, an unknown method, or a target below what the PLD resolves (use rdp).
    """
    epsilon, delta = _check_common(epsilon, delta)
    method = check_member("method", method, CalibrationMethod)
    q = check_unit_interval("sampling_probability", sampling_probability)
    steps = check_count("steps", steps)
    given = _given(value_discretization_interval)

    def result(
        nm: float,
        eps: float,
        method: CalibrationMethod | AccountingMethod,
        h: float | None,
        note: str = "",
        lower: float | None = None,
    ) -> EventCalibration:
        return EventCalibration("noise_multiplier", nm, eps, delta, epsilon, nm, steps, q, method, h, note, lower)

    if q == 0.0:
        note = "q = 0: no record is ever used, any noise multiplier meets the target"
        return result(0.0, 0.0, AccountingMethod.EXACT, None, note, 0.0)
    if delta >= _zero_noise_delta(q, steps):
        return result(
            0.0, 0.0, AccountingMethod.EXACT, None, "delta >= 1 - (1 - q)^steps: even no noise meets the target", 0.0
        )
    if q == 1.0:
        cal = calibrate_sigma(epsilon, delta, compositions=steps)
        note = "q = 1: the plain Gaussian mechanism (exact mu-GDP)"
        return result(cal.sigma, cal.epsilon, AccountingMethod.EXACT, None, note, cal.epsilon)
    mu = gdp_mu_unchecked(epsilon, delta)
    ratio = mu / (q * math.sqrt(steps))
    guess = 1.0 / math.sqrt(math.log1p(ratio * ratio)) if ratio > 0.0 else 1.0
    if method == CalibrationMethod.PLD:
        _check_pld_reach(delta, guess)
        if epsilon > 20.0:  # the CLT guess is poor at large ε: the (larger) RDP answer bounds the PLD one above
            rdp = calibrate_noise_multiplier(
                epsilon, delta, sampling_probability=q, steps=steps, method=CalibrationMethod.RDP
            )
            _check_pld_reach(delta, rdp.value)
            guess = rdp.value

    if method == CalibrationMethod.RDP:
        u = _rdp_solve(
            lambda u: _rdp_epsilon(q, math.exp(u), steps, delta) - epsilon,
            math.log(guess),
            increasing=False,
            u_min=math.log(1e-3),
            u_max=math.log(1e6),
        )
        nm = _decimal(math.exp(u), up=True)
        return result(nm, round_up(_rdp_epsilon(q, nm, steps, delta)), CalibrationMethod.RDP, None)

    def evaluate(u: float, h: float) -> float:
        return _remove_epsilon(q, _decimal(math.exp(u), up=True), steps, delta, h)

    finest = _certified_interval(q, guess, steps, given)
    for _ in range(3):  # the certificate's interval follows the answer's width (it is 1e-4 but for large ε)
        u, _, _ = _ladder(
            evaluate,
            epsilon,
            math.log(guess),
            increasing=False,
            finest=finest,
            u_min=math.log(1e-3),
            coarsest=_coarsest(_clt_mu(q, guess, 1.0)),
        )
        guess = _decimal(math.exp(u), up=True)
        if _certified_interval(q, guess, steps, given) == finest:
            break
        finest = _certified_interval(q, guess, steps, given)
    nm, cert = _meet(lambda v: _certify(q, v, steps, delta, given), guess, epsilon, up=True, limit=math.inf)
    return result(nm, cert.epsilon, CalibrationMethod.PLD, cert.value_discretization_interval, "", cert.lower)


def largest_steps(
    epsilon: float,
    delta: float,
    *,
    sampling_probability: float,
    noise_multiplier: float,
    value_discretization_interval: float | None = None,
    max_steps: int = 10**8,
    method: CalibrationMethod | str = "pld",
) -> EventCalibration:
    """The largest number of DP-SGD steps (within 0.05 %, or 1 step) that meets (ε, δ) under the pessimistic PLD.

    Args:
        epsilon: the target ε (> 0).
        delta: the target δ, in (0, 1).
        sampling_probability: q, in [0, 1].
        noise_multiplier: nm = σ/Δ (>= 0, +inf allowed).
        value_discretization_interval: the ladder's finest interval (None: 1e-4 unless ε is in the tens).
        max_steps: the cap on T (an integer >= 1); 10⁸ by default.
        method: "pld" (tight) or "rdp" (looser, faster); "pld" by default.

    Returns:
        The :class:`EventCalibration`: T (0 if not even one step meets the target, ``math.inf`` when every number
        does: q = 0, nm = +inf; at most ``max_steps``), its ε certified as :func:`calibrate_noise_multiplier`'s.

    Raises:
        ValueError: a bad value or type, an unknown method, or a target below what the PLD resolves (use rdp).
    """
    epsilon, delta = _check_common(epsilon, delta)
    method = check_member("method", method, CalibrationMethod)
    q = check_unit_interval("sampling_probability", sampling_probability)
    nm = check_extended_nonnegative("noise_multiplier", noise_multiplier)
    max_steps = check_count("max_steps", max_steps)
    given = _given(value_discretization_interval)

    def result(
        t: float,
        eps: float,
        method: CalibrationMethod | AccountingMethod,
        h: float | None,
        note: str = "",
        lower: float | None = None,
    ) -> EventCalibration:
        return EventCalibration("steps", t, eps, delta, epsilon, nm, t, q, method, h, note, lower)

    if q == 0.0 or nm == math.inf:
        return result(
            math.inf,
            0.0,
            AccountingMethod.EXACT,
            None,
            "nothing is released about any record: steps are unbounded",
            0.0,
        )
    if nm == 0.0:
        # T steps without noise are exactly (0, 1 − (1 − q)^T)-DP
        t = min(max_steps, int(math.floor(math.log1p(-delta) / math.log1p(-q)))) if q < 1.0 else 0
        while t > 0 and _zero_noise_delta(q, t) > delta:
            t -= 1
        return result(
            t, 0.0, AccountingMethod.EXACT, None, "noise_multiplier = 0: T steps are (0, 1 - (1 - q)^T)-DP", 0.0
        )
    if q == 1.0:
        mu = gdp_mu_unchecked(epsilon, delta)
        t = min(max_steps, int(math.floor(round_down((mu * nm) ** 2))))
        while t > 0 and gdp_epsilon_unchecked(round_up(math.sqrt(t) / nm), delta) > epsilon:
            t -= 1
        eps = gdp_epsilon_unchecked(round_up(math.sqrt(t) / nm), delta) if t > 0 else 0.0
        return result(t, eps, AccountingMethod.EXACT, None, "q = 1: the plain Gaussian mechanism (exact mu-GDP)", eps)

    if method == CalibrationMethod.RDP:
        from .events import GaussianEvent, PoissonSampledEvent
        from .rdp import rdp_epsilon
        from .rdp_events import rdp_curve

        curve = rdp_curve(PoissonSampledEvent(q, GaussianEvent(nm)), _RDP_ORDERS)

        def eps_of(t: int) -> float:
            return rdp_epsilon(_RDP_ORDERS, t * curve, delta).epsilon

        if eps_of(1) > epsilon:
            return result(0, 0.0, CalibrationMethod.RDP, None, "one step already exceeds the target")
        lo, hi = 1, 2
        while hi <= max_steps and eps_of(hi) <= epsilon:
            lo, hi = hi, hi * 2
        hi = min(hi, max_steps + 1)
        while hi - lo > 1:  # the largest feasible integer, exactly
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if eps_of(mid) <= epsilon else (lo, mid)
        return result(lo, eps_of(lo), CalibrationMethod.RDP, None, "capped at max_steps" if lo >= max_steps else "")

    def certify(t: int) -> PldGuarantee:
        return _certify(q, nm, t, delta, given)

    one = certify(1)
    if one.epsilon > epsilon:
        return result(
            0, 0.0, CalibrationMethod.PLD, one.value_discretization_interval, "one step already exceeds the target", 0.0
        )
    mu = gdp_mu_unchecked(epsilon, delta)
    guess = max(1.0, (mu / _clt_mu(q, nm, 1.0)) ** 2) if _clt_mu(q, nm, 1.0) > 0 else 1.0
    guess = min(guess, max_steps)
    finest = _certified_interval(q, nm, int(guess), given)

    def evaluate(u: float, h: float) -> float:
        return _remove_epsilon(q, nm, max(1, int(round(math.exp(u)))), delta, h)

    u, _, h = _ladder(
        evaluate,
        epsilon,
        math.log(guess),
        increasing=True,
        finest=finest,
        u_min=0.0,
        u_max=math.log(max_steps),
        coarsest=_coarsest(_clt_mu(q, nm, 1.0)),
    )
    t = max(1, int(round(math.exp(u))))
    step = max(1, t // 2000)  # tight to 0.05 %: try one more block of steps
    while t + step <= max_steps and _remove_epsilon(q, nm, t + step, delta, h) <= epsilon:
        t += step
    cert = certify(t)
    while cert.epsilon > epsilon and t > 1:  # the add pair or the interval tipped it: fewer steps
        t = max(1, t - step)
        cert = certify(t)
    note = "capped at max_steps" if t >= max_steps else ""
    return result(t, cert.epsilon, CalibrationMethod.PLD, cert.value_discretization_interval, note, cert.lower)


def largest_sampling_probability(
    epsilon: float,
    delta: float,
    *,
    noise_multiplier: float,
    steps: int,
    value_discretization_interval: float | None = None,
    method: CalibrationMethod | str = "pld",
) -> EventCalibration:
    """The largest sampling probability q (10 significant digits, rounded down) for which DP-SGD meets (ε, δ).

    Args:
        epsilon: the target ε (> 0).
        delta: the target δ, in (0, 1).
        noise_multiplier: nm = σ/Δ (>= 0, +inf allowed).
        steps: T (an integer >= 1).
        value_discretization_interval: the ladder's finest interval (None: 1e-4 unless ε is in the tens).
        method: "pld" (tight) or "rdp" (looser, faster); "pld" by default.

    Returns:
        The :class:`EventCalibration`.

    Raises:
        ValueError: a bad value or type, an unknown method, or a target below what the PLD resolves (use rdp).
    """
    epsilon, delta = _check_common(epsilon, delta)
    method = check_member("method", method, CalibrationMethod)
    nm = check_extended_nonnegative("noise_multiplier", noise_multiplier)
    steps = check_count("steps", steps)
    given = _given(value_discretization_interval)

    def result(
        q: float,
        eps: float,
        method: CalibrationMethod | AccountingMethod,
        h: float | None,
        note: str = "",
        lower: float | None = None,
    ) -> EventCalibration:
        return EventCalibration("sampling_probability", q, eps, delta, epsilon, nm, steps, q, method, h, note, lower)

    if nm == math.inf:
        note = "noise_multiplier = inf: nothing is released, every q meets the target"
        return result(1.0, 0.0, AccountingMethod.EXACT, None, note, 0.0)
    if nm == 0.0:
        q = round_down(-math.expm1(math.log1p(-delta) / steps), ulps=16)
        while q > 0.0 and _zero_noise_delta(q, steps) > delta:
            q = round_down(q * (1 - 1e-12))
        return result(
            q, 0.0, AccountingMethod.EXACT, None, "noise_multiplier = 0: T steps are (0, 1 - (1 - q)^T)-DP", 0.0
        )
    gauss = gdp_epsilon_unchecked(round_up(math.sqrt(steps) / nm), delta)
    if gauss <= epsilon:
        return result(
            1.0, gauss, AccountingMethod.EXACT, None, "q = 1 meets the target (the plain Gaussian, exact mu-GDP)", gauss
        )
    mu = gdp_mu_unchecked(epsilon, delta)
    guess = min(0.5, mu / _clt_mu(1.0, nm, steps))

    if method == CalibrationMethod.RDP:
        u = _rdp_solve(
            lambda u: _rdp_epsilon(math.exp(u), nm, steps, delta) - epsilon,
            math.log(guess),
            increasing=True,
            u_min=math.log(1e-300),
            u_max=math.log(1.0 - 1e-12),
        )
        q = _decimal(math.exp(u), up=False)
        return result(q, round_up(_rdp_epsilon(q, nm, steps, delta)), CalibrationMethod.RDP, None)

    def evaluate(u: float, h: float) -> float:
        return _remove_epsilon(min(1.0 - 1e-12, _decimal(math.exp(u), up=False)), nm, steps, delta, h)

    u, _, _ = _ladder(
        evaluate,
        epsilon,
        math.log(guess),
        increasing=True,
        finest=_certified_interval(guess, nm, steps, given),
        u_max=math.log(1.0 - 1e-12),
        coarsest=_coarsest(_clt_mu(guess, nm, 1.0)),
    )
    q = min(1.0 - 1e-12, _decimal(math.exp(u), up=False))
    q, cert = _meet(lambda v: _certify(v, nm, steps, delta, given), q, epsilon, up=False, limit=0.0)
    return result(q, cert.epsilon, CalibrationMethod.PLD, cert.value_discretization_interval, "", cert.lower)


def largest_batch_size(
    epsilon: float,
    delta: float,
    *,
    dataset_size: int,
    noise_multiplier: float,
    epochs: float | None = None,
    steps: int | None = None,
    value_discretization_interval: float | None = None,
    method: CalibrationMethod | str = "pld",
) -> EventCalibration:
    """The largest expected batch size B (Poisson sampling, q = B/N) for which DP-SGD meets (ε, δ).

    Args:
        epsilon: the target ε (> 0).
        delta: the target δ, in (0, 1).
        dataset_size: N (an integer >= 1).
        noise_multiplier: nm = σ/Δ (>= 0, +inf allowed).
        epochs: E, instead of ``steps`` (T = ⌈E·N/B⌉: a larger batch takes fewer steps).
        steps: T, a fixed number of steps, instead of ``epochs``.
        value_discretization_interval: the ladder's finest interval (None: 1e-4 unless ε is in the tens).
        method: "pld" (tight) or "rdp" (looser, faster); "pld" by default.

    Returns:
        The :class:`EventCalibration`: B (0 if not even B = 1 meets the target).

    Raises:
        ValueError: a bad value or type, an unknown method, not exactly one of E and T, or a target below what the
            PLD resolves (use rdp).
    """
    from .dp_sgd import rate_up, steps_for_epochs

    epsilon, delta = _check_common(epsilon, delta)
    method = check_member("method", method, CalibrationMethod)
    n = check_count("dataset_size", dataset_size)
    nm = check_extended_nonnegative("noise_multiplier", noise_multiplier)
    if (epochs is None) == (steps is None):
        raise ValueError("give exactly one of epochs and steps")
    given = _given(value_discretization_interval)

    def schedule(b: int) -> tuple[float, int]:
        from fractions import Fraction

        t = steps_for_epochs(epochs, n, b) if epochs is not None else check_count("steps", steps)
        return rate_up(Fraction(b, n)), t

    def result(
        b: int, cal: EventCalibration | None, eps: float, lower: float | None, note: str = ""
    ) -> EventCalibration:
        q, t = schedule(max(b, 1))
        h = None if cal is None else cal.value_discretization_interval
        m = "exact" if cal is None else cal.method
        return EventCalibration("batch_size", b, eps, delta, epsilon, nm, t, q, m, h, note, lower)

    if epochs is not None:
        check_positive("epochs", epochs)
    if steps is not None:  # q alone varies: the largest q, as a whole batch
        cal = largest_sampling_probability(epsilon, delta, noise_multiplier=nm, steps=steps, method=method)
        b = min(n, int(math.floor(cal.value * n)))
        while b > 0:
            q, t = schedule(b)
            if q <= cal.value:
                return result(b, cal, cal.epsilon, cal.epsilon_lower, cal.note)
            b -= 1
        return result(0, cal, 0.0, 0.0, "not even a batch of 1 meets the target")

    def eps_of(b: int) -> tuple[float, float | None, float | None]:
        q, t = schedule(b)
        if method == CalibrationMethod.RDP:
            return round_up(_rdp_epsilon(q, nm, t, delta)), None, None
        if q >= 1.0:
            e = gdp_epsilon_unchecked(round_up(math.sqrt(t) / nm), delta) if nm > 0 else math.inf
            return e, e, None
        if nm == math.inf:
            return 0.0, 0.0, None
        cert = _certify(q, nm, t, delta, given)
        return cert.epsilon, cert.lower, cert.value_discretization_interval

    full = eps_of(n)
    if full[0] <= epsilon:
        return result(n, None, full[0], full[1], "the whole dataset in every batch meets the target")
    if eps_of(1)[0] > epsilon:
        return result(0, None, 0.0, 0.0, "not even a batch of 1 meets the target")
    mu = gdp_mu_unchecked(epsilon, delta)
    assert epochs is not None  # (steps given returned above)
    growth = epochs * math.expm1(min(1.0 / (nm * nm), 700.0)) / n  # CLT: μ² ≈ B·E·(e^{1/nm²} − 1)/N
    guess = min(float(n - 1), max(1.0, mu * mu / growth)) if growth > 0 else 1.0
    if method == CalibrationMethod.RDP:
        lo, hi = 1, n  # ε(lo) <= target < ε(hi): bisect on whole batches
    else:

        def evaluate(u: float, h: float) -> float:
            q, t = schedule(min(n, max(1, int(round(math.exp(u))))))
            return _remove_epsilon(q, nm, t, delta, h)

        q0, t0 = schedule(max(1, int(guess)))
        u, _, _ = _ladder(
            evaluate,
            epsilon,
            math.log(guess),
            increasing=True,
            finest=_certified_interval(q0, nm, t0, given),
            u_min=0.0,
            u_max=math.log(n),
            coarsest=_coarsest(_clt_mu(q0, nm, 1.0)),
        )
        b = min(n - 1, max(1, int(round(math.exp(u)))))
        lo, hi = (b, min(n, b + max(1, b // 500))) if eps_of(b)[0] <= epsilon else (1, b)
        while hi < n and eps_of(hi)[0] <= epsilon:  # bracket the largest whole batch from above
            lo, hi = hi, min(n, hi + 2 * (hi - lo))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if eps_of(mid)[0] <= epsilon else (lo, mid)
    eps, lower, h = eps_of(lo)
    q, t = schedule(lo)
    return EventCalibration("batch_size", lo, eps, delta, epsilon, nm, t, q, method, h, "", lower)
