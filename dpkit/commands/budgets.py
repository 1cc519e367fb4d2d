"""``dpkit budgets``: the σ that standard budgets need under every method — for K Gaussian releases, or for DP-SGD:
K steps at a Poisson sampling rate (``--sampling-rate``, a decimal or a fraction ``256/60000``, or ``--dataset-size
N --batch-size B``), or ``--epochs`` E1,E2,… over the dataset (T = ⌈E·N/B⌉ steps each). Only pld and rdp interpret a
subsampled release; the others are shown refused."""

from __future__ import annotations

import math
from typing import Any

import click

from dpkit import accountant
from dpkit.accountant import calibrate_sigma
from dpkit.accountant.accountants import AccountingMethod
from dpkit.render import emit_json, format_number, print_table, stderr_console

from .option_types import NUMBER, NUMBER_LIST, RATE
from .refusals import given

#: The standard budgets of ``dpkit budgets``.
STANDARD_EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
STANDARD_COMPOSITIONS = (1, 10, 100, 1000)
#: The most values ``--epsilons`` and ``--compositions`` of ``dpkit budgets`` may list.
MAX_BUDGET_VALUES = 50
_BUDGET_METHODS: tuple[tuple[AccountingMethod, str | None], ...] = (
    (AccountingMethod.EXACT, None),
    (AccountingMethod.PLD, None),
    (AccountingMethod.RDP, "improved"),
    (AccountingMethod.ZCDP, "bun-steinke"),
    (AccountingMethod.CLASSIC, None),
)


def _sigma(
    e: float, delta: float, sensitivity: float, k: int, method: AccountingMethod, conv: str | None, q: float | None
) -> Any:
    """σ for one cell, or None where the method refuses (classic where ε/K >= 1; a sampled release: not pld/rdp)."""
    if q is None:
        try:
            return calibrate_sigma(
                e, delta, sensitivity=sensitivity, compositions=k, method=method, conversion=conv
            ).sigma
        except ValueError:
            return None
    from dpkit.accountant.event_calibration import CalibrationMethod, calibrate_noise_multiplier

    if method not in tuple(CalibrationMethod):  # the methods that calibrate a subsampled release
        return None

    cal = calibrate_noise_multiplier(e, delta, sampling_probability=q, steps=k, method=method)
    from dpkit.accountant.numerics import round_up

    return round_up(cal.value * sensitivity)


