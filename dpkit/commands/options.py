"""What the commands share: option groups, the methods table, checks of sizes and paths, ledger files.

The number types are in :mod:`dpkit.commands.option_types`, the refusal of options in :mod:`dpkit.commands.refusals`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from dpkit import accountant
from dpkit.accountant import RDP_CONVERSIONS, VARIANTS, ZCDP_CONVERSIONS, AccountingMethod, Ledger
from dpkit.accountant.algorithm_ledgers import Allocation
from dpkit.accountant.validation import check_count, enum_values, shown_int
from dpkit.render import format_number

from .option_types import COUNT, NUMBER

ALL_CONVERSIONS = tuple(dict.fromkeys(RDP_CONVERSIONS + ZCDP_CONVERSIONS))


#: The most compositions K a command takes: every count up to it is a double exactly (the accounting computes in them).
MAX_COMPOSITIONS = 2**53


def compositions_count(value: float) -> int:
    """``--compositions`` as a count (a ValueError unless an integer >= 1 and at most :data:`MAX_COMPOSITIONS`).

    Args:
        value: The number given (:data:`~dpkit.commands.option_types.COUNT` reads it exactly).

    Returns:
        The count.

    Raises:
        ValueError: Not an integer, below 1 or above :data:`MAX_COMPOSITIONS`.
    """
    k = accountant.check_count("compositions", value)
    if k > MAX_COMPOSITIONS:
        raise ValueError(
            f"compositions must be at most 2**53 = {MAX_COMPOSITIONS:,} (the counts a double holds exactly), "
            f"got {f'{k:,}' if k < 10**40 else shown_int(k)}"
        )
    return k


def method_options(f: Any) -> Any:
    """Add the accounting commands' shared options to a command (a decorator).

    Args:
        f: The command's callback.

    Returns:
        ``f`` with ``--sensitivity``, ``--compositions``, ``--method``, ``--conversion`` and ``--json``.
    """
    f = click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")(f)
    f = click.option(
        "--conversion",
        type=click.Choice(ALL_CONVERSIONS),
        default=None,
        help="rdp: improved (default) | mironov;  zcdp: bun-steinke (default) | rdp-optimal | gaussian-exact.",
    )(f)
    f = click.option(
        "--method",
        type=click.Choice(enum_values(AccountingMethod)),
        default=None,
        help="Accounting method [default: exact for Gaussian releases, pld for --sampling-rate and --event].",
    )(f)
    f = click.option(
        "--compositions",
        "-k",
        type=COUNT,
        default=1,
        show_default=True,
        help="Number of releases K (adaptive composition).",
    )(f)
    f = click.option("--sensitivity", type=NUMBER, default=1.0, show_default=True, help="ℓ2 sensitivity Δ.")(f)
    return f


def guarantee_label(g: accountant.Guarantee) -> str:
    """The method of a guarantee as the tables name it.

    Args:
        g: The guarantee.

    Returns:
        Its method, with its conversion where it has one (``rdp, improved``).
    """
    return g.method if g.conversion is None else f"{g.method}, {g.conversion}"


REFUSAL_NOTES = {"classic": "refused: ε ≥ 1 per release", "pld": "refused: δ below PLD's resolution"}


def _short_reason(reason: str, width: int = 48) -> str:
    """A refusal's reason cut to its first clause (the --json output holds it whole)."""
    import re

    text = re.sub(r"^[a-z]+(?: \([a-z-]+\))?: ", "", reason)  # the method's label, as the row names it
    text = re.split(r": use |; ", text.removeprefix("pld: "), maxsplit=1)[0]
    return "refused: " + (text if len(text) <= width else text[: width - 1] + "…")


def refusal_note(key: str, refusals: dict[str, str], *, reasons: bool) -> str:
    """The note of a refused variant: its fixed note (Gaussian releases) or its reason cut short.

    Args:
        key: The variant (``classic``, ``rdp-mironov``, …).
        refusals: The reasons of the refused variants, by key.
        reasons: Whether to show the reason (else the variant's fixed note for Gaussian releases).

    Returns:
        The note, or "" when the variant was not refused.
    """
    if key not in refusals:
        return ""
    return _short_reason(refusals[key]) if reasons else REFUSAL_NOTES.get(key, "refused")


