"""The headline every audit result shares, and the verdict table that shows it in a notebook.

Every result :func:`dpkit.audit` returns — a release function's fixed, sequential or one-run audit
(:class:`~dpkit.audits.selection.AuditResult`, :class:`~dpkit.audits.sequential_result.SequentialResult`,
:class:`~dpkit.audits.engine.PairsResult`, :class:`~dpkit.audits.one_run.OneRunResult`) or an RL algorithm's
(:class:`~dpkit.audits.rl.RlPositionsResult`, :class:`~dpkit.audits.rl.sequential.RlSequentialResult`,
:class:`~dpkit.audits.rl.one_run.RlOneRunResult`) — is an :class:`AuditSummary`: the same headline fields
(:data:`HEADLINE`) under the same names, :meth:`~AuditSummary.to_dict` and ``_repr_html_``: the report's verdict
row for it (the badge, the evidence lines and what the verdict says), built by the functions ``dpkit report`` builds
its own rows with (:func:`audit_columns`, :func:`evidence_lines`, :func:`implementation_text`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "AUDIT_COLUMNS",
    "HEADLINE",
    "POWER_RATIO_NEEDED",
    "IMPLEMENTATION_TEXT",
    "AuditSummary",
    "Headline",
    "HeldAudit",
    "SingleRun",
    "audit_columns",
    "evidence_lines",
    "headline",
    "implementation_text",
    "readable_number",
    "summary_lines",
    "target_name",
    "verdict_table_html",
]

#: Below this share of the claim, an audit's power is too small to call an implementation consistent (the verdicts'
#: rule, :mod:`dpkit.audits.verdicts`; here so that every result's verdict table can say it).
POWER_RATIO_NEEDED = 0.5

#: The fields every audit result has, under these names (``None`` where one does not apply).
HEADLINE = ("verdict", "claim", "epsilon_lower", "epsilon_estimate", "power", "runs", "runs_used", "positions")

#: The audit's columns of a report's verdict row, in order (:func:`audit_columns`).
AUDIT_COLUMNS = (
    "audit_sigma", "audited_epsilon_lower", "audited_mu_lower", "audit_position", "audited_mu_estimate",
    "audited_epsilon_estimate", "audit_power_ratio", "audit_mode", "audit_runs", "audit_runs_used",
    "audit_confidence", "audit_power_needed", "audit_reason", "verdict",
)  # fmt: skip

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

#: The report's badge colours (reports/templates/report.html.j2: the verdict table's badges).
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
        """The verdict table (:func:`verdict_table_html`): how a notebook shows the result."""
        return verdict_table_html(self)

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
    """A number for people (the report's): ``digits`` significant digits; '—' for a missing value.

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


def audit_columns(result: Mapping[str, Any], sigma: Any, power_needed: float) -> dict[str, Any]:
    """The audit's columns of a report's verdict row (``report.json``'s ``summary``), from an audit result's
    ``to_dict()``: its bounds, estimates, power, mode, runs and verdict (``None`` where the result has none: a
    sequential audit has no power nor estimates).

    Args:
        result: A result's ``to_dict()``.
        sigma: The σ the audit ran at (``paper``, ``tight``, ``optimal``, a number; ``None`` for a release).
        power_needed: The power ratio below which a fixed audit is inconclusive.

    Returns:
        The row's ``audit_*``, ``audited_*`` and ``verdict`` keys, in the report's order.
    """
    sequential = result.get("sequential") is True
    one_run = result.get("mode") == "one-run"
    used = result.get("runs_used") if sequential else None
    if not sequential and not one_run:  # the fixed audit's runs at each position it probed
        used = result["runs"] * len(result.get("positions") or [result.get("position")])
    return {
        "audit_sigma": sigma,
        "audited_epsilon_lower": result.get("epsilon_lower"),
        "audited_mu_lower": result.get("mu_lower"),
        "audit_position": result.get("worst_position"),
        "audited_mu_estimate": result.get("mu_estimate"),
        "audited_epsilon_estimate": result.get("epsilon_estimate"),
        "audit_power_ratio": result.get("power_ratio"),
        "audit_mode": "sequential" if sequential else "one-run" if one_run else "fixed",
        "audit_runs": result.get("runs"),
        "audit_runs_used": used,
        "audit_confidence": result.get("confidence"),
        "audit_power_needed": None if sequential else power_needed,
        "audit_reason": result.get("reason"),
        "verdict": result.get("verdict"),
    }


def _sigma_text(row: Mapping[str, Any]) -> str:
    sigma = row["audit_sigma"]
    return sigma if isinstance(sigma, str) else readable_number(sigma)


def implementation_text(row: Mapping[str, Any]) -> str:
    """One sentence of a report's verdict row: what the audit judged — the implementation against its own
    declaration, not the paper.

    Args:
        row: A verdict row (its :func:`audit_columns`).

    Returns:
        The sentence.
    """
    verdict = row["verdict"]
    if verdict is None:
        return "The implementation: not audited."
    return f"The implementation (audited at σ {_sigma_text(row)}): {IMPLEMENTATION_TEXT[verdict]}."


def evidence_lines(row: Mapping[str, Any]) -> list[str]:
    """The lines under a verdict row's audit badge: its power (a fixed audit), certified bounds, σ and runs.

    Args:
        row: A verdict row (its :func:`audit_columns`).

    Returns:
        The lines, as the report's verdict table shows them.
    """
    num = readable_number
    confidence = row["audit_confidence"]
    sigma = "" if row["audit_sigma"] is None else f"σ {_sigma_text(row)}, "
    where = [] if row["audit_position"] is None else [f"both at position {row['audit_position']} (the headline)"]
    if row["audit_mode"] == "sequential":  # no power ratio and no estimates: it reports none
        return [
            "sequential, anytime-valid",
            f"ε ≥ {num(row['audited_epsilon_lower'], 3)} certified ({confidence:.0%})",
            f"μ ≥ {num(row['audited_mu_lower'], 3)} certified",
            *where,
            f"{sigma}{num(row['audit_runs_used'])} runs per dataset used "
            f"(the fixed audit's: {num(row['audit_runs'])} per position)",
        ]
    ratio, needed = row["audit_power_ratio"], row["audit_power_needed"]
    power = f"an ideal attack certifies {num(ratio, 2)}× the μ allowed"  # a share, not a probability
    if row["verdict"] == "inconclusive":  # why: too little power, or runs pointing past the claim they cannot certify
        power = (
            f"inconclusive: {row['audit_reason']}" if row.get("audit_reason") else f"{power} (needs {num(needed, 2)})"
        )
    if row["audit_mode"] == "one-run":  # bounds, no estimates; one run
        return [
            power,
            f"ε ≥ {num(row['audited_epsilon_lower'], 3)} certified ({confidence:.0%})",
            f"μ ≥ {num(row['audited_mu_lower'], 3)} certified",
            f"{sigma}one run, every user a canary",
        ]
    return [
        power,
        f"ε ≥ {num(row['audited_epsilon_lower'], 3)} certified ({confidence:.0%}), "
        f"estimate {row.get('audited_epsilon_estimate_text') or _estimate_number(row['audited_epsilon_estimate'])}",
        f"μ ≥ {num(row['audited_mu_lower'], 3)} certified, estimate {num(row['audited_mu_estimate'], 3)}",
        *where,
        f"{sigma}{num(row['audit_runs'])} runs per dataset",
    ]


def _estimate_number(value: Any) -> str:
    """An ε estimate in a verdict row: ∞ (a Gaussian shape at δ = 0) or its number (— for none)."""
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    return readable_number(value, 3)


def _claim_text(claim: Any) -> str:
    if hasattr(claim, "describe"):
        return str(claim.describe())
    if hasattr(claim, "claim_mu"):  # an RL position's claim (audits.rl.PositionClaim)
        return f"its declaration: μ = {readable_number(claim.claim_mu)} at the worst-placed user"
    return str(claim)


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


def _estimate_text(result: Any) -> str:
    estimate = getattr(result, "shape_estimate", None)
    if estimate is None:  # several positions: the headline (worst) position's
        estimate = getattr(getattr(result, "worst", None), "shape_estimate", None)
    if estimate is not None:
        return str(estimate.describe(3))
    return _estimate_number(result.epsilon_estimate)


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
        f"  claim     {_claim_text(result.claim)}",
        f"  bound     ε ≥ {readable_number(result.epsilon_lower, 4)} certified{confidence}{where}",
        f"  estimate  ε ≈ {_estimate_text(result)}",
        f"  power     {power}",
        f"  runs      {runs}",
    ]
    if result.positions:
        lines.append(f"  positions {', '.join(f'{_position_name(p)}: {p.verdict}' for p in result.positions)}")
    return lines


