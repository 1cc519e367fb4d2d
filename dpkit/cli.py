"""The ``dpkit`` command line: thin wiring over :mod:`dpkit.accountant`.

Every command that prints a result takes ``--json`` and then prints exactly one JSON object on
stdout. Bad input — a value the API rejects or an option click cannot parse — is reported as
one line ``error: …`` on stderr with exit code 2, never a traceback.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.progress import Progress

from dpkit import accountant
from dpkit.accountant import (
    METHODS,
    RDP_CONVERSIONS,
    VARIANTS,
    ZCDP_CONVERSIONS,
    Ledger,
    calibrate_sigma,
    compare_deltas,
    compare_methods,
    gaussian_delta,
    gaussian_epsilon,
)

from dpkit.accountant import tree as counter_tree
from dpkit.accountant.declarations import AlgorithmLedger, algorithm_ledger
from dpkit.accountant.rlsvi import rlsvi_closed_form, rlsvi_worst_case_mu
from dpkit.accountant.tree import SCHEDULES
from dpkit.accountant.validation import check_choice, check_count, check_index
from dpkit.algorithms.registry import ALGORITHM_NAMES, declare
from dpkit.algorithms.simulation import SIMULATED_ALGORITHMS, SIMULATED_ENVIRONMENTS
from dpkit.audits import Claim, ScoreFunction, audit_pairs, make_executor

from . import __version__
from .loading import FileFunction, load_object, parse_data, read_text_file
from .render import busy, emit_json, plain, format_number, print_lines, print_table, progress_bar, stderr_console

ALL_CONVERSIONS = tuple(dict.fromkeys(RDP_CONVERSIONS + ZCDP_CONVERSIONS))


class _Number(click.ParamType):
    """A float as typed; range checks are the API's (so its messages name the value)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            return float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)


class _NumberList(click.ParamType):
    """A comma-separated list of floats."""

    name = "list"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> list[float]:
        if isinstance(value, list):
            return value
        items = [s.strip() for s in str(value).split(",")]
        if any(not s for s in items):
            self.fail(f"{value!r} has an empty item", param, ctx)
        try:
            return [float(s) for s in items]
        except ValueError:
            self.fail(f"{value!r} is not a comma-separated list of numbers", param, ctx)


NUMBER = _Number()
NUMBER_LIST = _NumberList()


def _compositions(value: float) -> int:
    return accountant.check_count("compositions", value)


def _method_options(f: Any) -> Any:
    f = click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")(f)
    f = click.option(
        "--conversion",
        type=click.Choice(ALL_CONVERSIONS),
        default=None,
        help="rdp: improved (default) | mironov;  zcdp: bun-steinke (default) | rdp-optimal | gaussian-exact.",
    )(f)
    f = click.option("--method", type=click.Choice(METHODS), default="exact", show_default=True)(f)
    f = click.option("--compositions", "-k", type=NUMBER, default=1, show_default=True,
                     help="Number of releases K (adaptive composition).")(f)
    f = click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True, help="ℓ2 sensitivity Δ.")(f)
    return f


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dpkit")
def cli() -> None:
    """dpkit: account for, audit and report the privacy of private RL algorithms."""


@cli.command()
@click.option("--epsilon", type=NUMBER, required=True, help="Target ε.")
@click.option("--delta", type=NUMBER, required=True, help="Target δ.")
@_method_options
def calibrate(epsilon: float, delta: float, sensitivity: float, compositions: float, method: str,
              conversion: str | None, as_json: bool) -> None:
    """The smallest σ meeting (ε, δ) for K releases of sensitivity Δ."""
    with busy("calibrating σ through dp-accounting's PLD…", method == "pld"):
        cal = calibrate_sigma(epsilon, delta, sensitivity, _compositions(compositions), method, conversion)
    out = {"sigma": cal.sigma, "epsilon": cal.epsilon, "delta": cal.delta, "method": cal.method,
           "conversion": cal.conversion, "target_epsilon": cal.target_epsilon,
           "sensitivity": cal.sensitivity, "compositions": cal.compositions,
           "noise_multiplier": cal.noise_multiplier}
    if as_json:
        emit_json(out)
        return
    label = cal.method if cal.conversion is None else f"{cal.method} ({cal.conversion})"
    print_table(
        f"σ for (ε, δ) = ({format_number(epsilon)}, {format_number(delta)}), Δ = {format_number(sensitivity)}, "
        f"K = {cal.compositions}",
        ["method", "σ", "σ/Δ", "ε achieved"],
        [[label, format_number(cal.sigma, 10), format_number(cal.noise_multiplier, 10), format_number(cal.epsilon, 10)]],
    )


@cli.command()
@click.option("--sigma", type=NUMBER, required=True, help="Noise standard deviation σ.")
@click.option("--delta", type=NUMBER, required=True)
@_method_options
def epsilon(sigma: float, delta: float, sensitivity: float, compositions: float, method: str,
            conversion: str | None, as_json: bool) -> None:
    """ε(δ) of K Gaussian releases with noise σ and sensitivity Δ."""
    with busy("accounting through dp-accounting's PLD…", method == "pld"):
        g = gaussian_epsilon(sigma, delta, sensitivity, _compositions(compositions), method, conversion)
    if as_json:
        emit_json(g.to_dict())
        return
    extra = "" if g.order is None else f" at order α = {format_number(g.order)}"
    click.echo(f"epsilon = {format_number(g.epsilon, 12)} at delta = {format_number(delta)} ({_label(g)}{extra})")


@cli.command()
@click.option("--sigma", type=NUMBER, required=True, help="Noise standard deviation σ.")
@click.option("--epsilon", type=NUMBER, required=True)
@_method_options
def delta(sigma: float, epsilon: float, sensitivity: float, compositions: float, method: str,
          conversion: str | None, as_json: bool) -> None:
    """δ(ε) of K Gaussian releases with noise σ and sensitivity Δ."""
    with busy("accounting through dp-accounting's PLD…", method == "pld"):
        g = gaussian_delta(sigma, epsilon, sensitivity, _compositions(compositions), method, conversion)
    if as_json:
        emit_json(g.to_dict())
        return
    click.echo(f"delta = {format_number(g.delta, 12)} at epsilon = {format_number(epsilon)} ({_label(g)})")


def _label(g: accountant.Guarantee) -> str:
    return g.method if g.conversion is None else f"{g.method}, {g.conversion}"


_REFUSAL_NOTES = {"classic": "refused: ε ≥ 1 per release", "pld": "refused: δ below PLD's resolution"}


