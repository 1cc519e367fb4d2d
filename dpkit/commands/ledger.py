"""``dpkit ledger``: an algorithm's privacy ledger (paper σ beside tight σ), or the accounting of a ledger file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dpkit.accountant import VARIANTS, AccountingMethod, Relation, Schedule, compare_deltas, compare_methods
from dpkit.accountant.algorithm_ledgers import AlgorithmLedger, algorithm_ledger
from dpkit.accountant.events import describe
from dpkit.accountant.ledger import EventRelease, GaussianRelease, Ledger
from dpkit.accountant.sensitivity import check_relation
from dpkit.accountant.validation import check_member, enum_values
from dpkit.render import busy, emit_json, format_number, format_values, print_lines, print_table

from .option_types import NUMBER
from .options import ALL_CONVERSIONS, comparison_rows, dp_event_dict, read_ledger, refusal_note
from .refusals import refuse_options

#: Which options apply to which form of ``dpkit ledger``: the options of one form only, and those of both.
#: (Of an ALGORITHM's parameters, the registry refuses the ones that algorithm does not use.)
FORMS: dict[str, tuple[str, ...]] = {
    "an ALGORITHM ledger": (
        "episodes",
        "horizon",
        "dim",
        "states",
        "actions",
        "gamma",
        "beta",
        "reading",
        "schedule",
        "neighbours",
        "method",
        "conversion",
    ),
    "a ledger file (it takes only --delta or --epsilon, and --json)": (),
    "both": ("target", "delta", "epsilon", "as_json"),
}


@click.command("ledger")
@click.argument("target", metavar="ALGORITHM|FILE")
@click.option("--delta", type=NUMBER, default=None, help="Target δ (algorithms); for a file: give δ for ε(δ) ...")
@click.option("--epsilon", type=NUMBER, default=None, help="Target ε (algorithms); for a file: ... or ε for δ(ε).")
@click.option("--episodes", "-K", type=NUMBER, default=None, help="Episodes K (tree counters, RLSVI).")
@click.option("--horizon", "-H", type=NUMBER, default=None, help="Horizon H.")
@click.option("--dim", "-d", type=NUMBER, default=None, help="Feature dimension d (Private-LinOpt).")
@click.option("--states", "-S", type=NUMBER, default=None, help="States S (RLSVI; LDP-UCRL-VTR --reading experiment).")
@click.option("--actions", "-A", type=NUMBER, default=None, help="Actions A (RLSVI).")
@click.option("--gamma", type=NUMBER, default=None, help="Control bound γ (Private-OFU-RL).")
@click.option("--beta", type=NUMBER, default=None, help="Constant RLSVI noise scale β (default: Russo's β_k).")
@click.option(
    "--reading",
    default=None,
    help="Which of the paper's formulas: ldp-ucrl-vtr theorem|experiment; linopt theorem-6.5.",
)
@click.option(
    "--schedule", type=click.Choice(enum_values(Schedule)), default=None, help="Tree release schedule (counters)."
)
@click.option(
    "--neighbours",
    type=click.Choice(tuple(r.replace("_", "-") for r in enum_values(Relation))),
    default=None,
    help="Neighbouring relation (default: the one the paper states).",
)
@click.option("--method", type=click.Choice(enum_values(AccountingMethod)), default="exact", show_default=True)
@click.option("--conversion", type=click.Choice(ALL_CONVERSIONS), default=None)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def ledger_cmd(
    ctx: click.Context,
    target: str,
    delta: float | None,
    epsilon: float | None,
    neighbours: str | None,
    method: str,
    conversion: str | None,
    as_json: bool,
    **params: Any,
) -> None:
    """An algorithm's privacy ledger (paper σ vs tight σ), or the accounting of a ledger file.

    ALGORITHM is a registered private algorithm (ldp-ucrl-vtr, private-linopt-vi, private-linopt-po,
    private-ofu-rl, rlsvi, and any a package registers); anything else is read as a ledger file
    (TOML or JSON: a list 'release' of {name, sensitivity, sigma, count}) or an event file (a DpEvent JSON,
    as --save-event writes it, or dpkit's event JSON).
    """
    from dpkit.algorithms import registry

    if target in registry.names(private=True):
        given = {k: v for k, v in params.items() if v is not None}
        relation = None if neighbours is None else check_relation(neighbours)  # click's strings become members
        accounting = check_member("method", method, AccountingMethod)
        _algorithm_ledger(target, epsilon, delta, given, relation, accounting, conversion, as_json)
        return
    path = Path(target)
    if not path.exists() and path.suffix.lower() not in (".toml", ".json"):
        try:
            registry.get(target, private=True)  # the did-you-mean of an unknown name
        except ValueError as err:
            raise ValueError(f"{err}, and no such ledger file") from None
    form = "a ledger file (it takes only --delta or --epsilon, and --json)"
    refuse_options(ctx, FORMS["an ALGORITHM ledger"], form)
    _file_ledger(path, delta, epsilon, as_json)


def _algorithm_ledger(
    name: str,
    epsilon: float | None,
    delta: float | None,
    params: dict[str, Any],
    relation: Relation | None,
    method: AccountingMethod,
    conversion: str | None,
    as_json: bool,
) -> None:
    if delta is None:
        raise click.UsageError(f"ledger {name} needs --delta (and --epsilon)")
    from dpkit.algorithms import registry
    from dpkit.algorithms.registry import declare

    if epsilon is None and registry.get(name).default_epsilon is None:  # RLSVI has an ε of its own
        raise click.UsageError(f"ledger {name} needs --epsilon")

    with busy("accounting through dp-accounting's PLD…", method == AccountingMethod.PLD):
        led = algorithm_ledger(
            declare(name, epsilon, delta, **params), relation=relation, method=method, conversion=conversion
        )
    if as_json:
        emit_json(led.to_dict())
        return
    _print_algorithm_ledger(led)


def _print_algorithm_ledger(led: AlgorithmLedger) -> None:
    d = led.to_dict()
    title = (
        f"{d['algorithm']} ({d['privacy_model']}): target (ε, δ) = ({format_number(d['epsilon'])}, "
        f"{format_number(d['delta'])}), {d['relation'].replace('_', '-')}, {d['method']}"
    )
    rows = [
        [
            r["name"],
            str(r["count"]) + ("" if r["paper_count"] == r["count"] else f" (paper {r['paper_count']})"),
            format_number(r["sensitivity_add_remove"], 6),
            format_number(r["sensitivity_replace_one"], 6),
            format_number(r["paper_sensitivity"], 6),
            format_number(r["sigma_paper"], 6),
            format_number(r["sigma_tight"], 6),
            format_values(r["sigma_optimal"]),
        ]
        for r in d["releases"]
    ]
    statistics = "\n".join(f"{r['name']}: {r['statistic']}" for r in d["releases"])
    steps = [
        f"{r['name']}: Δ per step h = 1..{r['steps']}: {format_values(r['step_sensitivities'])}"
        for r in d["releases"]
        if r["steps"] > 1
    ]
    print_table(
        title,
        ["release", "count", "Δ add/rem.", "Δ repl.-one", "Δ paper", "σ paper", "σ tight", "σ optimal"],
        rows,
        caption="\n".join([statistics, *steps]),
    )
    informative = f"δ = {format_number(d['delta_informative'])}"
    summary = [
        ["ε claimed by the paper", format_number(d["epsilon_claimed_by_paper"], 8)],
        ["ε of the paper's σ", format_number(d["epsilon_achieved_by_paper_sigma"], 8)],
        [f"ε of the paper's σ at {informative}", format_number(d["epsilon_at_informative_delta_by_paper_sigma"], 8)],
        [f"ε of σ_tight at {informative}", format_number(d["epsilon_at_informative_delta_by_tight_sigma"], 8)],
        [f"ε of σ_optimal at {informative}", format_number(d["epsilon_at_informative_delta_by_optimal_sigma"], 8)],
        ["μ at the paper's σ", format_number(d["mu_at_paper_sigma"], 8)],
        ["μ at σ_tight", format_number(d["mu_at_tight_sigma"], 8)],
        ["μ at σ_optimal", format_number(d["mu_at_optimal_sigma"], 8)],
        ["σ_paper / σ_tight", format_number(d["noise_ratio"], 6)],
        *_variance_rows(d["noise_variance"]),
    ]
    users = d["users"]
    caption = (
        f"ε at the target δ = {format_number(d['delta'])} and at the informative δ = "
        + (f"min(1e-05, 1/K), K = {users:,}" if users is not None else "1e-05 (the declaration has no K)")
        + f"; {d['method']}"
    )
    allocation = d["optimal_allocation"]
    caption += "\nσ optimal: " + (
        f"minimises {allocation['objective']}" if allocation["computed"] else allocation["note"]
    )
    print_table("Summary", ["", "value"], summary, caption=caption)
    print_lines([f"{f['severity']}: {f['code']}: {f['message']}" for f in d["flags"]] or ["no flags"], title="Flags")


def _variance_rows(variance: dict[str, float | None]) -> list[list[str]]:
    """The total noise variance Σᵢ nᵢσᵢ² of each allocation, relative to σ_tight's."""
    tight = variance["tight"]
    rows = []
    for allocation in ("paper", "optimal"):
        value = variance[allocation]
        if value is not None and tight:
            rows.append([f"noise variance, {allocation} ÷ tight", format_number(value / tight, 6)])
    return rows


def _mu_rho(ledger: Ledger) -> dict[str, float | None]:
    """μ and ρ of a ledger of Gaussian releases (None for a ledger holding other events: no single μ)."""
    return {"mu": ledger.mu, "rho": ledger.rho} if ledger.is_gaussian else {"mu": None, "rho": None}


def _mu_rho_caption(ledger: Ledger) -> str:
    if not ledger.is_gaussian:
        return f"  ({ledger.relation})"
    return f"  (μ = {format_number(ledger.mu)}, ρ = {format_number(ledger.rho)})"


def _release_row(r: GaussianRelease | EventRelease) -> list[str]:
    if isinstance(r, EventRelease):
        return [r.name, "—", "—", str(r.count), describe(r.event)]
    return [
        r.name,
        format_number(r.sensitivity),
        format_number(r.sigma),
        str(r.count),
        format_number(r.noise_multiplier),
    ]


def _read_file(path: Path) -> Ledger:
    """A ledger file, or an event file (a DpEvent JSON, as ``--save-event`` writes, or dpkit's event JSON) as a
    ledger of that one event (named for the file)."""
    from dpkit.data_files import naming_file
    from dpkit.reports.config import read_target

    if path.suffix.lower() == ".toml":  # a TOML file is a ledger file: its own errors
        return read_ledger(path)
    with naming_file(path, "ledger or event file"):  # every error names the file
        kind, target = read_target(path)
    if isinstance(target, Ledger):
        return target
    return Ledger((EventRelease(path.stem or "event", target),))


def _file_ledger(path: Path, delta: float | None, epsilon: float | None, as_json: bool) -> None:
    if (delta is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --delta and --epsilon")
    ledger = _read_file(path)
    if epsilon is not None:
        with busy("accounting under every method (PLD takes a moment)…"):
            dcmp = compare_deltas(ledger, epsilon)
        if as_json:
            emit_json(
                {
                    "deltas": dcmp.deltas,
                    "refusals": dcmp.refusals,
                    "epsilon": epsilon,
                    **_mu_rho(ledger),
                    "releases": ledger.to_dicts(),
                    "dp_event": dp_event_dict(ledger.to_dp_event()),
                    "relation": ledger.relation,
                }
            )
            return
        print_table(
            f"δ at ε = {format_number(epsilon)}{_mu_rho_caption(ledger)}",
            ["method", "δ", "note"],
            [
                [
                    key if conv is None else f"{m} ({conv})",
                    format_number(dcmp.deltas[key], 10),
                    refusal_note(key, dcmp.refusals, reasons=not ledger.is_gaussian),
                ]
                for key, m, conv in VARIANTS
            ],
        )
        return
    assert delta is not None  # exactly one of --delta and --epsilon, checked above
    with busy("accounting under every method (PLD takes a moment)…"):
        cmp = compare_methods(ledger, delta)
    if as_json:
        emit_json(
            {
                "methods": cmp.epsilons,
                "refusals": cmp.refusals,
                "delta": delta,
                **_mu_rho(ledger),
                "releases": ledger.to_dicts(),
                "dp_event": dp_event_dict(ledger.to_dp_event()),
                "relation": ledger.relation,
            }
        )
        return
    print_table(
        f"Ledger {path.name}",
        ["release", "Δ", "σ", "count", "σ/Δ"],
        [_release_row(r) for r in ledger.releases],
    )
    print_table(
        f"ε at δ = {format_number(delta)}{_mu_rho_caption(ledger)}",
        ["method", "ε", "÷ exact", "note"],
        comparison_rows(cmp, reasons=not ledger.is_gaussian),
    )
