"""``dpkit calibrate``'s three forms: σ of K Gaussian releases (σ = ∞ for pure ε-DP, said why), DP-SGD's noise
multiplier and the noise scale of an event (``--solve``, given σ: :mod:`dpkit.commands.calibrate_solve`).

Each answer carries the certified ε of what it calibrated, as ``dpkit epsilon`` reports it for that σ
(``epsilon_upper``, ``epsilon_lower``), and the mechanism itself (``--save-event`` writes it).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from dpkit.accountant import Ledger, calibrate_ledger_scale, calibrate_sigma, make_accountant
from dpkit.accountant.accountants import AccountingMethod
from dpkit.accountant.event_calibration import CalibrationMethod
from dpkit.render import busy

from .mechanisms import Mechanism

if TYPE_CHECKING:
    from dpkit.accountant.events import Event

__all__ = ["SOLVES", "calibrate_gaussian", "calibrate_dp_sgd", "calibrate_event"]

#: What ``calibrate --solve`` finds.
SOLVES = ("sigma", "steps", "epochs", "batch-size", "sampling-rate")


#: Why ``calibrate --delta 0`` answers σ = ∞ for Gaussian releases.
PURE_DP = (
    "no finite σ gives pure ε-DP (δ = 0): a Gaussian's δ(ε) is positive at every ε, so only σ = ∞ (releasing "
    "nothing) meets it; give δ > 0, or use a mechanism that is pure ε-DP (Laplace)"
)
#: Why a certified ε of 0 below a positive target is no rounding.
ZERO_EPSILON = (
    "certified ε = 0: at this σ the releases are (0, δ)-DP (the neighbours' outputs lie within δ in total "
    "variation), which meets any ε ≥ 0"
)


def _certified(out: dict[str, Any], upper: float, lower: float | None) -> dict[str, Any]:
    return out | {"epsilon": upper, "epsilon_upper": upper, "epsilon_lower": lower}


def calibrate_gaussian(
    mech: Mechanism, epsilon: float, delta: float, method: AccountingMethod, conversion: str | None
) -> tuple[dict[str, Any], Ledger | None]:
    """σ of K Gaussian releases under ``method``, and its ε as ``dpkit epsilon`` gives it.

    Args:
        mech: The mechanism the options describe (:func:`~dpkit.commands.mechanisms.build_mechanism`).
        epsilon: The target ε.
        delta: The target δ.
        method: The accounting method.
        conversion: ``--conversion``, the conversion to (ε, δ), or None.

    Returns:
        The answer as ``--json`` prints it, and the ledger calibrated (None at the ends: no noise, or none enough).

    Raises:
        ValueError: A bad target, method or conversion.
    """
    with busy("calibrating σ through dp-accounting's PLD…", method == CalibrationMethod.PLD):
        cal = calibrate_sigma(
            epsilon,
            delta,
            sensitivity=mech.sensitivity,
            compositions=mech.compositions,
            method=method,
            conversion=conversion,
        )
    keys = ("sigma", "epsilon", "delta", "method", "conversion", "target_epsilon", "sensitivity", "compositions")
    out: dict[str, Any] = {k: cal.to_dict()[k] for k in keys} | {"noise_multiplier": cal.noise_multiplier}
    if cal.sigma == math.inf and delta == 0.0:  # pure ε-DP: no Gaussian meets it, σ = ∞ releases nothing
        return out | {"epsilon": None, "epsilon_upper": None, "epsilon_lower": None, "note": PURE_DP}, None
    if not 0.0 < cal.sigma < math.inf:  # the other end: no noise needed (δ = 1, ε = ∞)
        return _certified(out, cal.epsilon, cal.epsilon), None
    ledger = Ledger.homogeneous(mech.sensitivity, cal.sigma, compositions=mech.compositions)
    g = make_accountant(method, conversion=conversion).epsilon(ledger, delta)
    if g.epsilon == 0.0 < epsilon:
        out["note"] = ZERO_EPSILON
    return _certified(out, g.epsilon, g.lower), ledger


def _check_methods(method: AccountingMethod, conversion: str | None, target: Any) -> None:
    from dpkit.accountant.event_calibration import CalibrationMethod

    if method not in tuple(CalibrationMethod):
        reason = make_accountant(method, conversion=conversion).supports(target).reason
        raise ValueError(f"{method}: {reason or 'it does not calibrate subsampled releases'}; use pld or rdp")
    if method == CalibrationMethod.RDP and conversion not in (None, "improved"):
        raise ValueError(f"--conversion {conversion} does not apply to calibrating DP-SGD (rdp uses improved)")
    if method == CalibrationMethod.PLD and conversion is not None:
        raise ValueError("--conversion does not apply to method pld")


def calibrate_dp_sgd(
    mech: Mechanism, epsilon: float, delta: float, method: AccountingMethod, conversion: str | None
) -> tuple[dict[str, Any], Event]:
    """DP-SGD's noise multiplier (10 significant digits, rounded up) and its certified ε (the interval).

    Args:
        mech: The mechanism the options describe (:func:`~dpkit.commands.mechanisms.build_mechanism`).
        epsilon: The target ε.
        delta: The target δ.
        method: The accounting method.
        conversion: ``--conversion``, the conversion to (ε, δ), or None.

    Returns:
        The answer as ``--json`` prints it, and the calibrated DP-SGD event.

    Raises:
        ValueError: A method that cannot calibrate subsampled releases, a conversion that does not apply.
    """
    from dpkit.accountant.event_calibration import calibrate_noise_multiplier

    _check_methods(method, conversion, mech.target)
    assert mech.schedule is not None
    q = mech.schedule.sampling_rate
    with busy("calibrating the noise multiplier…"):
        cal = calibrate_noise_multiplier(epsilon, delta, sampling_probability=q, steps=mech.compositions, method=method)
    from dpkit.accountant.numerics import round_up

    # σ = nm·Δ, never below the certified noise multiplier times Δ (exactly nm for DP-SGD's usual Δ = 1)
    sigma = cal.value if mech.sensitivity == 1.0 else round_up(cal.value * mech.sensitivity)
    out = {
        "sigma": sigma,
        "epsilon": cal.epsilon,
        "noise_multiplier": cal.value,
        "delta": delta,
        "target_epsilon": epsilon,
        "method": method,
        "conversion": "improved" if method == CalibrationMethod.RDP else None,
        "sensitivity": mech.sensitivity,
        "compositions": mech.compositions,
        **mech.schedule.to_dict(),
        "value_discretization_interval": cal.value_discretization_interval,
        "note": cal.note,
    }
    return _certified(out, cal.epsilon, cal.epsilon_lower), mech.schedule.event(cal.value)


def calibrate_event(
    mech: Mechanism, epsilon: float, delta: float, method: AccountingMethod, conversion: str | None
) -> tuple[dict[str, Any], Event]:
    """The smallest factor on every noise multiplier of the event that meets (ε, δ).

    Args:
        mech: The mechanism the options describe (:func:`~dpkit.commands.mechanisms.build_mechanism`).
        epsilon: The target ε.
        delta: The target δ.
        method: The accounting method.
        conversion: ``--conversion``, the conversion to (ε, δ), or None.

    Returns:
        The answer as ``--json`` prints it (the factor, the certified ε, the scaled event), and the scaled event.

    Raises:
        ValueError: A bad target, or a method that cannot account for the event.
    """
    from dpkit.accountant.events import describe
    from dpkit.accountant.ledger import EventRelease

    ledger = Ledger((EventRelease("event", mech.target),))  # type: ignore[arg-type]
    with busy("calibrating the event's noise…", method == CalibrationMethod.PLD):
        factor = calibrate_ledger_scale(ledger, epsilon, delta, method=method, conversion=conversion)
    scaled = ledger.scaled(factor)
    event = scaled.releases[0].event  # type: ignore[union-attr]
    achieved = make_accountant(method, conversion=conversion).epsilon(event, delta)
    out = {
        "scale": factor,
        "delta": delta,
        "target_epsilon": epsilon,
        "method": achieved.method,
        "conversion": achieved.conversion,
        "compositions": mech.compositions,
        "event": event.to_dict(),
        "relation": event.relation,
        "event_text": describe(event),
    }
    return _certified(out, achieved.epsilon, achieved.lower), event