def _comparison_rows(cmp: accountant.MethodComparison) -> list[list[str]]:
    exact = cmp.epsilons["exact"]
    rows = []
    for key, method, conv in VARIANTS:
        eps = cmp.epsilons[key]
        ratio = "—" if eps is None or not exact else f"{eps / exact:.4f}"
        note = cmp.refusals.get(key, "")
        if key in cmp.orders:
            note = f"α = {format_number(cmp.orders[key], 6)}"
        rows.append([key if conv is None else f"{method} ({conv})", format_number(eps, 10), ratio,
                     _REFUSAL_NOTES.get(key, "refused") if key in cmp.refusals else note])
    return rows


@cli.command()
@click.option("--sigma", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True)
@click.option("--compositions", "-k", type=NUMBER, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def methods(sigma: float, delta: float, sensitivity: float, compositions: float, as_json: bool) -> None:
    """The ε of every accounting method side by side."""
    ledger = Ledger.homogeneous(accountant.check_positive("sensitivity", sensitivity),
                                accountant.check_positive("sigma", sigma), _compositions(compositions))
    with busy("accounting under every method (PLD takes a moment)…"):
        cmp = compare_methods(ledger, delta)
    if as_json:
        emit_json({"methods": cmp.epsilons, "refusals": cmp.refusals, "orders": cmp.orders, "delta": cmp.delta,
                   "sigma": sigma, "sensitivity": sensitivity, "compositions": ledger.compositions,
                   "mu": ledger.mu, "rho": ledger.rho})
        return
    print_table(
        f"ε at δ = {format_number(delta)} for σ = {format_number(sigma)}, Δ = {format_number(sensitivity)}, "
        f"K = {ledger.compositions}  (μ = {format_number(ledger.mu)}, ρ = {format_number(ledger.rho)})",
        ["method", "ε", "÷ exact", "note"], _comparison_rows(cmp),
    )


@cli.group()
def convert() -> None:
    """Stand-alone conversions between privacy currencies."""


@convert.command("zcdp")
@click.option("--rho", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--method", type=click.Choice(ZCDP_CONVERSIONS), default="bun-steinke", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def convert_zcdp(rho: float, delta: float, method: str, as_json: bool) -> None:
    """ρ-zCDP → ε(δ)."""
    eps = accountant.zcdp_epsilon(rho, delta, method)  # type: ignore[arg-type]
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
    res = accountant.rdp_epsilon(orders, values, delta, method)  # type: ignore[arg-type]
    if as_json:
        emit_json({"epsilon": res.epsilon, "order": res.order, "delta": delta, "method": method})
    else:
        click.echo(f"epsilon = {format_number(res.epsilon, 12)} at delta = {format_number(delta)} "
                   f"(order α = {format_number(res.order)}, {method})")


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
        out = {"epsilon": accountant.gdp_epsilon(mu, delta), "delta": delta, "mu": mu}
    else:
        out = {"delta": accountant.gdp_delta(mu, epsilon), "epsilon": epsilon, "mu": mu}  # type: ignore[arg-type]
    if as_json:
        emit_json(out)
    else:
        click.echo(f"epsilon = {format_number(out['epsilon'], 12)}, delta = {format_number(out['delta'], 12)} "
                   f"for mu = {format_number(mu)}")


@convert.command("budget")
@click.option("--epsilon", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--json", "as_json", is_flag=True)
def convert_budget(epsilon: float, delta: float, as_json: bool) -> None:
    """(ε, δ) → the largest μ (GDP) and ρ (zCDP, per conversion) that guarantee it."""
    mu = accountant.gdp_mu(epsilon, delta)
    rho = {c: accountant.zcdp_rho(epsilon, delta, c) for c in ZCDP_CONVERSIONS}  # type: ignore[arg-type]
    if as_json:
        emit_json({"mu": mu, "rho": rho, "epsilon": epsilon, "delta": delta})
        return
    print_table(f"Budget (ε, δ) = ({format_number(epsilon)}, {format_number(delta)})", ["currency", "largest value"],
                [["μ (GDP, exact)", format_number(mu, 12)]]
                + [[f"ρ (zCDP, {c})", format_number(v, 12)] for c, v in rho.items()])


def _read_ledger(path: Path) -> Ledger:
    text = read_text_file(path, "ledger file")  # bounded: size cap, UTF-8, a regular file
    data = parse_data(text, toml=path.suffix.lower() == ".toml", what=f"ledger file {str(path)!r}")
    if not isinstance(data, dict) or set(data) != {"release"}:
        raise ValueError(f"ledger file {str(path)!r} must hold exactly one key 'release' (a list of releases)")
    if not isinstance(data["release"], list):
        raise ValueError(f"'release' in {str(path)!r} must be a list of tables/objects")
    return Ledger.from_dicts(data["release"])


def _dp_event_dict(event: Any) -> Any:
    nt = event.to_named_tuple() if hasattr(event, "to_named_tuple") else event
    if hasattr(nt, "_asdict"):
        d = nt._asdict()
        d.pop("module_name", None)
        return {k: _dp_event_dict(v) for k, v in d.items()}
    if isinstance(nt, list):
        return [_dp_event_dict(v) for v in nt]
    return nt


_ALGORITHM_OPTIONS = ("episodes", "horizon", "dim", "states", "actions", "gamma", "beta", "reading", "schedule")


@cli.command("ledger")
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
@click.option("--reading", default=None,
              help="Which of the paper's formulas: ldp-ucrl-vtr theorem|experiment; linopt theorem-6.5|proof-6.4.")
@click.option("--schedule", type=click.Choice(SCHEDULES), default=None, help="Tree release schedule (counters).")
@click.option("--neighbours", type=click.Choice(("add-remove", "replace-one")), default=None,
              help="Neighbouring relation (default: the one the paper states).")
@click.option("--method", type=click.Choice(METHODS), default="exact", show_default=True)
@click.option("--conversion", type=click.Choice(ALL_CONVERSIONS), default=None)
@click.option("--json", "as_json", is_flag=True)
def ledger_cmd(target: str, delta: float | None, epsilon: float | None, neighbours: str | None, method: str,
               conversion: str | None, as_json: bool, **params: Any) -> None:
    """An algorithm's privacy ledger (paper σ vs tight σ), or the accounting of a ledger file.

    ALGORITHM is one of ldp-ucrl-vtr, private-linopt-vi, private-linopt-po, private-ofu-rl, rlsvi;
    anything else is read as a ledger file (TOML or JSON: a list 'release' of
    {name, sensitivity, sigma, count}).
    """
    given = {k: v for k, v in params.items() if v is not None}
    if target in ALGORITHM_NAMES:
        _algorithm_ledger(target, epsilon, delta, given, neighbours, method, conversion, as_json)
        return
    path = Path(target)
    if not path.exists() and path.suffix.lower() not in (".toml", ".json"):
        raise ValueError(f"unknown algorithm {target!r} (expected one of {', '.join(ALGORITHM_NAMES)}) and no such file")
    extra = sorted(given) + (["--neighbours"] if neighbours else []) + (["--method"] if method != "exact" else [])
    if extra or conversion:
        raise click.UsageError(f"a ledger file takes only --delta or --epsilon (and --json); got {', '.join(extra) or '--conversion'}")
    _file_ledger(path, delta, epsilon, as_json)


def _algorithm_ledger(name: str, epsilon: float | None, delta: float | None, params: dict[str, Any],
                      neighbours: str | None, method: str, conversion: str | None, as_json: bool) -> None:
    if delta is None:
        raise click.UsageError(f"ledger {name} needs --delta (and --epsilon)")
    if epsilon is None and name != "rlsvi":
        raise click.UsageError(f"ledger {name} needs --epsilon")
    with busy("accounting through dp-accounting's PLD…", method == "pld"):
        led = algorithm_ledger(declare(name, epsilon, delta, **params), neighbours, method, conversion)
    if as_json:
        emit_json(led.to_dict())
        return
    _print_algorithm_ledger(led)


def _print_algorithm_ledger(led: AlgorithmLedger) -> None:
    d = led.to_dict()
    title = (f"{d['algorithm']} ({d['privacy_model']}): target (ε, δ) = ({format_number(d['epsilon'])}, "
             f"{format_number(d['delta'])}), {d['relation'].replace('_', '-')}, {d['method']}")
    rows = [[r["name"], str(r["count"]) + ("" if r["paper_count"] == r["count"] else f" (paper {r['paper_count']})"),
             format_number(r["sensitivity_add_remove"], 6), format_number(r["sensitivity_replace_one"], 6),
             format_number(r["paper_sensitivity"], 6), format_number(r["sigma_paper"], 6), format_number(r["sigma_tight"], 6)]
            for r in d["releases"]]
    statistics = "\n".join(f"{r['name']}: {r['statistic']}" for r in d["releases"])
    print_table(title, ["release", "count", "Δ add/rem.", "Δ repl.-one", "Δ paper", "σ paper", "σ tight"], rows,
                caption=statistics)
    summary = [
        ["ε claimed by the paper", format_number(d["epsilon_claimed_by_paper"], 8)],
        ["ε of the paper's σ", format_number(d["epsilon_achieved_by_paper_sigma"], 8)],
        ["μ at the paper's σ", format_number(d["mu_at_paper_sigma"], 8)],
        ["σ_paper / σ_tight", format_number(d["noise_ratio"], 6)],
    ]
    print_table("Summary", ["", "value"], summary)
    print_lines([f"{f['severity']}: {f['code']}: {f['message']}" for f in d["flags"]] or ["no flags"], title="Flags")


def _file_ledger(path: Path, delta: float | None, epsilon: float | None, as_json: bool) -> None:
    if (delta is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --delta and --epsilon")
    ledger = _read_ledger(path)
    if epsilon is not None:
        with busy("accounting under every method (PLD takes a moment)…"):
            dcmp = compare_deltas(ledger, epsilon)
        if as_json:
            emit_json({"deltas": dcmp.deltas, "refusals": dcmp.refusals, "epsilon": epsilon, "mu": ledger.mu,
                       "rho": ledger.rho, "releases": ledger.to_dicts(),
                       "dp_event": _dp_event_dict(ledger.to_dp_event())})
            return
        print_table(f"δ at ε = {format_number(epsilon)}  (μ = {format_number(ledger.mu)}, ρ = {format_number(ledger.rho)})",
                    ["method", "δ", "note"],
                    [[key if conv is None else f"{m} ({conv})", format_number(dcmp.deltas[key], 10),
                      _REFUSAL_NOTES.get(key, "refused") if key in dcmp.refusals else ""]
                     for key, m, conv in VARIANTS])
        return
    with busy("accounting under every method (PLD takes a moment)…"):
        cmp = compare_methods(ledger, delta)  # type: ignore[arg-type]
    if as_json:
        emit_json({"methods": cmp.epsilons, "refusals": cmp.refusals, "delta": delta, "mu": ledger.mu,
                   "rho": ledger.rho, "releases": ledger.to_dicts(), "dp_event": _dp_event_dict(ledger.to_dp_event())})
        return
    print_table(f"Ledger {path.name}", ["release", "Δ", "σ", "count", "σ/Δ"],
                [[r.name, format_number(r.sensitivity), format_number(r.sigma), str(r.count),
                  format_number(r.noise_multiplier)] for r in ledger.releases])
    print_table(f"ε at δ = {format_number(delta)}  (μ = {format_number(ledger.mu)}, ρ = {format_number(ledger.rho)})",
                ["method", "ε", "÷ exact", "note"], _comparison_rows(cmp))


@cli.command()
@click.option("--steps", "-T", type=NUMBER, required=True, help="Number of items T (episodes for before-episode).")
@click.option("--schedule", type=click.Choice(SCHEDULES), default="after-each", show_default=True)
@click.option("--sigma", type=NUMBER, default=None, help="Noise σ per p-sum: with --delta, the counter's ε(δ).")
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True, help="ℓ2 sensitivity Δ of one item.")
@click.option("--delta", type=NUMBER, default=None)
@click.option("--epsilon", type=NUMBER, default=None, help="With --delta and no --sigma: calibrate σ per p-sum.")
@click.option("--method", type=click.Choice(METHODS), default="exact", show_default=True)
@click.option("--conversion", type=click.Choice(ALL_CONVERSIONS), default=None)
@click.option("--json", "as_json", is_flag=True)
def tree(steps: float, schedule: str, sigma: float | None, sensitivity: float, delta: float | None,
         epsilon: float | None, method: str, conversion: str | None, as_json: bool) -> None:
    """The binary counting mechanism: p-sums per item and per prefix, and the counter's privacy."""
    t = accountant.check_count("steps", steps)
    out: dict[str, Any] = {
        "steps": t,
        "schedule": schedule,
        "released_prefixes": counter_tree.released_prefixes(t, schedule),
        "max_psums_per_item": counter_tree.max_psums_per_item(t, schedule),
        "max_psums_per_prefix": counter_tree.max_psums_per_prefix(t, schedule),
        "paper_depth": counter_tree.paper_depth(t),
    }
    if out["max_psums_per_item"] > 0:
        out["worst_item"] = counter_tree.worst_item(t, schedule)
    if sigma is not None:
        if delta is None or epsilon is not None:
            raise click.UsageError("--sigma needs --delta (and no --epsilon)")
        with busy("accounting through dp-accounting's PLD…", method == "pld"):
            g = counter_tree.tree_epsilon(t, sigma, delta, sensitivity, schedule, method, conversion)
        out.update(sigma=sigma, sensitivity=sensitivity, delta=delta, method=g.method, conversion=g.conversion,
                   mu=counter_tree.tree_mu(t, sigma, sensitivity, schedule), epsilon=g.epsilon)
    elif epsilon is not None or delta is not None:
        if epsilon is None or delta is None:
            raise click.UsageError("calibration needs both --epsilon and --delta (or give --sigma and --delta)")
        with busy("calibrating σ through dp-accounting's PLD…", method == "pld"):
            cal = counter_tree.calibrate_tree_sigma(t, epsilon, delta, sensitivity, schedule, method, conversion)
        out.update(sensitivity=sensitivity, delta=delta, target_epsilon=epsilon, method=cal.method,
                   conversion=cal.conversion, sigma=cal.sigma, epsilon=cal.epsilon)
    if as_json:
        emit_json(out)
        return
    labels = {"released_prefixes": "released prefixes", "max_psums_per_item": "max p-sums per item (m)",
              "max_psums_per_prefix": "max p-sums per prefix", "paper_depth": "⌈log2 T⌉ (the seeds' m)",
              "worst_item": "worst item", "mu": "μ", "epsilon": "ε", "target_epsilon": "target ε", "sigma": "σ per p-sum"}
    print_table(f"Binary counter, T = {t}, {schedule}", ["", "value"],
                [[labels.get(k, k), format_number(v, 10) if isinstance(v, (int, float)) else str(v)]
                 for k, v in out.items() if k not in ("steps", "schedule") and v is not None])


@cli.command()
@click.option("--states", "-S", type=NUMBER, required=True)
@click.option("--actions", "-A", type=NUMBER, default=None, help="Actions A (with --run: default 2).")
@click.option("--horizon", "-H", type=NUMBER, default=None, help="Horizon H (with --run: default 2S).")
@click.option("--episodes", "-K", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--run", "do_run", is_flag=True, help="Run RLSVI and set the run's exact ε beside the closed form.")
@click.option("--env", "env_name", type=click.Choice(("riverswim", "riverswim-inhomogeneous", "tabular")),
              default=None, help="Environment of --run  [default: riverswim].")
@click.option("--seed", type=NUMBER, default=None, help="Seed of --run (environment, users, noise)  [default: 0].")
@click.option("--json", "as_json", is_flag=True)
def rlsvi(states: float, actions: float | None, horizon: float | None, episodes: float, delta: float, do_run: bool,
          env_name: str | None, seed: float | None, as_json: bool) -> None:
    """RLSVI's inherent-noise privacy: the paper's closed form, its tighter conversions, the worst case;
    with --run, one run's exact ε (the worst user's μ from the run's own visit counts)."""
    if not do_run:
        if env_name is not None or seed is not None:
            raise click.UsageError("--env and --seed need --run")
        missing = [n for n, v in (("--actions", actions), ("--horizon", horizon)) if v is None]
        if missing:
            raise click.UsageError(f"Missing option {' and '.join(repr(m) for m in missing)} (or give --run)")
    else:
        s_run = _bounded("states", states)
        actions = 2 if actions is None else _bounded("actions", actions)
        horizon = 2 * s_run if horizon is None else _bounded("horizon", horizon)
        _bounded("episodes", episodes)
    cf = rlsvi_closed_form(states, actions, horizon, episodes, delta)  # type: ignore[arg-type]
    s, a, h, k = cf.states, cf.actions, cf.horizon, cf.episodes
    mu_wc = rlsvi_worst_case_mu(s, a, h, k)
    eps_wc = 0.0 if mu_wc == 0.0 else accountant.gdp_epsilon(mu_wc, cf.delta)
    out = cf.to_dict() | {"mu_worst_case": mu_wc, "epsilon_worst_case_exact": eps_wc}
    rows = [["ρ (Corollary 14)", format_number(cf.rho, 10)],
            ["ε paper: ρ + 2√(ρ ln 1/δ)", format_number(cf.epsilon_paper, 10)],
            ["ε, same ρ, optimal RDP conversion", format_number(cf.epsilon_rdp_optimal, 10)],
            ["ε, same ρ, exact GDP (μ = √(2ρ))", format_number(cf.epsilon_exact_gdp, 10)],
            ["μ worst case (visited cells, later episodes)", format_number(mu_wc, 10)],
            ["ε worst case, exact", format_number(eps_wc, 10)]]
    title = f"RLSVI, S = {s}, A = {a}, H = {h}, K = {k}, δ = {format_number(cf.delta)}"
    if do_run:
        from dpkit.algorithms.rlsvi import rlsvi_run

        env_name = env_name or "riverswim"
        seed_value = check_index("seed", 0 if seed is None else seed)
        with progress_bar(f"RLSVI on {env_name}", k) as advance:
            run, privacy = rlsvi_run(env_name, s, a, k, seed_value, horizon=h, delta=cf.delta, progress=advance)
        eps_run = privacy.exact_epsilon(cf.delta)
        out |= {"env": env_name, "seed": seed_value, "beta": "russo", "sigma": run.sigmas["Q-values"],
                "mu_run": privacy.mu, "epsilon_run_exact": eps_run, "worst_user": privacy.worst_user,
                "cumulative_regret": float(run.cumulative_regret[-1])}
        rows += [[f"μ this run (worst user: episode {privacy.worst_user})", format_number(privacy.mu, 10)],
                 ["ε this run, exact", format_number(eps_run, 10)],
                 ["cumulative regret", format_number(out["cumulative_regret"], 10)]]
        title += f", {env_name}, seed {seed_value}"
    if as_json:
        emit_json(out)
        return
    print_table(title, ["", "value"], rows)


def _pairs(value: str) -> list[tuple[Any, Any]]:
    obj = load_object("--neighbours", value)
    if callable(obj):
        try:
            obj = obj()
        except Exception as err:
            raise ValueError(f"--neighbours: calling {value!r} failed: {type(err).__name__}: {err}") from None
    if isinstance(obj, tuple) and len(obj) == 2:
        return [obj]
    if isinstance(obj, list) and obj and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in obj):
        return [tuple(p) for p in obj]  # type: ignore[misc]
    raise ValueError(f"--neighbours: {value!r} must be a pair (D, D′), a non-empty list of pairs, or a function returning one")


def _audit_attack(value: str) -> Any:
    from dpkit.audits.attacks import ATTACK_NAMES

    if value == "lr":
        return "gaussian-lr-fitted"
    if value == "learned":
        return "logistic"
    if value == "auto" or (value in ATTACK_NAMES and value not in ("gaussian-lr", "score")):
        return value
    if ":" not in value:
        raise ValueError(f"--attack must be auto, lr, learned, one of {', '.join(n for n in ATTACK_NAMES if n not in ('gaussian-lr', 'score'))} "
                         f"or FILE.py:SCORE, got {value!r}")
    return ScoreFunction(FileFunction("--attack", value), name=value)


#: Options of one form of ``dpkit audit`` only (the other form refuses them).
_ALGORITHM_ONLY = ("sigma", "observer", "runs", "episodes", "position")
_TARGET_ONLY = ("mu", "rho", "rdp_orders", "rdp_values", "claim_file", "trials", "chunk_size")


def _refuse_options(ctx: click.Context, names: Sequence[str], form: str) -> None:
    """One error line for an option of the other form that the user typed (never silently ignored)."""
    from click.core import ParameterSource

    for name in names:
        if ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, None):
            flag = "--" + {"claim_file": "claim"}.get(name, name).replace("_", "-")
            raise click.UsageError(f"{flag} does not apply to {form}")


def _target_claim(epsilon: float | None, delta: float | None, mu: float | None, rho: float | None,
                  rdp_orders: list[float] | None, rdp_values: list[float] | None, claim_file: str | None) -> Claim:
    """The one claim form the user gave: (ε, δ) (δ = 0: pure DP), μ, ρ, an RDP curve, or a ledger file."""
    forms = [name for name, given in (("--epsilon/--delta", epsilon is not None), ("--mu", mu is not None),
                                      ("--rho", rho is not None),
                                      ("--rdp-orders/--rdp-values", rdp_orders is not None or rdp_values is not None),
                                      ("--claim", claim_file is not None)) if given]
    if len(forms) != 1:
        raise click.UsageError("give exactly one claim: --epsilon and --delta, --mu, --rho, --rdp-orders with "
                               f"--rdp-values, or --claim FILE; got {', '.join(forms) if forms else 'none'}")
    if epsilon is not None:
        if delta is None:
            raise click.UsageError("--epsilon needs --delta (0 for pure ε-DP)")
        return Claim.dp(epsilon, delta)
    if mu is not None:
        return Claim.gdp(mu)
    if rho is not None:
        return Claim.zcdp(rho)
    if claim_file is not None:
        return Claim.ledger(_read_ledger(Path(claim_file)))
    if rdp_orders is None or rdp_values is None:
        raise click.UsageError("--rdp-orders and --rdp-values go together")
    return Claim.rdp(rdp_orders, rdp_values)


@cli.command()
@click.argument("algorithm", required=False, metavar="[ALGORITHM]")
@click.option("--target", default=None, metavar="FILE.py:FUNCTION",
              help="The release function release(dataset, rng, n) -> array (n, …).")
@click.option("--neighbours", default=None, metavar="FILE.py:NAME",
              help="A pair (D, D′), a list of pairs, or a function returning them.")
@click.option("--sigma", default="tight", show_default=True,
              help="ALGORITHM form: paper | tight | a number (every release's σ).")
@click.option("--observer", default=None, help="ALGORITHM form: what the attacker sees (default: the white-box one).")
@click.option("--runs", type=NUMBER, default=None, help="ALGORITHM form: runs of the algorithm per dataset (4000).")
@click.option("--episodes", type=NUMBER, default=None, help="ALGORITHM form: users K (default per algorithm).")
@click.option("--position", type=click.Choice(("first", "middle", "last")), default="first", show_default=True,
              help="ALGORITHM form: where the changed user sits.")
@click.option("--epsilon", type=NUMBER, default=None, help="Claimed ε (with --delta; δ = 0 is pure ε-DP) ...")
@click.option("--delta", type=NUMBER, default=None, help="... claimed δ; with --mu/--rho/--rdp-*, the δ of the ε reading (1e-5).")
@click.option("--mu", type=NUMBER, default=None, help="... or a claimed μ (GDP) ...")
@click.option("--rho", type=NUMBER, default=None, help="... or a claimed ρ (zCDP) ...")
@click.option("--rdp-orders", type=NUMBER_LIST, default=None, help="... or a claimed RDP curve: orders α > 1 ...")
@click.option("--rdp-values", type=NUMBER_LIST, default=None, help="... and ε_R(α) at each.")
@click.option("--claim", "claim_file", default=None, metavar="FILE",
              help="... or a ledger file (JSON/TOML, as dpkit ledger FILE reads): its exact μ-GDP.")
@click.option("--trials", type=NUMBER, default=100_000, show_default=True, help="Runs per dataset.")
@click.option("--confidence", type=NUMBER, default=0.95, show_default=True)
@click.option("--attack", default="auto", show_default=True,
              help="auto (fit every attack, choose one on a held-out split) | lr (Gaussian likelihood ratio) | "
                   "learned (logistic) | density-ratio | atoms | boosting | histogram | FILE.py:SCORE; "
                   "ALGORITHM form: white-box | learned.")
@click.option("--executor", type=click.Choice(("local", "processes", "dask")), default="local", show_default=True)
@click.option("--workers", type=NUMBER, default=None, help="Process-pool or local Dask cluster size.")
@click.option("--scheduler", default=None, help="Dask scheduler address (--executor dask; default: a local cluster).")
@click.option("--seed", type=NUMBER, default=0, show_default=True)
@click.option("--chunk-size", type=NUMBER, default=100_000, show_default=True, help="Runs per task.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def audit(ctx: click.Context, algorithm: str | None, target: str | None, neighbours: str | None, sigma: str,
          observer: str | None, runs: float | None, episodes: float | None, position: str, epsilon: float | None,
          delta: float | None, mu: float | None, rho: float | None, rdp_orders: list[float] | None,
          rdp_values: list[float] | None, claim_file: str | None, trials: float, confidence: float, attack: str,
          executor: str, workers: float | None, scheduler: str | None, seed: float, chunk_size: float,
          as_json: bool) -> int:
    """Audit an RL algorithm (ALGORITHM) or a release function (--target, --neighbours).

    Exit status: 1 when the verdict is a violation (so an audit can gate CI), 0 when consistent or
    inconclusive, 2 for bad input.

    \b
    dpkit audit ALGORITHM [--sigma paper|tight|VALUE] [--observer …] [--runs N] [--episodes K]
    dpkit audit --target FILE.py:FN --neighbours FILE.py:PAIRS --epsilon E --delta D
    """
    if algorithm is not None:
        if target is not None or neighbours is not None:
            raise click.UsageError("give ALGORITHM, or --target and --neighbours, not both")
        _refuse_options(ctx, _TARGET_ONLY, "an ALGORITHM audit")
        if ctx.get_parameter_source("attack").name != "DEFAULT" and attack not in ("white-box", "learned", "lr"):
            raise click.UsageError(f"--attack for an ALGORITHM audit must be white-box or learned, got {attack!r}")
        return _audit_algorithm(algorithm, sigma, observer, runs, episodes, position, epsilon, delta, confidence,
                                "white-box" if attack == "auto" else attack, executor, workers, scheduler, seed,
                                as_json)
    if target is None or neighbours is None:
        raise click.UsageError("give ALGORITHM, or both --target and --neighbours")
    _refuse_options(ctx, _ALGORITHM_ONLY, "a --target audit")
    claim = _target_claim(epsilon, delta, mu, rho, rdp_orders, rdp_values, claim_file)
    confidence = accountant.check_probability("confidence", confidence)
    runs = accountant.check_count("trials", trials)
    if runs > 10**9:
        raise ValueError(f"trials must be <= 1,000,000,000, got {runs:,}")
    chunk = accountant.check_count("chunk-size", chunk_size)
    seed_value = check_index("seed", seed)
    release = FileFunction("--target", target)
    pairs = _pairs(neighbours)
    chosen = _audit_attack(attack)
    name = {"local": "in-process"}.get(executor, executor)
    n_workers = None if workers is None else accountant.check_count("workers", workers)
    with make_executor(name, workers=n_workers, scheduler=scheduler) as pool, \
            progress_bar("auditing", 2 * runs * len(pairs)) as advance:
        try:
            result = audit_pairs(release, pairs, claim, alpha=round(1.0 - confidence, 12), attack=chosen,
                                 seed=seed_value, runs=runs, delta=delta if claim.kind != "dp" else None,
                                 executor=pool, chunk_size=chunk, progress=advance)
        except (ValueError, TypeError):
            raise
        except Exception as err:  # the user's code raised: one line, no traceback
            raise ValueError(f"the audit failed in user code: {type(err).__name__}: {err}") from None
    best = result.strongest
    out = best.to_dict()
    out.update(verdict=result.verdict, pairs=len(pairs), strongest_pair=result.results.index(best))
    if as_json:
        emit_json(out)
    else:
        est = best.estimate
        reason = "" if result.verdict != "inconclusive" else \
            f" (power {format_number(best.power_ratio, 3)} of the claim < 0.5: more --trials)"
        print_table(
            f"Audit of {target} against {claim.describe()}: {result.verdict}{reason}", ["", "value"],
            [["ε lower bound (δ = " + format_number(est.delta) + ")", format_number(best.epsilon_lower, 6)],
             ["claimed ε at that δ", format_number(best.claimed_epsilon, 6)],
             ["μ lower bound", format_number(best.mu_lower, 6)],
             ["μ estimate [interval]", f"{format_number(est.mu_estimate, 6)} [{format_number(est.mu_interval[0], 6)}, "
                                       f"{format_number(est.mu_interval[1], 6)}]"],
             ["claimed μ", format_number(best.claimed_mu, 6)],
             ["δ lower bound at the claimed ε", format_number(best.judgement.delta_lower, 6)],
             ["power (bound an ideal attack certifies at the claim) / ratio",
              f"{format_number(best.power, 6)} / {format_number(best.power_ratio, 4)}"],
             ["attack", best.attack],
             ["FPR / FNR", f"{format_number(est.fpr, 4)} / {format_number(est.fnr, 4)}"],
             ["trials per dataset, pairs", f"{runs}, {len(pairs)}"],
             ["confidence", format_number(confidence)]],
        )
    return 1 if result.verdict == "violation" else 0


def _audit_algorithm(algorithm: str, sigma: str, observer: str | None, runs: float | None, episodes: float | None,
                     position: str, epsilon: float | None, delta: float | None, confidence: float, attack: str,
                     executor: str, workers: float | None, scheduler: str | None, seed: float, as_json: bool) -> int:
    from dpkit.audits.rl import OBSERVERS, RL_ATTACKS, audit_setting, default_setting

    check_choice("ALGORITHM", algorithm, tuple(OBSERVERS))
    attack = "white-box" if attack == "lr" else attack
    check_choice("attack", attack, RL_ATTACKS)
    setting = default_setting(
        algorithm, sigma=_sigma_choice(sigma), observer=observer, position=position,
        episodes=None if episodes is None else accountant.check_count("episodes", episodes),
        epsilon=epsilon, delta=delta,
    )
    n_runs = 4000 if runs is None else accountant.check_count("runs", runs)
    confidence = accountant.check_probability("confidence", confidence)
    name = {"local": "in-process"}.get(executor, executor)
    n_workers = None if workers is None else accountant.check_count("workers", workers)
    with make_executor(name, workers=n_workers, scheduler=scheduler) as pool, \
            progress_bar(f"auditing {algorithm}", 2 * n_runs) as advance:
        result = audit_setting(setting, runs=n_runs, seed=check_index("seed", seed), attack=attack,
                               alpha=round(1.0 - confidence, 12), executor=pool, progress=advance)
    out = result.to_dict()
    exit_code = 1 if result.verdict == "violation" else 0
    if as_json:
        emit_json(out)
        return exit_code
    closed = "" if result.paper_epsilon_closed_form is None else \
        f" (paper's closed form ε(δ) = {format_number(result.paper_epsilon_closed_form, 6)})"
    print_table(
        f"Audit of {algorithm} ({setting.observer} observer, {out['attack']} attack): {result.verdict}",
        ["", "value"],
        [["claimed ε (target) at δ = " + format_number(setting.delta), format_number(result.claimed_epsilon, 6) + closed],
         ["σ used", ", ".join(f"{k}: {format_number(v, 6)}" for k, v in result.sigmas.items())],
         ["σ the claim needs (tight)", ", ".join(f"{k}: {format_number(v, 6)}" for k, v in result.sigmas_claim.items())],
         ["exact ε / μ of the declared releases", f"{format_number(result.exact_epsilon, 6)} / "
                                                  f"{format_number(result.exact_mu, 6)}"],
         ["exact μ of the canary pair (reach)", f"{format_number(result.pair_mu, 6)} ({format_number(result.reach, 4)})"],
         ["μ the declaration allows this pair (Δ capped)", format_number(result.pair_mu_allowed, 6)],
         ["audited ε lower bound", format_number(result.epsilon_lower, 6)],
         ["audited μ lower bound (÷ pair μ)", f"{format_number(result.mu_lower, 6)} "
                                              f"({format_number(result.efficiency, 4)})"],
         ["power / ratio to the allowance", f"{format_number(result.audit.power, 6)} / "
                                            f"{format_number(result.audit.power_ratio, 4)}"],
         ["verdict vs declaration / vs paper claim", f"{result.verdict} / {result.claim_verdict}"],
         ["runs per dataset, episodes, position", f"{n_runs}, {setting.episodes}, {setting.position}"],
         ["relation", setting.relation.replace("_", "-")],
         ["time", f"{result.seconds:.1f} s"]],
    )
    return exit_code


#: The standard budgets of ``dpkit budgets``.
STANDARD_EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
STANDARD_COMPOSITIONS = (1, 10, 100, 1000)
#: The most values ``--epsilons`` and ``--compositions`` of ``dpkit budgets`` may list.
MAX_BUDGET_VALUES = 50
_BUDGET_METHODS: tuple[tuple[str, str | None], ...] = (
    ("exact", None), ("pld", None), ("rdp", "improved"), ("zcdp", "bun-steinke"), ("classic", None))


@cli.command()
@click.option("--delta", type=NUMBER, default=1e-5, show_default=True)
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True)
@click.option("--epsilons", type=NUMBER_LIST, default=",".join(map(str, STANDARD_EPSILONS)), show_default=True)
@click.option("--compositions", type=NUMBER_LIST, default=",".join(map(str, STANDARD_COMPOSITIONS)), show_default=True)
@click.option("--no-pld", is_flag=True, help="Skip the (slow) PLD column.")
@click.option("--json", "as_json", is_flag=True)
def budgets(delta: float, sensitivity: float, epsilons: list[float], compositions: list[float], no_pld: bool,
            as_json: bool) -> None:
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
    with Progress(console=stderr_console(), transient=True) as progress:
        task = progress.add_task("calibrating", total=len(ks) * len(epsilons) * len(meths))
        for k in ks:
            for e in epsilons:
                row: dict[str, Any] = {"epsilon": e, "compositions": k, "sigma": {}}
                for m, conv in meths:
                    try:
                        row["sigma"][m] = calibrate_sigma(e, delta, sensitivity, k, m, conv).sigma
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
        [[str(r["compositions"]), format_number(r["epsilon"])]
         + [format_number(r["sigma"][c], 6) for c in cols]
         + [f"{r['sigma']['rdp'] / r['sigma']['exact']:.4f}" if r["sigma"]["rdp"] and r["sigma"]["exact"] else "—"]
         for r in results],
        caption="classic: — where ε/K ≥ 1 (the Dwork–Roth bound does not apply).",
    )


