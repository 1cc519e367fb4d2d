"""``dpkit calibrate``, ``epsilon``, ``delta``, ``methods`` and ``budgets``: the Gaussian mechanism's accounting."""

from __future__ import annotations

from typing import Any

import click

from dpkit import accountant
from dpkit.accountant import Ledger, calibrate_sigma, compare_methods, gaussian_delta, gaussian_epsilon
from dpkit.render import busy, emit_json, format_number, print_table, stderr_console

from .options import NUMBER, NUMBER_LIST, comparison_rows, compositions_count, guarantee_label, method_options


@click.command()
@click.option("--epsilon", type=NUMBER, required=True, help="Target ε.")
@click.option("--delta", type=NUMBER, required=True, help="Target δ.")
@method_options
def calibrate(
    epsilon: float,
    delta: float,
    sensitivity: float,
    compositions: float,
    method: str,
    conversion: str | None,
    as_json: bool,
) -> None:
    """The smallest σ meeting (ε, δ) for K releases of sensitivity Δ."""
    with busy("calibrating σ through dp-accounting's PLD…", method == "pld"):
        cal = calibrate_sigma(
            epsilon,
            delta,
            sensitivity=sensitivity,
            compositions=compositions_count(compositions),
            method=method,
            conversion=conversion,
        )
    out = {
        "sigma": cal.sigma,
        "epsilon": cal.epsilon,
        "delta": cal.delta,
        "method": cal.method,
        "conversion": cal.conversion,
        "target_epsilon": cal.target_epsilon,
        "sensitivity": cal.sensitivity,
        "compositions": cal.compositions,
        "noise_multiplier": cal.noise_multiplier,
    }
    if as_json:
        emit_json(out)
        return
    label = cal.method if cal.conversion is None else f"{cal.method} ({cal.conversion})"
    print_table(
        f"σ for (ε, δ) = ({format_number(epsilon)}, {format_number(delta)}), Δ = {format_number(sensitivity)}, "
        f"K = {cal.compositions}",
        ["method", "σ", "σ/Δ", "ε achieved"],
        [
            [
                label,
                format_number(cal.sigma, 10),
                format_number(cal.noise_multiplier, 10),
                format_number(cal.epsilon, 10),
            ]
        ],
    )


@click.command()
@click.option("--sigma", type=NUMBER, required=True, help="Noise standard deviation σ.")
@click.option("--delta", type=NUMBER, required=True)
@method_options
def epsilon(
    sigma: float,
    delta: float,
    sensitivity: float,
    compositions: float,
    method: str,
    conversion: str | None,
    as_json: bool,
) -> None:
    """ε(δ) of K Gaussian releases with noise σ and sensitivity Δ."""
    with busy("accounting through dp-accounting's PLD…", method == "pld"):
        g = gaussian_epsilon(
            sigma,
            delta,
            sensitivity=sensitivity,
            compositions=compositions_count(compositions),
            method=method,
            conversion=conversion,
        )
    if as_json:
        emit_json(g.to_dict())
        return
    extra = "" if g.order is None else f" at order α = {format_number(g.order)}"
    click.echo(
        f"epsilon = {format_number(g.epsilon, 12)} at delta = {format_number(delta)} ({guarantee_label(g)}{extra})"
    )


@click.command()
@click.option("--sigma", type=NUMBER, required=True, help="Noise standard deviation σ.")
@click.option("--epsilon", type=NUMBER, required=True)
@method_options
def delta(
    sigma: float,
    epsilon: float,
    sensitivity: float,
    compositions: float,
    method: str,
    conversion: str | None,
    as_json: bool,
) -> None:
    """δ(ε) of K Gaussian releases with noise σ and sensitivity Δ."""
    with busy("accounting through dp-accounting's PLD…", method == "pld"):
        g = gaussian_delta(
            sigma,
            epsilon,
            sensitivity=sensitivity,
            compositions=compositions_count(compositions),
            method=method,
            conversion=conversion,
        )
    if as_json:
        emit_json(g.to_dict())
        return
    click.echo(f"delta = {format_number(g.delta, 12)} at epsilon = {format_number(epsilon)} ({guarantee_label(g)})")


