"""An audit's part of a report's verdict row: its columns (:func:`audit_columns`, from a result's ``to_dict()``), the
evidence lines under its badge (:func:`evidence_lines`) and what its verdict says (:func:`implementation_text`,
:data:`CLAIM_TEXT`). ``dpkit report`` builds its verdict table with them (:mod:`dpkit.reports.job`,
:mod:`dpkit.reports.verdict_views`), and so does a notebook's view of a result (:mod:`dpkit.reports.notebook_view`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpkit.audit_modes import AuditMode
from dpkit.audits.summary import estimate_number, readable_number
from dpkit.audits.verdicts import Verdict

__all__ = [
    "AUDIT_COLUMNS",
    "CLAIM_TEXT",
    "IMPLEMENTATION_TEXT",
    "audit_columns",
    "evidence_lines",
    "implementation_text",
]

#: The audit's columns of a report's verdict row, in order (:func:`audit_columns`).
AUDIT_COLUMNS = (
    "audit_sigma", "audited_epsilon_lower", "audited_mu_lower", "audit_position", "audited_mu_estimate",
    "audited_epsilon_estimate", "audit_power_ratio", "audit_mode", "audit_runs", "audit_runs_used",
    "audit_confidence", "audit_power_needed", "audit_reason", "verdict",
)  # fmt: skip

#: What an audit verdict says about an implementation judged against its own declaration (the RL audits; the
#: report's verdict table says the same).
IMPLEMENTATION_TEXT = {
    Verdict.VIOLATION: "its runs show more privacy loss than its declaration allows at that σ: the code does not do "
    "what it declares",
    Verdict.CONSISTENT: "no more privacy loss than its declaration allows at that σ, and the audit had the power to "
    "see it",
    Verdict.INCONCLUSIVE: "no violation seen, but too few runs to have seen one",
}

#: What an audit verdict says about a release judged against a claim.
CLAIM_TEXT = {
    Verdict.VIOLATION: "its runs show more privacy loss than the claim allows: the release does not satisfy it",
    Verdict.CONSISTENT: "no more privacy loss than the claim allows, and the audit had the power to see it",
    Verdict.INCONCLUSIVE: "no violation seen, but too few runs to have seen one",
}


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
    one_run = result.get("mode") == AuditMode.ONE_RUN
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
        "audit_mode": AuditMode.SEQUENTIAL if sequential else AuditMode.ONE_RUN if one_run else AuditMode.FIXED,
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
    return f"The implementation (audited at σ {_sigma_text(row)}): {IMPLEMENTATION_TEXT[Verdict(verdict)]}."


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
    if row["audit_mode"] == AuditMode.SEQUENTIAL:  # no power ratio and no estimates: it reports none
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
    if row["verdict"] == Verdict.INCONCLUSIVE:  # why: too little power, or runs past a claim they cannot certify
        power = (
            f"inconclusive: {row['audit_reason']}" if row.get("audit_reason") else f"{power} (needs {num(needed, 2)})"
        )
    if row["audit_mode"] == AuditMode.ONE_RUN:  # bounds, no estimates; one run
        return [
            power,
            f"ε ≥ {num(row['audited_epsilon_lower'], 3)} certified ({confidence:.0%})",
            f"μ ≥ {num(row['audited_mu_lower'], 3)} certified",
            f"{sigma}one run, every user a canary",
        ]
    return [
        power,
        f"ε ≥ {num(row['audited_epsilon_lower'], 3)} certified ({confidence:.0%}), "
        f"estimate {row.get('audited_epsilon_estimate_text') or estimate_number(row['audited_epsilon_estimate'])}",
        f"μ ≥ {num(row['audited_mu_lower'], 3)} certified, estimate {num(row['audited_mu_estimate'], 3)}",
        *where,
        f"{sigma}{num(row['audit_runs'])} runs per dataset",
    ]
