"""The headline every audit result shares, and the few lines that show it as text.

Every result :func:`dpkit.audit` returns — a release function's fixed, sequential or one-run audit
(:class:`~dpkit.audits.selection.AuditResult`, :class:`~dpkit.audits.sequential_result.SequentialResult`,
:class:`~dpkit.audits.engine.PairsResult`, :class:`~dpkit.audits.one_run.OneRunResult`) or an RL algorithm's
(:class:`~dpkit.audits.rl.RlPositionsResult`, :class:`~dpkit.audits.rl.sequential.RlSequentialResult`,
:class:`~dpkit.audits.rl.one_run.RlOneRunResult`) — is an :class:`AuditSummary`: the same headline fields
(:data:`HEADLINE`) under the same names, :meth:`~AuditSummary.to_dict`, a ``repr`` (:func:`summary_lines`) and
``_repr_html_``: the report's verdict row for it, drawn by the reports (:mod:`dpkit.reports.notebook_view`, reached
through :mod:`dpkit.notebook_views`: the reports sit above the audits).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from dpkit import notebook_views

__all__ = [
    "HEADLINE",
    "POWER_RATIO_NEEDED",
    "AuditSummary",
    "Headline",
    "HeldAudit",
    "SingleRun",
    "claim_text",
    "estimate_number",
    "estimate_text",
    "headline",
    "position_name",
    "readable_number",
    "summary_lines",
    "target_name",
]

#: Below this share of the claim, an audit's power is too small to call an implementation consistent (the verdicts'
#: rule, :mod:`dpkit.audits.verdicts`; here so that every result's verdict table can say it).
POWER_RATIO_NEEDED = 0.5

#: The fields every audit result has, under these names (``None`` where one does not apply).
HEADLINE = ("verdict", "claim", "epsilon_lower", "epsilon_estimate", "power", "runs", "runs_used", "positions")


@runtime_checkable
class AuditSummary(Protocol):
    """What every audit result offers (a protocol: the result types have their own fields besides).

    Attributes:
        verdict: ``violation``, ``consistent`` or ``inconclusive``.
        claim: What was judged (a :class:`~dpkit.audits.claims.Claim`; for an RL audit the allowance of its
            declaration).
        epsilon_lower: The certified ε lower bound (confidence 1 − α; 0 when none was certified).
        epsilon_estimate: A point estimate of ε beside the bound: the ε, at the claim's δ, of the trade-off shape
            fitted to the attack's ROC (:mod:`dpkit.audits.shape_estimate`; ``inf`` for a Gaussian shape at
            δ = 0), ``None`` where no shape fits or the audit makes none.
        power: What an ideal attack certifies against a mechanism exactly at the claim, ``None`` where the audit
            stopped before its final test.
        runs: Runs per dataset of the audit (the budget a sequential audit stands in for; 1 for a one-run audit).
        runs_used: Runs per dataset it used (all positions together for an RL audit).
        positions: One result per position of the changed user (RL audits), ``None`` where there are none.
    """

    @property
    def verdict(self) -> str: ...

    @property
    def claim(self) -> Any: ...

    @property
    def epsilon_lower(self) -> float: ...

    @property
    def epsilon_estimate(self) -> float | None: ...

    @property
    def power(self) -> float | None: ...

    @property
    def runs(self) -> int: ...

    @property
    def runs_used(self) -> int: ...

    @property
    def positions(self) -> Sequence[Any] | None: ...

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data (JSON-ready).

        Returns:
            The result's fields, the headline ones among them.
        """
        ...

    def _repr_html_(self) -> str: ...


class Headline:
    """The shared methods of the audit results: :meth:`headline` and ``_repr_html_`` (a mixin: every result type
    defines the :data:`HEADLINE` fields itself, as fields or properties)."""

    def headline(self) -> dict[str, Any]:
        """The :data:`HEADLINE` fields, JSON-ready (see :func:`headline`).

        Returns:
            Each headline field's name and value.
        """
        return headline(self)

    def _repr_html_(self) -> str:
        """The report's verdict row for the result: how a notebook shows it (drawn by the reports,
        :func:`dpkit.reports.notebook_view.verdict_table_html`, through :func:`dpkit.notebook_views.html`)."""
        return notebook_views.html(self)

    def __repr__(self) -> str:
        """A few lines (:func:`summary_lines`): what was audited, the verdict, the claim, the bound, the estimate,
        the power and the runs (every field: :meth:`to_dict`)."""
        return "\n".join(summary_lines(self))

    def __str__(self) -> str:
        return self.__repr__()


class HeldAudit(Headline):
    """The headline of an RL audit of one position, read from the fixed audit it holds (``self.audit``)."""

    audit: Any

    @property
    def claim(self) -> Any:
        """The claim the position was judged against: the μ its declaration allows the pair."""
        return self.audit.claim

    @property
    def power(self) -> float:
        return float(self.audit.power)

    @property
    def epsilon_estimate(self) -> float | None:
        return self.audit.epsilon_estimate

    @property
    def shape_estimate(self) -> Any:
        """The estimate of ε from the fitted shape, with its interval (the fixed audit's)."""
        return self.audit.shape_estimate

    @property
    def runs(self) -> int:
        return int(self.audit.runs)

    @property
    def runs_used(self) -> int:
        return int(self.audit.runs)

    @property
    def positions(self) -> None:
        """``None``: one position's audit (its name: ``position_name``)."""
        return None


