"""``dpkit convert``: stand-alone conversions between privacy currencies."""

from __future__ import annotations

from typing import Any, cast

import click

from dpkit import accountant
from dpkit.accountant import RDP_CONVERSIONS, ZCDP_CONVERSIONS
from dpkit.render import emit_json, format_number, print_table

from .options import NUMBER, NUMBER_LIST


@click.group()
def convert() -> None:
    """Stand-alone conversions between privacy currencies."""


@convert.command("zcdp")
@click.option("--rho", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--method", type=click.Choice(ZCDP_CONVERSIONS), default="bun-steinke", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def convert_zcdp(rho: float, delta: float, method: str, as_json: bool) -> None:
    """ρ-zCDP → ε(δ)."""
    eps = accountant.zcdp_epsilon(rho, delta, conversion=method)  # type: ignore[arg-type]
    if as_json:
        emit_json({"epsilon": eps, "rho": rho, "delta": delta, "method": method})
    else:
        click.echo(f"epsilon = {format_number(eps, 12)} at delta = {format_number(delta)} ({method})")


@convert.command("rdp")
@click.option("--orders", type=NUMBER_LIST, required=True, help="Comma-separated orders α > 1.")
@click.option("--values", type=NUMBER_LIST, required=True, help="Comma-separated ε_R(α), same length.")
@click.option("--delta", type=NUMBER, required=True)
@click.option("--method", type=click.Choice(RDP_CONVERSIONS), default="improved", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def convert_rdp(orders: list[float], values: list[float], delta: float, method: str, as_json: bool) -> None:
    """RDP curve → (ε, best order)."""
    res = accountant.rdp_epsilon(orders, values, delta, conversion=method)  # type: ignore[arg-type]
    if as_json:
        emit_json({"epsilon": res.epsilon, "order": res.order, "delta": delta, "method": method})
    else:
        click.echo(
            f"epsilon = {format_number(res.epsilon, 12)} at delta = {format_number(delta)} "
            f"(order α = {format_number(res.order)}, {method})"
        )


@convert.command("gdp")
@click.option("--mu", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, default=None, help="Give δ to get ε(δ) ...")
@click.option("--epsilon", type=NUMBER, default=None, help="... or ε to get δ(ε).")
@click.option("--json", "as_json", is_flag=True)
def convert_gdp(mu: float, delta: float | None, epsilon: float | None, as_json: bool) -> None:
    """μ-GDP → ε(δ) or δ(ε) (exact)."""
    if (delta is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --delta and --epsilon")
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
