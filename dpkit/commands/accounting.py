"""``dpkit calibrate``, ``epsilon``, ``delta`` and ``methods``: the accounting of Gaussian releases, DP-SGD steps
(``--sampling-rate``) and any mechanism given as an event (``--event FILE.json``; :mod:`.mechanisms`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dpkit.accountant import Guarantee, calibrate_sigma, compare_methods, make_accountant
from dpkit.accountant.validation import target_warnings
from dpkit.render import busy, emit_json, format_number, print_table

from .calibrate_events import calibrate_dp_sgd, calibrate_event, solve_dp_sgd
from .mechanisms import Mechanism, build_mechanism, default_method, mechanism_options
from .options import NUMBER, comparison_rows, guarantee_label, method_options


def _account(mechanism: Mechanism, method: str, conversion: str | None, query: str, value: float) -> Guarantee:
    acc = make_accountant(method, conversion=conversion)
    with busy("accounting through dp-accounting's PLD…", method == "pld"):
        return acc.epsilon(mechanism.target, value) if query == "epsilon" else acc.delta(mechanism.target, value)


def _order(g: Guarantee) -> str:
    extra = "" if g.order is None else f" at order α = {format_number(g.order)}"
    return extra + ("" if g.error is None else f", discretisation error <= {format_number(g.error, 3)}")


@click.command()
@click.option("--epsilon", type=NUMBER, required=True, help="Target ε.")
@click.option("--delta", type=NUMBER, required=True, help="Target δ.")
@click.option(
    "--solve",
    type=click.Choice(("sigma", "steps", "sampling-rate")),
    default="sigma",
    show_default=True,
    help="DP-SGD: the largest number of steps for (--sampling-rate, --sigma), or the largest sampling rate for "
    "(--sigma, --compositions).",
)
@click.option("--sigma", type=NUMBER, default=None, help="With --solve steps|sampling-rate: the noise σ.")
@method_options
@mechanism_options
@click.pass_context
def calibrate(
    ctx: click.Context,
    epsilon: float,
    delta: float,
    solve: str,
    sigma: float | None,
    sensitivity: float,
    compositions: float,
    method: str | None,
    conversion: str | None,
    as_json: bool,
    sampling_rate: float | None,
    event_file: Path | None,
    relation: str | None,
) -> None:
    """The smallest σ meeting (ε, δ) for K releases of sensitivity Δ; with --sampling-rate, the noise multiplier
    of K DP-SGD steps; with --event, the factor on every noise multiplier of the event. With --solve, the largest
    number of DP-SGD steps or the largest sampling rate that a given σ allows."""
    notes = target_warnings(epsilon, delta)  # a target that looks like a mistake: answered, and said (and in --json)
    for note in notes:
        click.echo(f"warning: {note}", err=True)
    if solve != "sigma":
        solve_dp_sgd(ctx, solve, epsilon, delta, sigma, sensitivity, compositions, method, sampling_rate, as_json)
        return
    if sigma is not None:
        raise click.UsageError("--sigma applies to --solve steps|sampling-rate only (calibrate solves for σ)")
    mech = build_mechanism(
        ctx,
        sigma=None,
        sensitivity=sensitivity,
        compositions=compositions,
        sampling_rate=sampling_rate,
        event_file=event_file,
        relation=relation,
    )
    method = default_method(method, mech.gaussian)
    if mech.form == "gaussian":
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
        rows = [["σ", format_number(cal.sigma, 10)], ["σ/Δ", format_number(cal.noise_multiplier, 10)]]
    elif mech.form == "dp-sgd":
        out, rows = calibrate_dp_sgd(mech, epsilon, delta, method, conversion)
    else:
        out, rows = calibrate_event(mech, epsilon, delta, method, conversion)
    if as_json:
        emit_json(out | {"warnings": notes})
        return
    label = out["method"] if out.get("conversion") is None else f"{out['method']} ({out['conversion']})"
    target = f"(ε, δ) = ({format_number(epsilon)}, {format_number(delta)})"
    if mech.form == "event":
        print_table(
            f"noise scale for {target}, K = {mech.compositions}",
            ["method", "scale", "ε achieved"],
            [[label, format_number(out["scale"], 10), format_number(out["epsilon"], 10)]],
            caption=f"calibrated: {rows[1][1]}",
        )
        return
    sampled = "" if mech.sampling_rate is None else f", Poisson sampling rate {format_number(mech.sampling_rate)}"
    print_table(
        f"σ for {target}, Δ = {format_number(mech.sensitivity)}, K = {mech.compositions}{sampled}",
        ["method", "σ", "σ/Δ", "ε achieved"],
        [[label, rows[0][1], rows[1][1], format_number(out["epsilon"], 10)]],
        caption=out.get("note") or None,
    )


def _query(ctx: click.Context, what: str, sigma: float | None, value: float, **kw: Any) -> None:
    mech = build_mechanism(
        ctx,
        sigma=sigma,
        sensitivity=kw["sensitivity"],
        compositions=kw["compositions"],
        sampling_rate=kw["sampling_rate"],
        event_file=kw["event_file"],
        relation=kw["relation"],
    )
    if sigma is None and mech.form != "event":
        raise click.UsageError("give --sigma (or --event FILE)")
    method = default_method(kw["method"], mech.gaussian)
    g = _account(mech, method, kw["conversion"], "epsilon" if what == "delta" else "delta", value)
    if kw["as_json"]:
        emit_json({**g.to_dict(), **mech.to_dict()})
        return
    if what == "delta":
        text = f"epsilon = {format_number(g.epsilon, 12)} at delta = {format_number(value)}"
    else:
        text = f"delta = {format_number(g.delta, 12)} at epsilon = {format_number(value)}"
    click.echo(f"{text} ({guarantee_label(g)}{_order(g)})")


@click.command()
@click.option("--sigma", type=NUMBER, default=None, help="Noise standard deviation σ (σ = inf: nothing released).")
@click.option("--delta", type=NUMBER, required=True)
@method_options
@mechanism_options
@click.pass_context
def epsilon(ctx: click.Context, sigma: float | None, delta: float, **kw: Any) -> None:
    """ε(δ) of K Gaussian releases with noise σ and sensitivity Δ, of K DP-SGD steps (--sampling-rate) or of an
    event (--event)."""
    _query(ctx, "delta", sigma, delta, **kw)


@click.command()
@click.option("--sigma", type=NUMBER, default=None, help="Noise standard deviation σ (σ = inf: nothing released).")
@click.option("--epsilon", type=NUMBER, required=True)
@method_options
@mechanism_options
@click.pass_context
def delta(ctx: click.Context, sigma: float | None, epsilon: float, **kw: Any) -> None:
    """δ(ε) of K Gaussian releases with noise σ and sensitivity Δ, of K DP-SGD steps (--sampling-rate) or of an
    event (--event)."""
    _query(ctx, "epsilon", sigma, epsilon, **kw)


@click.command()
@click.option("--sigma", type=NUMBER, default=None)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True)
@click.option("--compositions", "-k", type=NUMBER, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@mechanism_options
@click.pass_context
def methods(
    ctx: click.Context,
    sigma: float | None,
    delta: float,
    sensitivity: float,
    compositions: float,
    as_json: bool,
    sampling_rate: float | None,
    event_file: Path | None,
    relation: str | None,
) -> None:
    """The ε of every accounting method side by side (a method that cannot interpret the mechanism says why)."""
    mech = build_mechanism(
        ctx,
        sigma=sigma,
        sensitivity=sensitivity,
        compositions=compositions,
        sampling_rate=sampling_rate,
        event_file=event_file,
        relation=relation,
    )
    if sigma is None and mech.form != "event":
        raise click.UsageError("give --sigma (or --event FILE)")
    with busy("accounting under every method (PLD takes a moment)…"):
        cmp = compare_methods(mech.target, delta)
    target = mech.target
    mu = target.mu if mech.gaussian else None  # type: ignore[union-attr]
    rho = target.rho if mech.gaussian else None  # type: ignore[union-attr]
    if as_json:
        emit_json(
            {
                "methods": cmp.epsilons,
                "refusals": cmp.refusals,
                "orders": cmp.orders,
                "delta": cmp.delta,
                "sigma": sigma,
                "sensitivity": None if mech.form == "event" else sensitivity,
                "compositions": mech.compositions,
                "sampling_rate": mech.sampling_rate,
                "mu": mu,
                "rho": rho,
                **mech.to_dict(),
            }
        )
        return
    extra = f"  (μ = {format_number(mu)}, ρ = {format_number(rho)})" if mu is not None else ""
    print_table(
        f"ε at δ = {format_number(delta)} for {mech.describe()}{extra}",
        ["method", "ε", "÷ exact", "note"],
        comparison_rows(cmp, reasons=not mech.gaussian),
    )
