"""``dpkit tree``: the binary counting mechanism, its p-sums and its privacy."""

from __future__ import annotations

from typing import Any

import click

from dpkit import accountant
from dpkit.accountant import AccountingMethod
from dpkit.accountant import tree as counter_tree
from dpkit.accountant.tree_counts import Schedule
from dpkit.accountant.validation import enum_values
from dpkit.render import busy, emit_json, format_number, print_table

from .option_types import NUMBER
from .options import ALL_CONVERSIONS
from .refusals import refuse_options


@click.command()
@click.option("--steps", "-T", type=NUMBER, required=True, help="Number of items T (episodes for before-episode).")
@click.option("--schedule", type=click.Choice(enum_values(Schedule)), default="after-each", show_default=True)
@click.option("--sigma", type=NUMBER, default=None, help="Noise σ per p-sum: with --delta, the counter's ε(δ).")
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True, help="ℓ2 sensitivity Δ of one item.")
@click.option("--delta", type=NUMBER, default=None)
@click.option("--epsilon", type=NUMBER, default=None, help="With --delta and no --sigma: calibrate σ per p-sum.")
@click.option("--method", type=click.Choice(enum_values(AccountingMethod)), default="exact", show_default=True)
@click.option("--conversion", type=click.Choice(ALL_CONVERSIONS), default=None)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def tree(
    ctx: click.Context,
    steps: float,
    schedule: str,
    sigma: float | None,
    sensitivity: float,
    delta: float | None,
    epsilon: float | None,
    method: str,
    conversion: str | None,
    as_json: bool,
) -> None:
    """The binary counting mechanism: p-sums per item and per prefix, and the counter's privacy."""
    t = accountant.check_count("steps", steps)
    if sigma is None and epsilon is None and delta is None:
        refuse_options(
            ctx,
            ("sensitivity", "method", "conversion"),
            "the counter's structure alone (give --sigma and --delta, or --epsilon and --delta)",
        )
    out: dict[str, Any] = {
        "steps": t,
        "schedule": schedule,
        "released_prefixes": counter_tree.released_prefixes(t, schedule=schedule),
        "max_psums_per_item": counter_tree.max_psums_per_item(t, schedule=schedule),
        "max_psums_per_prefix": counter_tree.max_psums_per_prefix(t, schedule=schedule),
        "paper_depth": counter_tree.paper_depth(t),
    }
    if out["max_psums_per_item"] > 0:
        out["worst_item"] = counter_tree.worst_item(t, schedule=schedule)
    if sigma is not None:
        if delta is None or epsilon is not None:
            raise click.UsageError("--sigma needs --delta (and no --epsilon)")
        with busy("accounting through dp-accounting's PLD…", method == AccountingMethod.PLD):
            g = counter_tree.tree_epsilon(
                t,
                sigma=sigma,
                delta=delta,
                sensitivity=sensitivity,
                schedule=schedule,
                method=method,
                conversion=conversion,
            )
        out.update(
            sigma=sigma,
            sensitivity=sensitivity,
            delta=delta,
            method=g.method,
            conversion=g.conversion,
            mu=counter_tree.tree_mu(t, sigma=sigma, sensitivity=sensitivity, schedule=schedule),
            epsilon=g.epsilon,
        )
    elif epsilon is not None or delta is not None:
        if epsilon is None or delta is None:
            raise click.UsageError("calibration needs both --epsilon and --delta (or give --sigma and --delta)")
        with busy("calibrating σ through dp-accounting's PLD…", method == AccountingMethod.PLD):
            cal = counter_tree.calibrate_tree_sigma(
                t,
                epsilon=epsilon,
                delta=delta,
                sensitivity=sensitivity,
                schedule=schedule,
                method=method,
                conversion=conversion,
            )
        out.update(
            sensitivity=sensitivity,
            delta=delta,
            target_epsilon=epsilon,
            method=cal.method,
            conversion=cal.conversion,
            sigma=cal.sigma,
            epsilon=cal.epsilon,
        )
    if as_json:
        emit_json(out)
        return
    labels = {
        "released_prefixes": "released prefixes",
        "max_psums_per_item": "max p-sums per item (m)",
        "max_psums_per_prefix": "max p-sums per prefix",
        "paper_depth": "⌈log2 T⌉ (the seeds' m)",
        "worst_item": "worst item",
        "mu": "μ",
        "epsilon": "ε",
        "target_epsilon": "target ε",
        "sigma": "σ per p-sum",
    }
    print_table(
        f"Binary counter, T = {t}, {schedule}",
        ["", "value"],
        [
            [labels.get(k, k), format_number(v, 10) if isinstance(v, (int, float)) else str(v)]
            for k, v in out.items()
            if k not in ("steps", "schedule") and v is not None
        ],
    )