@click.command()
@click.option("--sigma", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True)
@click.option("--compositions", "-k", type=NUMBER, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def methods(sigma: float, delta: float, sensitivity: float, compositions: float, as_json: bool) -> None:
    """The ε of every accounting method side by side."""
    ledger = Ledger.homogeneous(
        accountant.check_positive("sensitivity", sensitivity),
        accountant.check_positive("sigma", sigma),
        compositions=compositions_count(compositions),
    )
    with busy("accounting under every method (PLD takes a moment)…"):
        cmp = compare_methods(ledger, delta)
    if as_json:
        emit_json(
            {
                "methods": cmp.epsilons,
                "refusals": cmp.refusals,
                "orders": cmp.orders,
                "delta": cmp.delta,
                "sigma": sigma,
                "sensitivity": sensitivity,
                "compositions": ledger.compositions,
                "mu": ledger.mu,
                "rho": ledger.rho,
            }
        )
        return
    print_table(
        f"ε at δ = {format_number(delta)} for σ = {format_number(sigma)}, Δ = {format_number(sensitivity)}, "
        f"K = {ledger.compositions}  (μ = {format_number(ledger.mu)}, ρ = {format_number(ledger.rho)})",
        ["method", "ε", "÷ exact", "note"],
        comparison_rows(cmp),
    )


#: The standard budgets of ``dpkit budgets``.
STANDARD_EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
STANDARD_COMPOSITIONS = (1, 10, 100, 1000)
#: The most values ``--epsilons`` and ``--compositions`` of ``dpkit budgets`` may list.
MAX_BUDGET_VALUES = 50
_BUDGET_METHODS: tuple[tuple[str, str | None], ...] = (
    ("exact", None),
    ("pld", None),
    ("rdp", "improved"),
    ("zcdp", "bun-steinke"),
    ("classic", None),
)


@click.command()
@click.option("--delta", type=NUMBER, default=1e-5, show_default=True)
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True)
@click.option("--epsilons", type=NUMBER_LIST, default=",".join(map(str, STANDARD_EPSILONS)), show_default=True)
@click.option("--compositions", type=NUMBER_LIST, default=",".join(map(str, STANDARD_COMPOSITIONS)), show_default=True)
@click.option("--no-pld", is_flag=True, help="Skip the (slow) PLD column.")
@click.option("--json", "as_json", is_flag=True)
def budgets(
    delta: float, sensitivity: float, epsilons: list[float], compositions: list[float], no_pld: bool, as_json: bool
) -> None:
    """Calibration table: σ for standard budgets under every method."""
    accountant.check_probability("delta", delta)
    accountant.check_positive("sensitivity", sensitivity)
    for name, values in (("epsilons", epsilons), ("compositions", compositions)):
        if len(values) > MAX_BUDGET_VALUES:
            raise ValueError(f"--{name} has {len(values):,} values, above the limit of {MAX_BUDGET_VALUES}")
    for i, e in enumerate(epsilons):
        accountant.check_positive(f"epsilons[{i}]", e)
    ks = [accountant.check_count(f"compositions[{i}]", k) for i, k in enumerate(compositions)]
    meths = [m for m in _BUDGET_METHODS if not (no_pld and m[0] == "pld")]
    results: list[dict[str, Any]] = []
    from rich.progress import Progress

    with Progress(console=stderr_console(), transient=True) as progress:
        task = progress.add_task("calibrating", total=len(ks) * len(epsilons) * len(meths))
        for k in ks:
            for e in epsilons:
                row: dict[str, Any] = {"epsilon": e, "compositions": k, "sigma": {}}
                for m, conv in meths:
                    try:
                        row["sigma"][m] = calibrate_sigma(
                            e, delta, sensitivity=sensitivity, compositions=k, method=m, conversion=conv
                        ).sigma
                    except ValueError:
                        row["sigma"][m] = None  # classic refuses ε/K >= 1
                    progress.advance(task)
                results.append(row)
    if as_json:
        emit_json({"delta": delta, "sensitivity": sensitivity, "rows": results})
        return
    cols = [m for m, _ in meths]
    print_table(
        f"σ needed for (ε, δ = {format_number(delta)}), Δ = {format_number(sensitivity)}",
        ["K", "ε"] + [f"σ {c}" for c in cols] + ["rdp÷exact"],
        [
            [str(r["compositions"]), format_number(r["epsilon"])]
            + [format_number(r["sigma"][c], 6) for c in cols]
            + [f"{r['sigma']['rdp'] / r['sigma']['exact']:.4f}" if r["sigma"]["rdp"] and r["sigma"]["exact"] else "—"]
            for r in results
        ],
        caption="classic: — where ε/K ≥ 1 (the Dwork–Roth bound does not apply).",
    )
