"""``dpkit calibrate``, ``epsilon``, ``delta`` and ``methods``: the accounting of Gaussian releases, of DP-SGD in its
users' terms (``--dataset-size N --batch-size B --epochs E``, or ``--sampling-rate`` and ``--steps``) and of any
mechanism given as an event (``--event FILE.json``; :mod:`.mechanisms`).

Every ε (or δ) is printed with its certainty, the same way everywhere: exact, or an upper bound and the interval
the truth lies in (``ε ≤ 2.99898277, truth in [2.99851061, 2.99898277]``), or an upper bound alone where nothing
bounds it below; the JSON carries ``epsilon_upper`` and ``epsilon_lower`` (``delta_…`` for ``dpkit delta``).
``calibrate`` reports the certified ε of its answer as ``epsilon`` reports it for that σ: the same figure.
"""

from __future__ import annotations

import math
from typing import Any

import click

from dpkit.accountant import Guarantee, compare_methods, make_accountant
from dpkit.accountant.accountants import AccountingMethod
from dpkit.accountant.validation import target_warnings
from dpkit.render import busy, certainty, certainty_cells, emit_json, format_number, print_table

from .calibrate_events import SOLVES, calibrate_dp_sgd, calibrate_event, calibrate_gaussian
from .dp_sgd_options import mechanism_options
from .mechanisms import Mechanism, build_mechanism, default_method, save_event
from .option_types import COUNT, NUMBER
from .options import comparison_rows, guarantee_label, method_options


def _account(
    mechanism: Mechanism, method: AccountingMethod, conversion: str | None, query: str, value: float
) -> Guarantee:
    acc = make_accountant(method, conversion=conversion)
    with busy("accounting through dp-accounting's PLD…", method == AccountingMethod.PLD):
        return acc.epsilon(mechanism.target, value) if query == "epsilon" else acc.delta(mechanism.target, value)


def _order(g: Guarantee) -> str:
    return "" if g.order is None else f" at order α = {format_number(g.order)}"


@click.command()
@click.option("--epsilon", type=NUMBER, required=True, help="Target ε.")
@click.option("--delta", type=NUMBER, required=True, help="Target δ.")
@click.option(
    "--solve",
    type=click.Choice(SOLVES),
    default="sigma",
    show_default=True,
    help="DP-SGD, given --sigma: the largest number of steps or epochs, batch size or sampling rate that meets (ε, δ).",
)
@click.option("--sigma", type=NUMBER, default=None, help="With --solve other than sigma: the noise σ.")
@method_options
@mechanism_options
@click.pass_context
def calibrate(ctx: click.Context, epsilon: float, delta: float, solve: str, sigma: float | None, **kw: Any) -> None:
    """The smallest σ meeting (ε, δ) for K releases of sensitivity Δ; for DP-SGD (--dataset-size N --batch-size B
    --epochs E, or --sampling-rate and --steps), its noise multiplier; with --event, the factor on every noise
    multiplier of the event. With --solve, the largest number of DP-SGD steps (or epochs), batch size or
    sampling rate that a given σ allows. --save-event FILE writes the calibrated mechanism as a DpEvent file."""
    warned = target_warnings(epsilon, delta)  # a target that looks like a mistake: answered, and said (and in --json)
    for note in warned:
        click.echo(f"warning: {note}", err=True)
    if solve != "sigma":
        from .calibrate_solve import solve_dp_sgd

        solve_dp_sgd(ctx, solve, epsilon, delta, sigma, **kw)
        return
    if sigma is not None:
        raise click.UsageError("--sigma applies to --solve steps|epochs|batch-size|sampling-rate (calibrate finds σ)")
    mech = build_mechanism(ctx, sigma=None, **kw)
    if delta == 0.0 and mech.form == "dp-sgd":  # the Gaussian form answers σ = ∞; an event's calibration refuses δ = 0
        raise ValueError(
            "delta = 0 (pure ε-DP) is met by no finite noise multiplier: DP-SGD's noise is Gaussian; give delta > 0"
        )
    method, conversion = default_method(kw["method"], mech.gaussian), kw["conversion"]
    target: Any
    if mech.form == "gaussian":
        out, target = calibrate_gaussian(mech, epsilon, delta, method, conversion)
    elif mech.form == "dp-sgd":
        out, target = calibrate_dp_sgd(mech, epsilon, delta, method, conversion)
    else:
        out, target = calibrate_event(mech, epsilon, delta, method, conversion)
    saved = save_event(kw["save_event_file"], target)
    if saved is not None:
        out["saved_event"] = str(saved)
    if kw["as_json"]:
        emit_json(out | {"warnings": warned})
        return
    label = out["method"] if out.get("conversion") is None else f"{out['method']} ({out['conversion']})"
    target_text = f"(ε, δ) = ({format_number(epsilon)}, {format_number(delta)})"
    # σ = ∞ (δ = 0): nothing released, no ε to certify (the note says why)
    sure = ["—", "—"] if out["epsilon_upper"] is None else certainty_cells(out["epsilon_upper"], out["epsilon_lower"])
    notes = [n for n in (out.get("note"), None if saved is None else f"event written to {saved}") if n]
    if mech.form == "event":
        print_table(
            f"noise scale for {target_text}, K = {mech.compositions}",
            ["method", "scale", "certified ε", "truth ≥"],
            [[label, format_number(out["scale"], 10), *sure]],
            caption="\n".join([f"calibrated: {out['event_text']}", *notes]),
        )
        return
    if mech.schedule is not None:
        title, notes = f"σ for {target_text}, DP-SGD", [f"DP-SGD: {mech.schedule.describe()}", *notes]
    else:
        title = f"σ for {target_text}, {mech.describe(calibrating=True)}"
    print_table(
        title,
        ["method", "σ", "σ/Δ", "certified ε", "truth ≥"],
        [[label, format_number(out["sigma"], 10), format_number(out["noise_multiplier"], 10), *sure]]
        if out["sigma"] < math.inf
        else [[label, "∞", "∞", *sure]],
        caption="\n".join(notes) or None,
    )


