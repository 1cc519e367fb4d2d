"""The headline every audit result shares, and the verdict table that shows it in a notebook.

Every result :func:`dpkit.audit` returns — a release function's fixed, sequential or one-run audit
(:class:`~dpkit.audits.selection.AuditResult`, :class:`~dpkit.audits.sequential_result.SequentialResult`,
:class:`~dpkit.audits.engine.PairsResult`, :class:`~dpkit.audits.one_run.OneRunResult`) or an RL algorithm's
(:class:`~dpkit.audits.rl.RlPositionsAudit`, :class:`~dpkit.audits.rl_sequential.RlSequentialAudit`,
:class:`~dpkit.audits.rl_one_run.RlOneRunResult`) — is an :class:`AuditSummary`: the same headline fields
(:data:`HEADLINE`) under the same names, :meth:`~AuditSummary.to_dict` and ``_repr_html_``, the verdict table of
the report (the badge, the evidence lines and what the verdict says; ``dpkit report``'s shares its sentences,
:data:`IMPLEMENTATION_TEXT`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "HEADLINE",
    "IMPLEMENTATION_TEXT",
    "AuditSummary",
    "Headline",
    "HeldAudit",
    "SingleRun",
    "headline",
    "verdict_table_html",
]

#: The fields every audit result has, under these names (``None`` where one does not apply).
HEADLINE = ("verdict", "claim", "epsilon_lower", "epsilon_estimate", "power", "runs", "runs_used", "positions")

#: What an audit verdict says about an implementation judged against its own declaration (the RL audits; the
#: report's verdict table says the same).
IMPLEMENTATION_TEXT = {
    "violation": "its runs show more privacy loss than its declaration allows at that σ: the code does not do what "
    "it declares",
    "consistent": "no more privacy loss than its declaration allows at that σ, and the audit had the power to see it",
    "inconclusive": "no violation seen, but too few runs to have seen one",
}

#: What an audit verdict says about a release judged against a claim.
CLAIM_TEXT = {
    "violation": "its runs show more privacy loss than the claim allows: the release does not satisfy it",
    "consistent": "no more privacy loss than the claim allows, and the audit had the power to see it",
    "inconclusive": "no violation seen, but too few runs to have seen one",
}

#: The report's badge colours (reports/templates/report.html.j2).
_BADGE = {
    "violation": "background:#b00020;color:#fff",
    "consistent": "background:#1b6e20;color:#fff",
    "inconclusive": "background:#f2c94c;color:#3d2c00",
    "stopped": "background:#ddd;color:#333",
}


@runtime_checkable
class AuditSummary(Protocol):
    """What every audit result offers (a protocol: the result types have their own fields besides).

    Attributes:
        verdict: ``violation``, ``consistent`` or ``inconclusive``.
        claim: What was judged (a :class:`~dpkit.audits.claims.Claim`; for an RL audit the allowance of its
            declaration).
        epsilon_lower: The certified ε lower bound (confidence 1 − α; 0 when none was certified).
        epsilon_estimate: A point estimate of ε beside the bound, ``None`` where the audit makes none.
        power: What an ideal attack certifies against a mechanism exactly at the claim, ``None`` where the audit
            stopped before its final test.
        runs: Runs per dataset of the audit (the budget a sequential audit stands in for; 1 for a one-run audit).
        runs_used: Runs per dataset it used (all positions together for an RL audit).
        positions: One result per position of the changed user (RL audits), ``None`` where there are none.
    """

    @property
    def verdict(self) -> str: ...

    @property
    def epsilon_lower(self) -> float: ...

    def to_dict(self) -> dict[str, Any]: ...

    def _repr_html_(self) -> str: ...


class Headline:
    """The shared methods of the audit results: :meth:`headline` and ``_repr_html_`` (a mixin: every result type
    defines the :data:`HEADLINE` fields itself, as fields or properties)."""

    def headline(self) -> dict[str, Any]:
        """The :data:`HEADLINE` fields, JSON-ready (see :func:`headline`)."""
        return headline(self)

    def _repr_html_(self) -> str:
        """The verdict table (:func:`verdict_table_html`): how a notebook shows the result."""
        return verdict_table_html(self)


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


def _claim_text(claim: Any) -> str:
    if hasattr(claim, "describe"):
        return str(claim.describe())
    if hasattr(claim, "claim_mu"):  # an RL position's claim (audits.rl.PositionClaim)
        return f"its declaration: μ = {_num(claim.claim_mu)} at the worst-placed user"
    return str(claim)


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value) if not math.isfinite(value) else f"{value:.{digits}g}"


def _position_name(position: Any) -> str:
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
    out["claim"] = _claim_text(out["claim"])
    if out["positions"] is not None:
        out["positions"] = [{"position": _position_name(p), "verdict": p.verdict} for p in out["positions"]]
    return out


def _evidence(result: Any) -> list[str]:
    """The evidence lines under the verdict badge, as the report writes them."""
    confidence = 1.0 - float(getattr(result, "alpha", 0.05))
    estimate = result.epsilon_estimate
    lines = [] if result.power is None else [f"power {_num(result.power, 3)}"]
    lines.append(
        f"ε ≥ {_num(result.epsilon_lower, 3)} certified ({confidence:.0%})"
        + ("" if estimate is None else f", estimate {_num(estimate, 3)}")
    )
    if hasattr(result, "mu_lower"):
        lines.append(f"μ ≥ {_num(result.mu_lower, 3)} certified")
    if result.runs == 1:
        lines.append("one run, every canary a guess")
    else:
        lines.append(f"{_num(result.runs_used)} runs per dataset used of {_num(result.runs)}")
    return lines


def _row(name: str, verdict: str, lines: Sequence[str], says: str) -> str:
    badge = _BADGE.get(verdict, _BADGE["stopped"])
    style = f"display:inline-block;padding:0 0.45em;border-radius:0.6em;font-weight:bold;{badge}"
    return (
        f"<tr><td><b>{html.escape(name)}</b></td>"
        f'<td><span class="badge {html.escape(verdict)}" style="{style}">{html.escape(verdict)}</span></td>'
        f"<td>{'<br>'.join(html.escape(line) for line in lines)}</td><td>{html.escape(says)}</td></tr>"
    )


def verdict_table_html(result: Any) -> str:
    """The verdict table of an audit result in HTML: the report's columns (what was audited, the verdict badge,
    the evidence, what the verdict says), then one row per position of the changed user where there are several.

    Args:
        result: An audit result (:class:`AuditSummary`).

    Returns:
        An HTML ``<table>``, self-contained (inline styles), every text escaped.

    Examples:
        >>> import dpkit
        >>> r = dpkit.audit("dp-ucbvi", runs=30, position="first", seed=1)  # doctest: +SKIP
        >>> "verdict" in r._repr_html_()  # doctest: +SKIP
        True
    """
    verdict = str(result.verdict)
    declared = any(hasattr(result, a) for a in ("setting", "sigmas_claim")) or hasattr(
        getattr(result, "scores", None), "setting"
    )
    texts = IMPLEMENTATION_TEXT if declared else CLAIM_TEXT
    what = _claim_text(result.claim)
    rows = [_row(f"against {what}", verdict, _evidence(result), texts.get(verdict, ""))]
    for p in result.positions or ():
        res = getattr(p, "result", p)
        lines = [] if res is None else [f"ε ≥ {_num(res.epsilon_lower, 3)}", f"μ ≥ {_num(res.mu_lower, 3)}"]
        rows.append(_row(f"position {_position_name(p)}", str(p.verdict), lines, ""))
    return (
        '<table class="verdicts dpkit-audit"><tr><th>audited</th><th>audit verdict</th><th>evidence</th>'
        "<th>what it says</th></tr>" + "".join(rows) + "</table>"
    )