class SingleRun(Headline):
    """The headline fields a one-run audit has no own value for: one run, no estimate, no positions."""

    @property
    def epsilon_estimate(self) -> None:
        """``None``: a one-run audit bounds ε, it makes no estimate."""
        return None

    @property
    def runs(self) -> int:
        """1: the audit's one run (its canaries: ``canaries``)."""
        return 1

    @property
    def runs_used(self) -> int:
        return 1

    @property
    def positions(self) -> None:
        return None


def readable_number(value: Any, digits: int = 4) -> str:
    """A number for people (a result's text, a report's): ``digits`` significant digits; '—' for a missing value.

    Args:
        value: A number, ``None`` or anything else (shown as its text).
        digits: Significant digits of a float.

    Returns:
        The text: ``1,000`` for an int, ``0.1235`` for 0.123456, ``true`` for True, ``—`` for None.

    Examples:
        >>> readable_number(0.123456), readable_number(4000), readable_number(None)
        ('0.1235', '4,000', '—')
    """
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def estimate_number(value: Any) -> str:
    """An ε estimate as a verdict row and a result's text show it.

    Args:
        value: The estimate: a float, ``inf`` (a Gaussian shape at δ = 0) or ``None``.

    Returns:
        ``∞``, its three significant digits, or ``—`` for none.
    """
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    return readable_number(value, 3)


def claim_text(claim: Any) -> str:
    """What an audit judged, in words: a claim's description, or an RL position's declared μ.

    Args:
        claim: A :class:`~dpkit.audits.claims.Claim`, an RL position's claim, or anything else (shown as its text).

    Returns:
        The text.
    """
    if hasattr(claim, "describe"):
        return str(claim.describe())
    if hasattr(claim, "claim_mu"):  # an RL position's claim (audits.rl.PositionClaim)
        return f"its declaration: μ = {readable_number(claim.claim_mu)} at the worst-placed user"
    return str(claim)


def position_name(position: Any) -> str:
    """The name of a position of the changed user in an RL audit's result.

    Args:
        position: One position's result (its ``position_name`` or ``position``), or a name.

    Returns:
        The name.
    """
    for attr in ("position_name", "position"):
        if hasattr(position, attr):
            return str(getattr(position, attr))
    return str(position)


def headline(result: Any) -> dict[str, Any]:
    """The :data:`HEADLINE` fields of an audit result, JSON-ready: the claim as its description, the positions as
    ``{"position", "verdict"}`` rows.

    Args:
        result: An audit result (:class:`AuditSummary`).

    Returns:
        The fields by name.

    Examples:
        >>> from dpkit.audits.summary import HEADLINE
        >>> HEADLINE[:3]
        ('verdict', 'claim', 'epsilon_lower')
    """
    out = {name: getattr(result, name) for name in HEADLINE}
    out["claim"] = claim_text(out["claim"])
    if out["positions"] is not None:
        out["positions"] = [{"position": position_name(p), "verdict": p.verdict} for p in out["positions"]]
    return out


def target_name(result: Any) -> str | None:
    """What an audit result audited, as a name: the release's (``target``) or the algorithm's, if it has one.

    Args:
        result: An audit result.

    Returns:
        The name, or None.
    """
    name = getattr(result, "target", None)
    if name is None and hasattr(result, "results"):  # several pairs: the first's
        name = getattr(result.results[0], "target", None)
    if name is None:
        setting = getattr(result, "setting", None)
        name = getattr(setting, "algorithm", None)
    return None if name is None else str(name)


def estimate_text(result: Any) -> str:
    """An audit result's ε estimate in words: the fitted shape's with its interval, else its number.

    Args:
        result: An audit result (:class:`AuditSummary`); of several positions, the headline (worst) one's estimate.

    Returns:
        The text.
    """
    estimate = getattr(result, "shape_estimate", None)
    if estimate is None:  # several positions: the headline (worst) position's
        estimate = getattr(getattr(result, "worst", None), "shape_estimate", None)
    if estimate is not None:
        return str(estimate.describe(3))
    return estimate_number(result.epsilon_estimate)


def summary_lines(result: Any) -> list[str]:
    """The few lines ``repr`` and ``str`` show of an audit result (its every number: ``to_dict()``).

    Args:
        result: An audit result (:class:`AuditSummary`).

    Returns:
        What was audited and the verdict, then the claim, the certified bound, the estimate, the power and the runs.
    """
    name = target_name(result)
    alpha = getattr(result, "alpha", None)
    delta = getattr(result, "delta", None)
    confidence = "" if alpha is None else f" ({1.0 - alpha:.0%})"
    where = "" if delta is None else f" at δ = {delta:g}"
    ratio = getattr(result, "power_ratio", None)
    if ratio is not None:
        power = f"{readable_number(ratio, 3)} of the claim (ideal attack; below {POWER_RATIO_NEEDED}: inconclusive)"
    else:
        power = readable_number(result.power, 3) if result.power is not None else "— (stopped before its final test)"
    runs = f"{readable_number(result.runs)} per dataset"
    if result.runs_used != result.runs:
        runs += f", {readable_number(result.runs_used)} used"
    lines = [
        f"{type(result).__name__}: {result.verdict}" + ("" if name is None else f" — {name}"),
        f"  claim     {claim_text(result.claim)}",
        f"  bound     ε ≥ {readable_number(result.epsilon_lower, 4)} certified{confidence}{where}",
        f"  estimate  ε ≈ {estimate_text(result)}",
        f"  power     {power}",
        f"  runs      {runs}",
    ]
    if result.positions:
        lines.append(f"  positions {', '.join(f'{position_name(p)}: {p.verdict}' for p in result.positions)}")
    return lines