def comparison_rows(cmp: accountant.MethodComparison, *, reasons: bool = False) -> list[list[str]]:
    """The rows of the ``methods`` table: one per variant, its ε, its ratio to the exact ε and a note.

    Args:
        cmp: The comparison of every method.
        reasons: Whether a refusal is shown by its reason (else by its fixed note, for Gaussian releases).

    Returns:
        The rows, as text.
    """
    exact = cmp.epsilons["exact"]
    rows = []
    for key, method, conv in VARIANTS:
        eps = cmp.epsilons[key]
        # no ratio to a zero or infinite exact ε (every method is 0 at δ = 1, +inf at δ = 0)
        ratio = "—" if eps is None or not exact or exact == math.inf else f"{eps / exact:.4f}"
        note = cmp.refusals.get(key, "")
        if key in cmp.orders and not math.isnan(cmp.orders[key]):  # no order where ε is +inf at every one
            note = f"α = {format_number(cmp.orders[key], 6)}"
        rows.append(
            [
                key if conv is None else f"{method} ({conv})",
                format_number(eps, 10),
                ratio,
                refusal_note(key, cmp.refusals, reasons=reasons) or note,
            ]
        )
    return rows


def read_ledger(path: Path) -> Ledger:
    """A ledger file (JSON or TOML), validated by :class:`dpkit.reports.files.LedgerFile`.

    Args:
        path: The file.

    Returns:
        The ledger (a ValueError naming the file when it cannot be read or is invalid).
    """
    from dpkit.reports.files import read_ledger_file

    return read_ledger_file(path)


def dp_event_dict(event: Any) -> Any:
    """A dp-accounting ``DpEvent`` as JSON data in its ``to_named_tuple()`` form.

    Module and class names are kept, so ``dp_accounting``'s ``DpEvent.from_named_tuple`` and
    ``dpkit epsilon --event`` read it back.

    Args:
        event: The event (dpkit's or dp-accounting's, as :func:`dpkit.accountant.interop.dp_event_to_json` takes).

    Returns:
        The JSON data (nested dicts).
    """
    import json

    from dpkit.accountant.interop import dp_event_to_json

    return json.loads(dp_event_to_json(event))


def bounded(name: str, value: float, *, declaration: bool = False) -> int:
    """``value`` as a count >= 1 that is at most its stated limit.

    Args:
        name: The option's parameter name (``episodes``).
        value: The number given.
        declaration: Whether the limit is a privacy declaration's (``DECLARATION_LIMITS``), else a run's
            (:data:`dpkit.algorithms.limits.LIMITS`).

    Returns:
        The count.

    Raises:
        ValueError: Not an integer >= 1, or above the limit (the option and the value named).
    """
    from dpkit.algorithms.limits import DECLARATION_LIMITS, LIMITS, above_limit

    limit = (DECLARATION_LIMITS if declaration else LIMITS)[name]
    k = check_count(name, value)
    if k > limit:
        raise ValueError(above_limit(f"--{name.replace('_', '-')}", k, limit))
    return k


def check_out_dir(out: Path) -> None:
    """Refuse (ValueError) an ``--out`` that is not a directory or cannot be created/written, before any work.

    Args:
        out: The output directory (it need not exist yet).
    """
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


def sigma_choice(value: str) -> str | float:
    """``--sigma`` of an RL audit: ``paper``, ``tight``, ``optimal`` or a number >= 0 (the API checks the range).

    Args:
        value: The text given (anything else: click.BadParameter).

    Returns:
        The name, or the number as a float.
    """
    if value in (Allocation.PAPER, Allocation.TIGHT, Allocation.OPTIMAL):
        return value
    try:
        return float(value)
    except ValueError:
        raise click.BadParameter(f"must be 'paper', 'tight', 'optimal' or a number, got {value!r}") from None


def rl_executor(executor: str, algorithm: str) -> str:
    """The executor an RL audit of ``algorithm`` runs on, from ``--executor``.

    ``auto`` stays in-process for an algorithm registered in this process whose spec does not pickle (no pool
    could know it).

    Args:
        executor: ``--executor``: ``auto``, ``local`` (in-process), ``processes`` or ``dask``.
        algorithm: The registered algorithm audited.

    Returns:
        The executor's name as :func:`dpkit.algorithms.executors.make_executor` takes it.
    """
    from dpkit.algorithms import registry

    name = {"local": "in-process"}.get(executor, executor)
    return "in-process" if name == "auto" and not registry.travels(algorithm) else name
