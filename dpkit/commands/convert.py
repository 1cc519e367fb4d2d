"""``dpkit convert``: stand-alone conversions between privacy currencies."""

from __future__ import annotations

import math
from typing import Any, cast

import click

from dpkit import accountant
from dpkit.accountant import RDP_CONVERSIONS, ZCDP_CONVERSIONS
from dpkit.render import emit_json, format_number, print_table

from .option_types import NUMBER, NUMBER_LIST


@click.group()
def convert() -> None:
    """Stand-alone conversions between privacy currencies."""


def _one_of(delta: float | None, epsilon: float | None) -> None:
    """Refuse unless exactly one of --delta (for ε(δ)) and --epsilon (for δ(ε)) is given."""
    if (delta is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --delta and --epsilon")


@convert.command("zcdp")
@click.option("--rho", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, default=None, help="Give δ to get ε(δ) ...")
@click.option("--epsilon", type=NUMBER, default=None, help="... or ε to get δ(ε).")
@click.option("--method", type=click.Choice(ZCDP_CONVERSIONS), default="bun-steinke", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def convert_zcdp(rho: float, delta: float | None, epsilon: float | None, method: str, as_json: bool) -> None:
    """ρ-zCDP → ε(δ) or δ(ε)."""
    _one_of(delta, epsilon)
    conversion = cast(Any, method)
    if delta is not None:
        out = {"epsilon": accountant.zcdp_epsilon(rho, delta, conversion=conversion), "delta": delta}
    else:
        assert epsilon is not None
        out = {"epsilon": epsilon, "delta": accountant.zcdp_delta(rho, epsilon, conversion=conversion)}
    if as_json:
        emit_json({**out, "rho": rho, "method": method})
    elif delta is not None:
        click.echo(f"epsilon = {format_number(out['epsilon'], 12)} at delta = {format_number(delta)} ({method})")
    else:
        click.echo(f"delta = {format_number(out['delta'], 12)} at epsilon = {format_number(epsilon)} ({method})")


@convert.command("rdp")
@click.option(
    "--orders", type=NUMBER_LIST, required=True, help="Comma-separated orders α > 1 (inf: α = ∞, the pure ε)."
)
@click.option("--values", type=NUMBER_LIST, required=True, help="Comma-separated ε_R(α), same length (inf allowed).")
@click.option("--delta", type=NUMBER, default=None, help="Give δ to get ε(δ) ...")
@click.option("--epsilon", type=NUMBER, default=None, help="... or ε to get δ(ε).")
@click.option("--method", type=click.Choice(RDP_CONVERSIONS), default="improved", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def convert_rdp(
    orders: list[float], values: list[float], delta: float | None, epsilon: float | None, method: str, as_json: bool
) -> None:
    """RDP curve → ε(δ) or δ(ε), with the best order."""
    _one_of(delta, epsilon)
    conversion = cast(Any, method)
    if delta is not None:
        res = accountant.rdp_epsilon(orders, values, delta, conversion=conversion)
    else:
        assert epsilon is not None
        res = accountant.rdp_delta(orders, values, epsilon, conversion=conversion)
    if as_json:  # order: null where no order was used (a trivial end), or α = ∞
        emit_json({"epsilon": res.epsilon, "delta": res.delta, "order": res.order, "method": method})
        return
    order = "none" if math.isnan(res.order) else format_number(res.order)
    if delta is not None:
        click.echo(
            f"epsilon = {format_number(res.epsilon, 12)} at delta = {format_number(delta)} "
            f"(order α = {order}, {method})"
        )
    else:
        click.echo(
            f"delta = {format_number(res.delta, 12)} at epsilon = {format_number(epsilon)} "
            f"(order α = {order}, {method})"
        )


@convert.command("gdp")
@click.option("--mu", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, default=None, help="Give δ to get ε(δ) ...")
@click.option("--epsilon", type=NUMBER, default=None, help="... or ε to get δ(ε).")
@click.option("--json", "as_json", is_flag=True)
def convert_gdp(mu: float, delta: float | None, epsilon: float | None, as_json: bool) -> None:
    """μ-GDP → ε(δ) or δ(ε) (exact)."""
    _one_of(delta, epsilon)
    if delta is not None:
        out: dict[str, float] = {"epsilon": accountant.gdp_epsilon(mu, delta), "delta": delta, "mu": mu}
    else:
        assert epsilon is not None
        out = {"delta": accountant.gdp_delta(mu, epsilon), "epsilon": epsilon, "mu": mu}
    if as_json:
        emit_json(out)
    else:
        click.echo(
            f"epsilon = {format_number(out['epsilon'], 12)}, delta = {format_number(out['delta'], 12)} "
            f"for mu = {format_number(mu)}"
        )


@convert.command("budget")
@click.option("--epsilon", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--json", "as_json", is_flag=True)
def convert_budget(epsilon: float, delta: float, as_json: bool) -> None:
    """(ε, δ) → the largest μ (GDP) and ρ (zCDP, per conversion) that guarantee it."""
    mu = accountant.gdp_mu(epsilon, delta)
    rho = {c: accountant.zcdp_rho(epsilon, delta, conversion=cast(Any, c)) for c in ZCDP_CONVERSIONS}
    if as_json:
        emit_json({"mu": mu, "rho": rho, "epsilon": epsilon, "delta": delta})
        return
    print_table(
        f"Budget (ε, δ) = ({format_number(epsilon)}, {format_number(delta)})",
        ["currency", "largest value"],
        [["μ (GDP, exact)", format_number(mu, 12)]]
        + [[f"ρ (zCDP, {c})", format_number(v, 12)] for c, v in rho.items()],
    )
