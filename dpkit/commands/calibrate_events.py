"""``dpkit calibrate`` beyond K Gaussian releases: the noise multiplier of K DP-SGD steps (``--sampling-rate``), the
largest number of steps or sampling rate a σ allows (``--solve``), and the noise scale of an event (``--event``)."""

from __future__ import annotations

from typing import Any

import click

from dpkit.accountant import calibrate_ledger_scale, make_accountant
from dpkit.accountant.numerics import round_up
from dpkit.render import busy, emit_json, format_number, print_table

from .mechanisms import Mechanism

__all__ = ["solve_dp_sgd", "calibrate_dp_sgd", "calibrate_event"]


def solve_dp_sgd(
    ctx: click.Context,
    solve: str,
    epsilon: float,
    delta: float,
    sigma: float | None,
    sensitivity: float,
    compositions: float,
    method: str | None,
    sampling_rate: float | None,
    as_json: bool,
) -> None:
    """The largest number of DP-SGD steps (q, σ given) or the largest Poisson sampling rate (σ, K given)."""
    from dpkit.accountant.event_calibration import largest_sampling_probability, largest_steps
    from dpkit.accountant.validation import check_noise_scale, check_unit_interval

    from .options import compositions_count, given, refuse_options

    refuse_options(ctx, ["event_file", "relation", "conversion"], f"--solve {solve}")
    if solve == "steps":
        refuse_options(ctx, ["compositions"], "--solve steps (it finds the number of steps)")
    if solve == "sampling-rate" and given(ctx, "sampling_rate"):
        raise click.UsageError("--sampling-rate does not apply to --solve sampling-rate (it finds the rate)")
    if sigma is None:
        raise click.UsageError(f"--solve {solve} needs --sigma")
    if solve == "steps" and sampling_rate is None:
        raise click.UsageError("--solve steps needs --sampling-rate")
    method = method or "pld"
    if method not in ("pld", "rdp"):
        raise click.UsageError(f"--solve {solve} takes --method pld or rdp, got {method}")
    from dpkit import accountant

    nm = check_noise_scale("sigma", sigma) / accountant.check_positive("sensitivity", sensitivity)
    with busy(f"solving for the largest {solve.replace('-', ' ')}…"):
        if solve == "steps":
            q = check_unit_interval("sampling-rate", sampling_rate)
            cal = largest_steps(epsilon, delta, sampling_probability=q, noise_multiplier=nm, method=method)
        else:
            k = compositions_count(compositions)
            cal = largest_sampling_probability(epsilon, delta, noise_multiplier=nm, steps=k, method=method)
    out = {**cal.to_dict(), "sigma": sigma, "sensitivity": sensitivity}
    if as_json:
        emit_json(out)
        return
    print_table(
        f"largest {solve.replace('-', ' ')} for (ε, δ) = ({format_number(epsilon)}, {format_number(delta)}), "
        f"σ = {format_number(sigma)}, Δ = {format_number(sensitivity)}",
        ["method", "steps", "sampling rate", "ε achieved"],
        [
            [
                cal.method,
                format_number(cal.steps, 10),
                format_number(cal.sampling_probability, 10),
                format_number(cal.epsilon, 10),
            ]
        ],
        caption=cal.note or None,
    )


def calibrate_dp_sgd(
    mech: Mechanism, epsilon: float, delta: float, method: str, conversion: str | None
) -> tuple[dict[str, Any], list[list[str]]]:
    """The noise multiplier of K DP-SGD steps (pld: the pessimistic PLD; rdp: the subsampled Gaussian's curve)."""
    from dpkit.accountant.event_calibration import calibrate_noise_multiplier

    if method not in ("pld", "rdp"):
        reason = make_accountant(method, conversion=conversion).supports(mech.target).reason
        raise ValueError(f"{method}: {reason or 'it does not calibrate subsampled releases'}; use pld or rdp")
    if method == "rdp" and conversion not in (None, "improved"):
        raise ValueError(f"--conversion {conversion} does not apply to calibrating DP-SGD (rdp uses improved)")
    if method == "pld" and conversion is not None:
        raise ValueError("--conversion does not apply to method pld")
    q = float(mech.sampling_rate)  # type: ignore[arg-type]
    with busy("calibrating the noise multiplier…"):
        cal = calibrate_noise_multiplier(epsilon, delta, sampling_probability=q, steps=mech.compositions, method=method)
    sigma = round_up(cal.value * mech.sensitivity)  # never below the checked noise multiplier times Δ
    out = {
        "sigma": sigma,
        "noise_multiplier": cal.value,
        "epsilon": cal.epsilon,
        "delta": delta,
        "target_epsilon": epsilon,
        "method": method,
        "conversion": "improved" if method == "rdp" else None,
        "sensitivity": mech.sensitivity,
        "compositions": mech.compositions,
        "sampling_rate": q,
        "value_discretization_interval": cal.value_discretization_interval,
        "note": cal.note,
    }
    rows = [["σ", format_number(sigma, 10)], ["noise multiplier σ/Δ", format_number(cal.value, 10)]]
    if cal.note:
        rows.append(["note", cal.note])
    return out, rows


def calibrate_event(
    mech: Mechanism, epsilon: float, delta: float, method: str, conversion: str | None
) -> tuple[dict[str, Any], list[list[str]]]:
    """The smallest factor on every noise multiplier of the event that meets (ε, δ)."""
    from dpkit.accountant import Ledger
    from dpkit.accountant.events import describe
    from dpkit.accountant.ledger import EventRelease

    ledger = Ledger((EventRelease("event", mech.target),))  # type: ignore[arg-type]
    with busy("calibrating the event's noise…", method == "pld"):
        factor = calibrate_ledger_scale(ledger, epsilon, delta, method=method, conversion=conversion)
    scaled = ledger.scaled(factor)
    achieved = make_accountant(method, conversion=conversion).epsilon(scaled, delta)
    event = scaled.releases[0].event  # type: ignore[union-attr]
    out = {
        "scale": factor,
        "epsilon": achieved.epsilon,
        "delta": delta,
        "target_epsilon": epsilon,
        "method": achieved.method,
        "conversion": achieved.conversion,
        "compositions": mech.compositions,
        "event": event.to_dict(),
        "relation": event.relation,
    }
    return out, [["noise scale factor", format_number(factor, 10)], ["calibrated event", describe(event)]]
