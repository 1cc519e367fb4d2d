"""An audit result as a notebook shows it (its ``_repr_html_``): a heading naming what was audited with the verdict's
badge, then the report's verdict row for it — the badge, the evidence lines and what the verdict says
(:mod:`dpkit.reports.audit_row`, as ``dpkit report`` writes them) — then one row per position of the changed user.

The results live below the reports; ``import dpkit`` registers :func:`verdict_table_html` as their view
(:mod:`dpkit.notebook_views`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from dpkit.audits.summary import (
    POWER_RATIO_NEEDED,
    claim_text,
    estimate_text,
    position_name,
    readable_number,
    target_name,
)
from dpkit.audits.verdicts import Verdict

from .audit_row import CLAIM_TEXT, audit_columns, evidence_lines, implementation_text

__all__ = ["BADGE", "verdict_table_html"]

#: The report's badge colours (reports/templates/report.html.j2: the verdict table's badges); ``stopped`` for a
#: position stopped before its final test.
BADGE = {
    Verdict.VIOLATION: "background:#b00020;color:#fff",
    Verdict.CONSISTENT: "background:#1b6e20;color:#fff",
    Verdict.INCONCLUSIVE: "background:#f2c94c;color:#3d2c00",
    "stopped": "background:#ddd;color:#333",
}

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


def _badge(verdict: Verdict | None) -> str:
    """A verdict's badge; None: a position stopped before its final test (``stopped``)."""
    word = "stopped" if verdict is None else verdict.value
    style = f"{_CSS['badge']};{BADGE['stopped' if verdict is None else verdict]}"
    return f'<span class="badge {html.escape(word)}" style="{style}">{html.escape(word)}</span>'


def _row(name: str | None, badge: str | None, lines: Sequence[str], says: str) -> str:
    """A table row: the name and the verdict's badge (:func:`_badge`; left out when None: the heading says them),
    the evidence lines and what the verdict says."""
    td = f'<td style="{_CSS["td"]}">'
    cells = [] if name is None else [f"{td}<b>{html.escape(name)}</b></td>"]
    cells += [] if badge is None else [f"{td}{badge}</td>"]
    cells += [f"{td}{'<br>'.join(html.escape(line) for line in lines)}</td>", f"{td}{html.escape(says)}</td>"]
    return "<tr>" + "".join(cells) + "</tr>"


def verdict_table_html(result: Any) -> str:
    """An audit result in HTML, as a notebook shows it: a heading that names what was audited (the release's or
    the algorithm's name) with the verdict's badge, then the report's row for it (the verdict badge, the evidence
    lines and what the verdict says, from :func:`~dpkit.reports.audit_row.audit_columns`,
    :func:`~dpkit.reports.audit_row.evidence_lines` and :func:`~dpkit.reports.audit_row.implementation_text`, as
    ``dpkit report`` writes them), then one row per position of the changed user.

    Args:
        result: An audit result (:class:`~dpkit.audits.summary.AuditSummary`).

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
    verdict = Verdict(result.verdict)
    row["verdict"] = verdict
    row["audited_epsilon_estimate_text"] = estimate_text(result)
    name = target_name(result) or ("an algorithm" if declared else "a release")
    claim = claim_text(result.claim)
    if declared:  # the report's verdict row: the algorithm, its badge, the evidence, what it says
        rows = [_row(str(out["algorithm"]), _badge(verdict), evidence_lines(row), implementation_text(row))]
    else:  # the heading names the release, the claim and the verdict: the evidence and what it says
        rows = [_row(None, None, evidence_lines(row), f"The release: {CLAIM_TEXT[verdict]}.")]
    for p in result.positions or ():
        res = getattr(p, "result", p)
        lines = [] if res is None else [f"ε ≥ {readable_number(res.epsilon_lower, 3)}"]
        lines += [] if res is None else [f"μ ≥ {readable_number(res.mu_lower, 3)}"]
        badge = _badge(None if res is None else Verdict(p.verdict))  # None: stopped before its final test
        rows.append(_row(f"position {position_name(p)}", badge, lines, ""))
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