#: The inline styles of the notebook view (no stylesheet: a notebook may drop <style>, never inline styles).
_CSS = {
    "box": "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:13px;line-height:1.45;"
    "color:#1f2328;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:10px 14px;margin:4px 0;"
    "max-width:60em;box-sizing:border-box",
    "head": "font-size:15px;margin:0 0 8px 0",
    "table": "border-collapse:collapse;width:100%;margin:0",
    "th": "text-align:left;vertical-align:bottom;padding:4px 8px;color:#57606a;font-weight:600;white-space:nowrap;"
    "border-bottom:1px solid #d0d7de;background:#f6f8fa",
    "td": "text-align:left;vertical-align:top;padding:6px 8px;border-bottom:1px solid #eaeef2",
    "badge": "display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;white-space:nowrap",
}


def _badge(verdict: str) -> str:
    style = f"{_CSS['badge']};{_BADGE.get(verdict, _BADGE['stopped'])}"
    return f'<span class="badge {html.escape(verdict)}" style="{style}">{html.escape(verdict)}</span>'


def _row(name: str | None, verdict: str | None, lines: Sequence[str], says: str) -> str:
    """A table row: the name and the verdict's badge (left out when None: the heading says them), the evidence lines
    and what the verdict says."""
    td = f'<td style="{_CSS["td"]}">'
    cells = [] if name is None else [f"{td}<b>{html.escape(name)}</b></td>"]
    cells += [] if verdict is None else [f"{td}{_badge(verdict)}</td>"]
    cells += [f"{td}{'<br>'.join(html.escape(line) for line in lines)}</td>", f"{td}{html.escape(says)}</td>"]
    return "<tr>" + "".join(cells) + "</tr>"