#: Stated limits of the sizes ``simulate`` and ``rlsvi --run`` accept, checked before anything is allocated.
LIMITS = {"episodes": 10**6, "seeds": 10**3, "states": 10**3, "actions": 10**2, "horizon": 10**4,
          "state_dim": 10**2, "control_dim": 10**2, "workers": 256}
#: The largest total work (episodes × seeds × horizon steps) of one ``simulate``.
MAX_STEPS = 10**9


def _bounded(name: str, value: float) -> int:
    """``value`` as a count >= 1 that is at most ``LIMITS[name]``, or a ValueError naming the option."""
    k = check_count(name, value)
    if k > LIMITS[name]:
        raise ValueError(f"--{name.replace('_', '-')} = {k} is above the limit of {LIMITS[name]:,}")
    return k


def _check_out_dir(out: Path) -> None:
    """Refuse an ``--out`` that is not a directory or cannot be created/written, before any work."""
    import tempfile

    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} exists and is not a directory")
    base = out
    while not base.exists():
        if base.parent == base:
            break
        base = base.parent
    if not base.is_dir():
        raise ValueError(f"--out {str(out)!r}: {str(base)!r} is not a directory")
    try:  # probe (os.access says yes to root even where writing fails, e.g. /proc)
        tempfile.TemporaryDirectory(prefix="dpkit-probe-", dir=base).cleanup()
    except OSError as err:
        raise ValueError(f"--out {str(out)!r}: cannot write in {str(base)!r} ({err.strerror or err})") from None


