"""What the commands share: number types, option groups, checks of sizes and paths, ledger files."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from dpkit import accountant
from dpkit.accountant import RDP_CONVERSIONS, VARIANTS, ZCDP_CONVERSIONS, AccountingMethod, Ledger
from dpkit.accountant.validation import check_count, enum_values
from dpkit.render import format_number

ALL_CONVERSIONS = tuple(dict.fromkeys(RDP_CONVERSIONS + ZCDP_CONVERSIONS))


class Number(click.ParamType):
    """A float as typed; range checks are the API's (so its messages name the value)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float):
            return value
        try:
            return float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)


class NumberList(click.ParamType):
    """A comma-separated list of floats (``inf`` allowed; the API checks ranges).

    A list printed by Python or numpy pastes in as is: one pair of enclosing brackets is dropped, and
    without commas the items may be separated by white space (``[1.25 1.5 inf]``, numpy's print of an
    array, such as dp-accounting's RDP curve).
    """

    name = "list"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> list[float]:
        if isinstance(value, list):
            return value
        text = str(value).strip()
        if len(text) >= 2 and (text[0], text[-1]) in (("[", "]"), ("(", ")")):
            text = text[1:-1].strip()
        items = [s.strip() for s in text.split(",")] if "," in text or not text else text.split()
        if any(not s for s in items):
            self.fail(f"{value!r} has an empty item", param, ctx)
        try:
            return [float(s) for s in items]
        except ValueError:
            self.fail(f"{value!r} is not a comma-separated list of numbers", param, ctx)


class Rate(click.ParamType):
    """A sampling rate as typed: a decimal, or an exact fraction ``256/60000`` (read by
    :func:`dpkit.accountant.dp_sgd.parse_rate`; the text is kept, so the fraction is printed back)."""

    name = "rate"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from dpkit.accountant.dp_sgd import parse_rate

        try:
            parse_rate(value if isinstance(value, float) else str(value))
        except ValueError as err:
            self.fail(str(err).replace("sampling_rate ", "", 1), param, ctx)
        return str(value)


NUMBER = Number()
NUMBER_LIST = NumberList()
RATE = Rate()


def compositions_count(value: float) -> int:
    """``--compositions`` as a count (a ValueError unless an integer >= 1).

    Args:
        value: The number given.

    Returns:
        The count.
    """
    return accountant.check_count("compositions", value)


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
        type=NUMBER,
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
    """The note of a refused variant: its fixed note (Gaussian releases) or its reason cut short; "" if not refused."""
    if key not in refusals:
        return ""
    return _short_reason(refusals[key]) if reasons else REFUSAL_NOTES.get(key, "refused")


def comparison_rows(cmp: accountant.MethodComparison, *, reasons: bool = False) -> list[list[str]]:
    """One row per variant; a refusal shown by its fixed note (Gaussian releases) or its reason (``reasons``)."""
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
    """A dp-accounting ``DpEvent`` as JSON data in its ``to_named_tuple()`` form: module and class names kept, so
    ``dp_accounting``'s ``DpEvent.from_named_tuple`` and ``dpkit epsilon --event`` read it back."""
    import json

    from dpkit.accountant.interop import dp_event_to_json

    return json.loads(dp_event_to_json(event))


def given(ctx: click.Context, name: str) -> bool:
    """Whether the user gave option ``name`` (on the command line or through its environment variable).

    An option left at its default is not given, even when the default is a value (``--method exact``);
    typing the default value is giving it. click tells the two apart by the parameter's source.
    """
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None)


def flag_of(ctx: click.Context, name: str) -> str:
    """The long flag of the parameter called ``name`` (``claim_file`` → ``--claim``; an argument by its metavar)."""
    for param in ctx.command.params:
        if param.name == name:
            if isinstance(param, click.Argument):
                return param.make_metavar(ctx)
            longs = [opt for opt in param.opts if opt.startswith("--")]
            return max(longs, key=len) if longs else param.opts[0]
    return "--" + name.replace("_", "-")


def refuse_options(ctx: click.Context, names: Sequence[str], form: str) -> None:
    """One error line naming every option of ``names`` the user gave, which do not apply to ``form``.

    Options left at their defaults pass (see :func:`given`); the flags are named in the order the
    command declares them: ``--trials and --mu do not apply to an ALGORITHM audit``.
    """
    order = {param.name: i for i, param in enumerate(ctx.command.params)}
    typed = sorted((name for name in names if given(ctx, name)), key=lambda n: order.get(n, len(order)))
    if not typed:
        return
    flags = [flag_of(ctx, name) for name in typed]
    listed = flags[0] if len(flags) == 1 else f"{', '.join(flags[:-1])} and {flags[-1]}"
    raise click.UsageError(f"{listed} {'does' if len(flags) == 1 else 'do'} not apply to {form}")


def bounded(name: str, value: float, *, declaration: bool = False) -> int:
    """``value`` as a count >= 1 that is at most its stated limit — a run's (:data:`dpkit.algorithms.limits.LIMITS`)
    or, with ``declaration``, a privacy declaration's (``DECLARATION_LIMITS``) — or a ValueError naming the option
    and the value."""
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
    if value in ("paper", "tight", "optimal"):
        return value
    try:
        return float(value)
    except ValueError:
        raise click.BadParameter(f"must be 'paper', 'tight', 'optimal' or a number, got {value!r}") from None


def rl_executor(executor: str, algorithm: str) -> str:
    """The executor an RL audit of ``algorithm`` runs on, from ``--executor`` (``local``: in-process): ``auto`` stays
    in-process for an algorithm registered in this process whose spec does not pickle (no pool could know it)."""
    from dpkit.algorithms import registry

    name = {"local": "in-process"}.get(executor, executor)
    return "in-process" if name == "auto" and not registry.travels(algorithm) else name
