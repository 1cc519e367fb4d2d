"""``dpkit calibrate``'s three forms and its ``--solve``: σ of K Gaussian releases, DP-SGD's noise multiplier, the noise
scale of an event, and — given σ — DP-SGD's largest number of steps (or epochs), batch size or sampling rate.

Each answer carries the certified ε of what it calibrated, as ``dpkit epsilon`` reports it for that σ
(``epsilon_upper``, ``epsilon_lower``), and the mechanism itself (``--save-event`` writes it).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import click

from dpkit.accountant import Ledger, calibrate_ledger_scale, calibrate_sigma, make_accountant
from dpkit.render import busy, certainty_cells, emit_json, format_number, print_table

from .dp_sgd_options import dp_sgd_given, schedule_of
from .mechanisms import Mechanism, save_event
from .options import compositions_count
from .refusals import given, refuse_options

if TYPE_CHECKING:
    from dpkit.accountant.events import Event

__all__ = ["SOLVES", "solve_dp_sgd", "calibrate_gaussian", "calibrate_dp_sgd", "calibrate_event"]

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
    mech: Mechanism, epsilon: float, delta: float, method: str, conversion: str | None
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
    with busy("calibrating σ through dp-accounting's PLD…", method == "pld"):
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


def _check_methods(method: str, conversion: str | None, target: Any) -> None:
    from dpkit.accountant.event_calibration import CalibrationMethod

    if method not in tuple(CalibrationMethod):
        reason = make_accountant(method, conversion=conversion).supports(target).reason
        raise ValueError(f"{method}: {reason or 'it does not calibrate subsampled releases'}; use pld or rdp")
    if method == "rdp" and conversion not in (None, "improved"):
        raise ValueError(f"--conversion {conversion} does not apply to calibrating DP-SGD (rdp uses improved)")
    if method == "pld" and conversion is not None:
        raise ValueError("--conversion does not apply to method pld")


def calibrate_dp_sgd(
    mech: Mechanism, epsilon: float, delta: float, method: str, conversion: str | None
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
        "conversion": "improved" if method == "rdp" else None,
        "sensitivity": mech.sensitivity,
        "compositions": mech.compositions,
        **mech.schedule.to_dict(),
        "value_discretization_interval": cal.value_discretization_interval,
        "note": cal.note,
    }
    return _certified(out, cal.epsilon, cal.epsilon_lower), mech.schedule.event(cal.value)


def calibrate_event(
    mech: Mechanism, epsilon: float, delta: float, method: str, conversion: str | None
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
    with busy("calibrating the event's noise…", method == "pld"):
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


def solve_dp_sgd(ctx: click.Context, solve: str, epsilon: float, delta: float, sigma: float | None, **kw: Any) -> None:
    """Given σ, print DP-SGD's largest steps or epochs (q given), batch size (N, and E or T) or sampling rate (T).

    Args:
        ctx: The ``calibrate`` command's click context (its other options read from it).
        solve: ``--solve``: ``steps``, ``epochs``, ``batch-size`` or ``sampling-rate``.
        epsilon: The target ε.
        delta: The target δ.
        sigma: ``--sigma``, the noise's σ (required here).
        **kw: The other options of ``calibrate`` (``method``, ``sensitivity``, ``as_json``, …).

    Raises:
        click.UsageError: No σ, a method but ``pld`` or ``rdp``, or an option that clashes or is missing.
        ValueError: A bad value of an option.
    """
    from dpkit import accountant
    from dpkit.accountant.dp_sgd import epochs_for_steps
    from dpkit.accountant.event_calibration import (
        largest_batch_size,
        largest_sampling_probability,
        largest_steps,
    )
    from dpkit.accountant.validation import check_noise_scale

    refuse_options(ctx, ["event_file", "relation", "conversion"], f"--solve {solve}")
    if sigma is None:
        raise click.UsageError(f"--solve {solve} needs --sigma")
    finds = {"steps": "the number of steps", "epochs": "the number of steps", "sampling-rate": "the rate"}
    finds["batch-size"] = "the batch size"
    clash = {
        "steps": ["steps", "epochs", "compositions"],
        "epochs": ["steps", "epochs", "compositions"],
        "sampling-rate": ["sampling_rate", "dataset_size", "batch_size"],
        "batch-size": ["sampling_rate", "batch_size"],
    }[solve]
    refuse_options(ctx, clash, f"--solve {solve} (it finds {finds[solve]})")
    method = kw["method"] or "pld"
    if method not in ("pld", "rdp"):
        raise click.UsageError(f"--solve {solve} takes --method pld or rdp, got {method}")
    nm = check_noise_scale("sigma", sigma) / accountant.check_positive("sensitivity", kw["sensitivity"])
    p = ctx.params
    if solve == "epochs" and not (given(ctx, "dataset_size") and given(ctx, "batch_size")):
        raise click.UsageError("--solve epochs needs --dataset-size and --batch-size (or --solve steps with q)")
    if solve == "batch-size" and not given(ctx, "dataset_size"):
        raise click.UsageError("--solve batch-size needs --dataset-size and --epochs (or --steps)")
    with busy(f"solving for the largest {solve.replace('-', ' ')}…"):
        if solve in ("steps", "epochs"):
            if not dp_sgd_given(ctx):
                raise click.UsageError(f"--solve {solve} needs the sampling rate: --sampling-rate or N and B")
            q = schedule_of(ctx, None, need_steps=False).sampling_rate
            cal = largest_steps(epsilon, delta, sampling_probability=q, noise_multiplier=nm, method=method)
        elif solve == "sampling-rate":
            t = schedule_of_steps(ctx, kw["compositions"])
            cal = largest_sampling_probability(epsilon, delta, noise_multiplier=nm, steps=t, method=method)
        else:
            cal = largest_batch_size(
                epsilon,
                delta,
                dataset_size=p["dataset_size"],
                noise_multiplier=nm,
                epochs=p.get("epochs"),
                steps=p.get("steps") if given(ctx, "steps") else None,
                method=method,
            )
    out = {**cal.to_dict(), "sigma": sigma, "sensitivity": kw["sensitivity"]}
    n, b = p.get("dataset_size"), p.get("batch_size")
    if solve == "epochs" and n is not None and b is not None:
        out |= {"dataset_size": int(n), "batch_size": int(b), "epochs": epochs_for_steps(cal.steps, int(n), int(b))}
    if solve == "batch-size" and n is not None:
        out |= {"dataset_size": int(n), "batch_size": int(cal.value), "epochs": p.get("epochs")}
    saved = _save_solved(kw["save_event_file"], cal, nm)
    if saved is not None:
        out["saved_event"] = str(saved)
    if kw["as_json"]:
        emit_json(out)
        return
    found = {
        "steps": format_number(cal.steps, 10),
        "epochs": format_number(out.get("epochs"), 8),
        "batch-size": format_number(out.get("batch_size"), 10),
        "sampling-rate": format_number(cal.sampling_probability, 10),
    }[solve]
    print_table(
        f"largest {solve.replace('-', ' ')} for (ε, δ) = ({format_number(epsilon)}, {format_number(delta)}), "
        f"σ = {format_number(sigma)}, Δ = {format_number(kw['sensitivity'])}",
        ["method", solve.replace("-", " "), "steps", "sampling rate", "certified ε", "truth ≥"],
        [
            [
                cal.method,
                found,
                format_number(cal.steps, 10),
                format_number(cal.sampling_probability, 10),
                *certainty_cells(cal.epsilon, cal.epsilon_lower),
            ]
        ],
        caption="\n".join(n for n in (cal.note, None if saved is None else f"event written to {saved}") if n) or None,
    )


def schedule_of_steps(ctx: click.Context, compositions: float) -> int:
    """The number of steps of ``--solve sampling-rate``: --steps or --compositions (--epochs is not enough).

    Args:
        ctx: The ``calibrate`` command's click context.
        compositions: ``--compositions``, used where ``--steps`` is not given.

    Returns:
        The number of steps.

    Raises:
        click.UsageError: Both ``--steps`` and ``--compositions`` given.
        ValueError: A count that is not a positive integer.
    """
    if given(ctx, "steps"):
        if given(ctx, "compositions"):
            raise click.UsageError("--steps and --compositions say the same for DP-SGD: give one")
        return compositions_count(ctx.params["steps"])
    return compositions_count(compositions)


def _save_solved(path: Any, cal: Any, nm: float) -> Any:
    if path is None:
        return None
    from dpkit.accountant.dp_sgd import Schedule

    if not (cal.steps >= 1 and math.isfinite(cal.steps)):
        raise ValueError(f"--save-event: no event to write (the answer is {cal.steps} steps)")
    schedule = Schedule(cal.sampling_probability, int(cal.steps))
    return save_event(path, schedule.event(nm))