def _sigma_choice(value: str) -> str | float:
    """``paper``, ``tight`` or a number >= 0 (the API checks the range)."""
    if value in ("paper", "tight"):
        return value
    try:
        return float(value)
    except ValueError:
        raise click.BadParameter(f"must be 'paper', 'tight' or a number, got {value!r}") from None


@cli.command()
@click.argument("algorithm", type=click.Choice(SIMULATED_ALGORITHMS))
@click.option("--env", "env_name", type=click.Choice(SIMULATED_ENVIRONMENTS), default=None,
              help="Environment (default: riverswim; lq for the LQ algorithms).")
@click.option("--states", "-S", type=NUMBER, default=5, show_default=True, help="States of a tabular environment.")
@click.option("--actions", "-A", type=NUMBER, default=2, show_default=True, help="Actions (tabular env only).")
@click.option("--horizon", "-H", type=NUMBER, default=None, help="Horizon (default: 2S tabular, 10 LQ).")
@click.option("--state-dim", type=NUMBER, default=2, show_default=True, help="LQ state dimension n.")
@click.option("--control-dim", type=NUMBER, default=1, show_default=True, help="LQ control dimension d.")
@click.option("--episodes", "-K", type=NUMBER, required=True, help="Episodes K (one user each).")
@click.option("--epsilon", type=NUMBER, default=None, help="Target ε of a private algorithm.")
@click.option("--delta", type=NUMBER, default=None, help="Target δ of a private algorithm.")
@click.option("--sigma", "sigma_text", default="paper", show_default=True, help="paper, tight or a number.")
@click.option("--seeds", type=NUMBER, default=1, show_default=True, help="Runs 0..N−1.")
@click.option("--env-seed", type=NUMBER, default=0, show_default=True, help="Seed of the environment.")
@click.option("--workers", type=NUMBER, default=1, show_default=True, help="Run seeds in a process pool.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory for the regret CSV and PNG.")
@click.option("--json", "as_json", is_flag=True)
def simulate(algorithm: str, env_name: str | None, states: float, actions: float, horizon: float | None,
             state_dim: float, control_dim: float, episodes: float, epsilon: float | None, delta: float | None,
             sigma_text: str, seeds: float, env_seed: float, workers: float, out: Path, as_json: bool) -> None:
    """Regret of ALGORITHM over seeds: per-episode CSV, a figure, and a summary."""
    from dpkit.algorithms.simulation import LQ_ALGORITHMS, Experiment

    from .experiments import run_experiment, write_outputs

    _check_out_dir(out)  # before any work
    if env_name is None:
        env_name = "lq" if algorithm in LQ_ALGORITHMS else "riverswim"
    n_seeds = _bounded("seeds", seeds)
    n_workers = _bounded("workers", workers)
    experiment = Experiment(
        algorithm=algorithm, env=env_name, episodes=_bounded("episodes", episodes),
        states=_bounded("states", states), actions=_bounded("actions", actions),
        horizon=None if horizon is None else _bounded("horizon", horizon), epsilon=epsilon, delta=delta,
        sigma=_sigma_choice(sigma_text), state_dim=_bounded("state_dim", state_dim),
        control_dim=_bounded("control_dim", control_dim), env_seed=check_index("env_seed", env_seed),
    )
    steps = experiment.episodes * n_seeds * (experiment.horizon or 2 * experiment.states)
    if steps > MAX_STEPS:
        raise ValueError(f"--episodes × --seeds × horizon = {steps:,} steps is above the limit of {MAX_STEPS:,}")
    with progress_bar(f"{algorithm} on {env_name}", experiment.episodes * n_seeds) as advance:
        result = run_experiment(experiment, n_seeds, workers=n_workers, progress=advance)
    files = write_outputs(result, out)
    summary = result.summary() | {"files": files}
    if as_json:
        emit_json(summary)
        return
    print_lines([
        f"{algorithm} on {env_name}: K = {experiment.episodes}, {n_seeds} seed(s)",
        "σ: " + (", ".join(f"{k} = {format_number(v, 5)}" for k, v in summary["sigmas"].items()) or "no noise"),
        f"final regret: {format_number(summary['final_regret_mean'], 6)} ± {format_number(summary['final_regret_std'], 4)}",
        f"log-log slope of mean cumulative regret: {format_number(summary['loglog_slope'], 4)}",
        f"wall time: {summary['wall_time_seconds']:.2f} s",
        f"wrote {files['csv']} and {files['png']}",
    ])