@click.command()
@click.option("--delta", type=NUMBER, default=1e-5, show_default=True)
@click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True)
@click.option("--epsilons", type=NUMBER_LIST, default=",".join(map(str, STANDARD_EPSILONS)), show_default=True)
@click.option("--compositions", type=NUMBER_LIST, default=",".join(map(str, STANDARD_COMPOSITIONS)), show_default=True)
@click.option(
    "--sampling-rate", type=RATE, default=None, help="DP-SGD: Poisson sampling rate q (or 256/60000): K is the steps."
)
@click.option("--dataset-size", type=NUMBER, default=None, help="DP-SGD: N examples (with --batch-size: q = B/N).")
@click.option("--batch-size", type=NUMBER, default=None, help="DP-SGD: expected batch size B.")
@click.option("--epochs", type=NUMBER_LIST, default=None, help="DP-SGD: epochs E1,E2,… instead of K (T = ceil(E·N/B)).")
@click.option("--no-pld", is_flag=True, help="Skip the (slow) PLD column.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
# 11 parameters: a click command receives one per option (and its context)
def budgets(
    ctx: click.Context,
    delta: float,
    sensitivity: float,
    epsilons: list[float],
    compositions: list[float],
    sampling_rate: str | None,
    dataset_size: float | None,
    batch_size: float | None,
    epochs: list[float] | None,
    no_pld: bool,
    as_json: bool,
) -> None:
    """Calibration table: σ for standard budgets under every method (K Gaussian releases, or DP-SGD)."""
    from dpkit.accountant.dp_sgd import SamplingSchedule
    from dpkit.accountant.validation import check_extended_nonnegative, check_unit_interval

    delta = check_unit_interval("delta", delta)
    accountant.check_positive("sensitivity", sensitivity)
    for name, values in (("epsilons", epsilons), ("compositions", compositions), ("epochs", epochs or [])):
        if len(values) > MAX_BUDGET_VALUES:
            raise ValueError(f"--{name} has {len(values):,} values, above the limit of {MAX_BUDGET_VALUES}")
    for i, e in enumerate(epsilons):
        check_extended_nonnegative(f"epsilons[{i}]", e)
    if epochs is not None and given(ctx, "compositions"):
        raise click.UsageError("--epochs and --compositions both set the number of steps: give one")
    schedules: list[SamplingSchedule] = []
    q = None
    if sampling_rate is not None or dataset_size is not None or batch_size is not None or epochs is not None:
        try:

            def make(**length: float) -> SamplingSchedule:
                return SamplingSchedule.of(
                    dataset_size=dataset_size, batch_size=batch_size, sampling_rate=sampling_rate, **length
                )

            if epochs is not None:
                schedules = [make(epochs=e) for e in epochs]
            else:
                schedules = [make(steps=k) for k in compositions]
        except ValueError as err:  # the API's names as the command line spells them
            text = str(err)
            for name in ("dataset_size", "batch_size", "sampling_rate", "epochs", "steps"):
                text = text.replace(name, "--" + name.replace("_", "-"))
            raise ValueError(text) from None
        q = schedules[0].sampling_rate
    ks = (
        [s.steps for s in schedules]
        if schedules
        else [accountant.check_count(f"compositions[{i}]", k) for i, k in enumerate(compositions)]
    )
    meths = [m for m in _BUDGET_METHODS if not (no_pld and m[0] == AccountingMethod.PLD)]
    results: list[dict[str, Any]] = []
    from rich.progress import Progress

    with Progress(console=stderr_console(), transient=True) as progress:
        task = progress.add_task("calibrating", total=len(ks) * len(epsilons) * len(meths))
        for k in ks:
            for e in epsilons:
                row: dict[str, Any] = {"epsilon": e, "compositions": k, "sigma": {}}
                for m, conv in meths:
                    row["sigma"][m] = _sigma(e, delta, sensitivity, k, m, conv, q)
                    progress.advance(task)
                results.append(row)
    if schedules:
        for row, schedule in zip(
            results, [s for s in schedules for _ in epsilons], strict=True
        ):  # each K's rows carry its schedule
            row["schedule"] = schedule.to_dict()
    if as_json:
        emit_json({"delta": delta, "sensitivity": sensitivity, "sampling_rate": q, "rows": results})
        return
    cols = [m for m, _ in meths]
    caption = (
        "classic: — where ε/K ≥ 1 (the Dwork–Roth bound does not apply)."
        if q is None
        else "K is the number of DP-SGD steps"
        + ("" if epochs is None else " (" + "; ".join(s.describe().split(", ", 1)[1] for s in schedules) + ")")
        + "; exact, zcdp and classic do not interpret a subsampled release (—)."
    )
    if delta in (0.0, 1.0):
        caption += f" At δ = {format_number(delta)} every σ is {'+inf' if delta == 0.0 else '0'}: no ratio (—)."
    sampled = "" if q is None else f", DP-SGD: {schedules[0].describe().split(', T =')[0]}"
    print_table(
        f"σ needed for (ε, δ = {format_number(delta)}), Δ = {format_number(sensitivity)}{sampled}",
        ["K", "ε"] + [f"σ {c}" for c in cols] + ["rdp÷exact" if q is None else "rdp÷pld"],
        [
            [str(r["compositions"]), format_number(r["epsilon"])]
            + [format_number(r["sigma"][c], 6) for c in cols]
            + [_ratio(r["sigma"], "exact" if q is None else "pld")]
            for r in results
        ],
        caption=caption,
    )


def _ratio(sigmas: dict[str, Any], base: str) -> str:
    """rdp's σ over the base's; "—" where the ratio is undefined: a σ refused, or both 0 (δ = 1) or +inf (δ = 0)."""
    top, bottom = sigmas.get("rdp"), sigmas.get(base)
    if top is None or bottom is None or not (0.0 < top < math.inf and 0.0 < bottom < math.inf):
        return "—"
    return f"{top / bottom:.4f}"
