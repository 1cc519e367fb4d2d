"""``dpkit calibrate --solve``: given σ, DP-SGD's largest number of steps (or epochs), batch size or sampling rate
that meets (ε, δ), with the certified ε of the answer (the σ-finding forms: :mod:`dpkit.commands.calibrate_events`)."""

from __future__ import annotations

import math
from typing import Any

import click

from dpkit.accountant.event_calibration import CalibrationMethod
from dpkit.render import busy, certainty_cells, emit_json, format_number, print_table

from .dp_sgd_options import dp_sgd_given, schedule_of
from .mechanisms import save_event
from .options import compositions_count
from .refusals import given, refuse_options

__all__ = ["solve_dp_sgd", "schedule_of_steps"]


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
    if method not in (CalibrationMethod.PLD, CalibrationMethod.RDP):
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
    from dpkit.accountant.dp_sgd import SamplingSchedule

    if not (cal.steps >= 1 and math.isfinite(cal.steps)):
        raise ValueError(f"--save-event: no event to write (the answer is {cal.steps} steps)")
    schedule = SamplingSchedule(cal.sampling_probability, int(cal.steps))
    return save_event(path, schedule.event(nm))