@cli.command()
@click.option("--config", "config_path", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Report configuration (TOML); default: the shipped one (all five seed algorithms, small sizes).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("report"), show_default=True,
              help="Directory for report.md, report.html, report.json and figures/.")
@click.option("--quick", is_flag=True, help="Cap episodes, seeds and audit runs (the config's [quick]): under a minute.")
@click.option("--json", "as_json", is_flag=True)
def report(config_path: Path | None, out: Path, quick: bool, as_json: bool) -> None:
    """A privacy report (Markdown, self-contained HTML, JSON, PNG figures) of the algorithms in a config."""
    import time

    from dpkit.reports.config import load_config
    from dpkit.reports.job import compute_report, count_steps
    from dpkit.reports.render import check_output_dir, figure_list, write_report

    check_output_dir(out)
    config = load_config(config_path)  # the whole config (and --out) is checked before anything runs
    if quick:
        config = config.shrunk()
    # the command that reproduces the numbers; --out is left out so that report.json does not depend on where it goes
    command = ["dpkit", "report"] + (["--config", str(config_path)] if config_path is not None else []) \
        + (["--quick"] if quick else [])
    started = time.perf_counter()
    with progress_bar("computing the report", count_steps(config)) as advance:
        data = compute_report(config, command=command, progress=advance)
    with progress_bar("drawing figures", len(figure_list(data))) as advance:
        files = write_report(data, out, progress=advance)
    stderr_console().print(f"report written to {plain(out)} in {time.perf_counter() - started:.1f} s",
                           markup=False, highlight=False)
    if as_json:
        emit_json({"out": str(out), "files": files, "summary": data["summary"]})
        return
    print_table(
        f"{data['title']} → {out}",
        ["algorithm", "claimed ε", "ε, paper σ", "σ ratio", "audit ε ≥", "verdict"],
        [[r["algorithm"], format_number(r["claimed_epsilon"], 6), format_number(r["epsilon_at_paper_sigma"], 6),
          format_number(r["noise_ratio"], 4), format_number(r["audited_epsilon_lower"], 4), r["verdict"] or "not audited"]
         for r in data["summary"]],
        caption=f"wrote {', '.join(files[:3])} and {len(files) - 3} figures",
    )