def _query(ctx: click.Context, what: str, sigma: float | None, value: float, **kw: Any) -> None:
    mech = build_mechanism(ctx, sigma=sigma, **kw)
    if sigma is None and mech.form != "event":
        raise click.UsageError("give --sigma (or --event FILE)")
    method = default_method(kw["method"], mech.gaussian)
    g = _account(mech, method, kw["conversion"], "epsilon" if what == "delta" else "delta", value)
    saved = save_event(kw["save_event_file"], mech.target)
    if kw["as_json"]:
        emit_json({**g.to_dict(), **mech.to_dict(), **({} if saved is None else {"saved_event": str(saved)})})
        return
    if what == "delta":
        text = certainty("ε", g.epsilon, g.lower, f"at δ = {format_number(value)}")
    else:
        text = certainty("δ", g.delta, g.lower, f"at ε = {format_number(value)}")
    click.echo(f"{text} ({guarantee_label(g)}{_order(g)})")
    if mech.form == "dp-sgd":
        click.echo(mech.describe())
    if saved is not None:
        click.echo(f"event written to {saved}")


@click.command()
@click.option("--sigma", type=NUMBER, default=None, help="Noise standard deviation σ (σ = inf: nothing released).")
@click.option("--delta", type=NUMBER, required=True)
@method_options
@mechanism_options
@click.pass_context
def epsilon(ctx: click.Context, sigma: float | None, delta: float, **kw: Any) -> None:
    """ε(δ) of K Gaussian releases with noise σ and sensitivity Δ, of DP-SGD (--dataset-size, --batch-size and
    --epochs, or --sampling-rate and --steps) or of an event (--event), with the interval the truth lies in."""
    _query(ctx, "delta", sigma, delta, **kw)


@click.command()
@click.option("--sigma", type=NUMBER, default=None, help="Noise standard deviation σ (σ = inf: nothing released).")
@click.option("--epsilon", type=NUMBER, required=True)
@method_options
@mechanism_options
@click.pass_context
def delta(ctx: click.Context, sigma: float | None, epsilon: float, **kw: Any) -> None:
    """δ(ε) of K Gaussian releases with noise σ and sensitivity Δ, of DP-SGD (--dataset-size, --batch-size and
    --epochs, or --sampling-rate and --steps) or of an event (--event), with the interval the truth lies in."""
    _query(ctx, "epsilon", sigma, epsilon, **kw)


@click.command()
@click.option("--sigma", type=NUMBER, default=None)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True)
@click.option("--compositions", "-k", type=COUNT, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@mechanism_options
@click.pass_context
def methods(
    ctx: click.Context, sigma: float | None, delta: float, sensitivity: float, as_json: bool, **kw: Any
) -> None:
    """The ε of every accounting method side by side (a method that cannot interpret the mechanism says why)."""
    mech = build_mechanism(ctx, sigma=sigma, sensitivity=sensitivity, **kw)
    if sigma is None and mech.form != "event":
        raise click.UsageError("give --sigma (or --event FILE)")
    with busy("accounting under every method (PLD takes a moment)…"):
        cmp = compare_methods(mech.target, delta)
    saved = save_event(kw["save_event_file"], mech.target)
    target = mech.target
    mu = target.mu if mech.gaussian else None  # type: ignore[union-attr]
    rho = target.rho if mech.gaussian else None  # type: ignore[union-attr]
    if as_json:
        emit_json(
            {
                "methods": cmp.epsilons,
                "refusals": cmp.refusals,
                "lower_bounds": cmp.lowers,
                "orders": cmp.orders,
                "delta": cmp.delta,
                "sigma": sigma,
                "sensitivity": None if mech.form == "event" else sensitivity,
                "compositions": mech.compositions,
                "sampling_rate": mech.sampling_rate,
                "mu": mu,
                "rho": rho,
                **mech.to_dict(),
                **({} if saved is None else {"saved_event": str(saved)}),
            }
        )
        return
    extra = f"  (μ = {format_number(mu)}, ρ = {format_number(rho)})" if mu is not None else ""
    print_table(
        f"ε at δ = {format_number(delta)} for {mech.describe()}{extra}",
        ["method", "ε", "÷ exact", "note"],
        comparison_rows(cmp, reasons=not mech.gaussian),
        caption=None if saved is None else f"event written to {saved}",
    )