def verdict_table_html(result: Any) -> str:
    """An audit result in HTML, as a notebook shows it: a heading that names what was audited (the release's or
    the algorithm's name) with the verdict's badge, then the report's row for it (the verdict badge, the evidence
    lines and what the verdict says, from :func:`audit_columns`, :func:`evidence_lines` and
    :func:`implementation_text`, as ``dpkit report`` writes them), then one row per position of the changed user.

    Args:
        result: An audit result (:class:`AuditSummary`).

    Returns:
        A ``<div>`` holding the heading and a ``<table>``, self-contained (inline styles only), every text escaped.

    Examples:
        >>> import dpkit
        >>> r = dpkit.audit("ldp-ucrl-vtr", runs=200, position="first")  # doctest: +SKIP
        >>> "verdict" in r._repr_html_()  # doctest: +SKIP
        True
    """
    out = result.verdict_source() if hasattr(result, "verdict_source") else result.to_dict()
    declared = "algorithm" in out
    sigma = out.get("sigma") if declared else None
    row = audit_columns(out, sigma if isinstance(sigma, (str, int, float)) else "per release", POWER_RATIO_NEEDED)
    if not declared:
        row["audit_sigma"] = None
    verdict = str(result.verdict)
    row["verdict"] = verdict
    row["audited_epsilon_estimate_text"] = _estimate_text(result)
    name = target_name(result) or ("an algorithm" if declared else "a release")
    claim = _claim_text(result.claim)
    if declared:  # the report's verdict row: the algorithm, its badge, the evidence, what it says
        rows = [_row(str(out["algorithm"]), verdict, evidence_lines(row), implementation_text(row))]
    else:  # the heading names the release, the claim and the verdict: the evidence and what it says
        rows = [_row(None, None, evidence_lines(row), f"The release: {CLAIM_TEXT[verdict]}.")]
    for p in result.positions or ():
        res = getattr(p, "result", p)
        lines = [] if res is None else [f"ε ≥ {readable_number(res.epsilon_lower, 3)}"]
        lines += [] if res is None else [f"μ ≥ {readable_number(res.mu_lower, 3)}"]
        rows.append(_row(f"position {_position_name(p)}", str(p.verdict), lines, ""))
    th = f'<th style="{_CSS["th"]}">'
    columns = ("audited", "audit verdict", "evidence", "what it says") if declared else ("evidence", "what it says")
    head = (
        f'<div class="dpkit-audit-head" style="{_CSS["head"]}">{_badge(verdict)} '
        f"<b>{html.escape(type(result).__name__)}</b> of <code>{html.escape(name)}</code> "
        f"against {html.escape(claim)}</div>"
    )
    table = (
        f'<table class="verdicts dpkit-audit" style="{_CSS["table"]}"><tr>'
        + "".join(f"{th}{c}</th>" for c in columns)
        + "</tr>"
        + "".join(rows)
        + "</table>"
    )
    return f'<div class="dpkit-audit-result" style="{_CSS["box"]}">{head}{table}</div>'