def _error(message: object) -> int:
    """Print ``error: MESSAGE`` as one plain line on stderr (user text in it cannot inject) and return 2."""
    click.echo(f"error: {plain(message)}", err=True)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI, turning every bad input into one line ``error: …`` and exit code 2.

    Ctrl-C prints ``error: interrupted`` and exits with 130 (128 + SIGINT, the shell's convention);
    a report being written when it comes keeps the previous report (see :func:`dpkit.reports.render.write_report`).
    """
    args = list(argv) if argv is not None else sys.argv[1:]
    try:
        # numpy's overflow warnings of extreme inputs are not for users: the results handle them (inf, 0)
        with warnings.catch_warnings(), cli.make_context("dpkit", args) as ctx:
            warnings.simplefilter("ignore", RuntimeWarning)
            rv = cli.invoke(ctx)
    except click.exceptions.NoArgsIsHelpError as err:  # pragma: no cover - click >= 8.2
        click.echo(err.ctx.get_help() if err.ctx else str(err))
        return 0
    except click.exceptions.Exit as err:  # --help, --version
        return err.exit_code
    except click.UsageError as err:
        return _error(err.format_message())
    except (KeyboardInterrupt, click.Abort):
        click.echo("error: interrupted", err=True)
        return 130
    except (ValueError, TypeError) as err:  # includes UnicodeDecodeError
        return _error(err)
    except MemoryError as err:
        return _error(f"not enough memory for these sizes ({err}); lower --episodes, --states or the dimensions")
    except RecursionError:
        return _error("input nested too deeply")
    except OverflowError as err:
        return _error(f"a number is too large to compute with ({err})")
    except OSError as err:
        name = f" {str(err.filename)!r}" if err.filename else ""
        return _error(f"cannot access{name}: {err.strerror or err}")
    except click.ClickException as err:
        return _error(err.format_message())
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
