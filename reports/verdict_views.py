"""What a report's verdict page says in words: its rows, the audits' headlines and the sections' ids.

:func:`verdict_view` and :func:`ledger_view` give each cell of an algorithm's and a file's verdict row as text,
:func:`headline_view` and :func:`sequential_view` the sentences of an audit's section, :func:`anchors` each section's
HTML id (also its figure files' stem). Both report.md and report.html render them (:mod:`dpkit.reports.render`).
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from dpkit.accountant.accountants import AccountingMethod
from dpkit.audit_modes import AuditMode
from dpkit.audits.summary import readable_number

from .audit_row import evidence_lines, implementation_text

__all__ = [
    "FIXED_IDS",
    "ID_SUFFIXES",
    "NO_ROC_TEXT",
    "PAPER_CLAIM_CSS",
    "PaperClaim",
    "anchors",
    "glance_view",
    "headline_view",
    "interval_end",
    "ledger_view",
    "relation_label",
    "sequential_view",
    "setting_labels",
    "sigma_span",
    "verdict_view",
]


#: A number for people: ``digits`` significant digits; '—' for a missing value (the results' verdict tables' too).
_num = readable_number


#: Why a sequential audit's section has no ROC or trade-off figure.
NO_ROC_TEXT = (
    "No ROC or trade-off figure: a sequential audit stops on the evidence it needs instead of spending a fixed "
    'evaluation split to draw them from; use mode = "fixed" for the ROC band, reach and power per position.'
)


class PaperClaim(enum.StrEnum):
    """The verdict on a paper's claim (report.json's ``paper_claim``; :func:`dpkit.reports.job.paper_claim`)."""

    MET = "met"
    FLAWED = "flawed"
    NOT_MET = "not met"
    NOT_CERTIFIED = "not certified"


def interval_end(value: Any, up: bool = True, digits: int = 8) -> str:
    """An end of the interval the truth lies in, to ``digits`` significant digits rounded outwards.

    An upper end is rounded up and a lower end down, so the printed interval still holds the truth; a value that is
    not a finite float is printed as a readable number ('—' for a missing one).

    Args:
        value: The end (a float; None or anything else is printed as it is read).
        up: Whether it is an upper end (rounded up) or a lower end (rounded down).
        digits: The significant digits.

    Returns:
        The end as text.
    """
    if not isinstance(value, float) or not math.isfinite(value):
        return _num(value, digits)
    from dpkit.accountant.numerics import decimal_round

    short = f"{value:.{digits}g}"
    return short if float(short) == value else f"{decimal_round(value, digits, up=up):.{digits}g}"


def relation_label(value: str) -> str:
    """A neighbouring relation's label as the report's tables write it: ``add_remove`` as ``add-remove``.

    The relation in a sentence is :func:`dpkit.reports.texts.relation_text`.

    Args:
        value: The relation's name.

    Returns:
        The name with hyphens for underscores.
    """
    return value.replace("_", "-")


#: The ids the templates give their own headings, and the suffixes of each section's ids (``NAME-ledger``, …).
FIXED_IDS = frozenset({"glance", "verdicts", "verdicts-implementation", "verdicts-paper", "files", "provenance"})
ID_SUFFIXES: tuple[str, ...] = ("", "-ledger", "-flags", "-audit", "-regret", "-accounting")


def anchors(names: Sequence[str]) -> dict[str, str]:
    """A unique HTML id for each section name; it is also the stem of the section's figure files.

    The id is the name with every run of characters outside ``[A-Za-z0-9_-]`` as ``-`` and no ``-`` at either end
    (the registered names keep their own; ``section`` for a name left empty), then ``-2``, ``-3``, … where it or one
    of its derived ids (:data:`ID_SUFFIXES`) would meet a template's own id (:data:`FIXED_IDS`) or another
    section's.

    Args:
        names: The sections' names, in the report's order (the first keeps the plain id).

    Returns:
        Each name's id.
    """
    out: dict[str, str] = {}
    taken = set(FIXED_IDS)
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "section"
        anchor, k = base, 1
        while any(anchor + suffix in taken for suffix in ID_SUFFIXES):
            k += 1
            anchor = f"{base}-{k}"
        taken.update(anchor + suffix for suffix in ID_SUFFIXES)
        out[name] = anchor
    return out


def _values(value: Any) -> list[float]:
    """Every number of a σ (one, a list, or a mapping of either)."""
    if isinstance(value, Mapping):
        return [v for item in value.values() for v in _values(item)]
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in _values(item)]
    return [] if value is None or isinstance(value, bool) else [float(value)]


def sigma_span(value: Any, digits: int = 4) -> str:
    """A σ in a few characters: the number, or ``lo–hi`` over the releases (and steps) it holds.

    A step of sensitivity 0 (σ = 0) is left out; a number between 10⁴ and 10⁹ is written without an exponent.

    Args:
        value: One σ, a list of them (one per step), a mapping release → either, or None.
        digits: The significant digits of each end.

    Returns:
        The number, ``lo–hi``, or '—' when it holds no positive σ.
    """
    values = [v for v in _values(value) if v > 0]
    if not values:
        return "—"
    lo, hi = (_readable(v, digits) for v in (min(values), max(values)))
    return lo if lo == hi else f"{lo}–{hi}"


def _readable(value: float, digits: int) -> str:
    """A number without an exponent where it is between 10⁴ and 10⁹ (18,455 rather than 1.846e+04)."""
    return f"{value:,.0f}" if 1e4 <= value < 1e9 else _num(value, digits)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _paper_text(row: Mapping[str, Any]) -> str:
    """One sentence: what the flags judged — the paper's σ and sensitivities against the paper's own claim."""
    how = "exact" if row["method"] == AccountingMethod.EXACT else f"{row['method']}, an upper bound"
    text = (
        f"The paper's claim (ε = {_num(row['claimed_epsilon'])} at δ = {_num(row['delta'])}): its σ with the true "
        f"sensitivities gives ε = {_num(row['epsilon_at_paper_sigma'])} ({how}), "
        f"{_num(row['epsilon_at_informative_delta'])} at the informative δ = {_num(row['delta_informative'])}"
    )
    flag = row["worst_flag"]
    if flag is None:
        return text + "; no finding about its accounting."
    return text + f"; worst finding: {flag['severity']} {flag['code']}."


def sequential_view(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a sequential audit's section says in words (both report.md and report.html render it).

    Args:
        result: The sequential audit's dictionary.

    Returns:
        How it ended against the fixed audit of the same positions, and how its positions are judged.
    """
    used, fixed, budget = result["runs_used"], result["fixed_runs"], result["budget"]
    count = len(result["positions"])
    if result["stopped_early"]:
        fewer = f" ({_num(fixed / used, 3)}× fewer)" if 0 < used < fixed else ""
        ended = (
            f"stopped after {_num(used)} runs per dataset at a violation, where the fixed audit of "
            f"{'this position' if count == 1 else f'these {count} positions'} spends {_num(fixed)}{fewer}"
        )
    else:
        most = "" if count == 1 else "at most "  # each position's plan has its own budget
        each = "" if count == 1 else f" at each of its {count} positions ({_num(used)} in all)"
        ended = (
            f"ran to its budget of {most}{_num(budget)} runs per dataset{each}, where the fixed audit's verdict test "
            f"decided (the fixed audit of {'this position' if count == 1 else 'these positions'} spends {_num(fixed)})"
        )
    tested = "The position is tested"
    if count > 1:
        tested = f"Each position is tested at its share α/{count} of α (a union bound),"
    stopped = "" if count == 1 else " 'stopped': another position's violation ended the audit before it concluded."
    return {
        "sentence": f"Sequential audit (anytime-valid): {ended}.",
        "positions": (
            f"{tested} against an allowance fixed before any run (the claim's μ × √share); its e-value stops the "
            f"audit at {_num(result['threshold'])} (by Ville's inequality a correct implementation gets there with "
            "probability at most α/2); one that does not stop ends at its budget with the fixed audit's final test."
            + stopped
        ),
        "no_roc": NO_ROC_TEXT,
        "epsilon_note": (  # an early stop certifies in the claim's unit only (docs/sequential.md)
            " (an early stop certifies its bound in the claim's unit, μ, only: nothing in ε)"
            if result["stopped_early"] and not result["epsilon_lower"] and (result["mu_lower"] or 0) > 0
            else ""
        ),
    }


def headline_view(result: Mapping[str, Any]) -> dict[str, str]:
    """Where an audit's numbers are read, in words (both report.md and report.html render it).

    Args:
        result: The audit's dictionary.

    Returns:
        ``where``, the headline position, and ``largest``, the largest bounds over the positions with theirs
        (empty for an audit of one position).
    """
    position = result.get("worst_position", result.get("position"))
    if len(result.get("positions") or []) < 2 or position is None:
        return {"where": "", "largest": ""}
    parts = [
        f"{unit} ≥ {_num(result[key])} at {result[key + '_position']}"
        for unit, key in (("μ", "mu_lower_largest"), ("ε", "epsilon_lower_largest"))
        if result.get(key) is not None
    ]
    largest = f"{', '.join(parts)} (each position at its share of α)" if parts else ""
    return {"where": f" at the headline position, {position}", "largest": largest}


def verdict_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """What one verdict row shows, as text (both report.md and report.html render it).

    Args:
        row: A row of the report's summary.

    Returns:
        Each cell's text.
    """
    verdict = row["verdict"]
    audit: dict[str, Any] = {"verdict": verdict or "not audited", "css": verdict or "not-audited", "lines": []}
    if verdict is not None:
        audit["lines"] = evidence_lines(row)
    flag = row["worst_flag"]
    counts = row["flag_counts"]
    return {
        "implementation_text": implementation_text(row),
        "paper_text": _paper_text(row),
        "model": row["privacy_model"],
        "relation": relation_label(row["relation"]),
        "claim": f"ε = {_num(row['claimed_epsilon'])} at δ = {_num(row['delta'])}",
        "claim_epsilon": _num(row["claimed_epsilon"]),
        "claim_delta": _num(row["delta"]),
        "epsilon": _num(row["epsilon_at_paper_sigma"]),
        "method": None if row["method"] == AccountingMethod.EXACT else f"{row['method']}: an upper bound",
        "epsilon_informative": _num(row["epsilon_at_informative_delta"]),
        "delta_informative": _num(row["delta_informative"]),
        "sigmas": [
            ("paper", sigma_span(row["sigma_paper"])),
            ("tight", sigma_span(row["sigma_tight"])),
            ("optimal", sigma_span(row["sigma_optimal"])),
        ],
        "audit": audit,
        "flag": None if flag is None else {**flag, "css": f"flag-{flag['severity']}"},
        "flag_counts": ", ".join(_plural(counts[k], k) for k in ("error", "warning", "info") if counts[k]) or "none",
    }


#: The badge of a file's claim status (dpkit.accountant.assessment.LedgerAssessment.claim_status).
_CLAIM_CSS = {"met": "consistent", "not met": "violation", "not certified": "inconclusive"}


def ledger_view(section: Mapping[str, Any]) -> dict[str, Any]:
    """What one ledger or event file's verdict row shows, as text.

    Args:
        section: The entry's section (:func:`dpkit.reports.user_ledgers.ledger_section`).

    Returns:
        Each cell's text.
    """
    a = section["assessment"]
    # a claim met at a δ above the informative one says little about individuals: not green
    met_uninformative = a["claim_status"] == PaperClaim.MET and any(
        f["code"] == "delta-not-informative" for f in a["flags"]
    )
    claim = "no claim" if section["epsilon"] is None else f"ε = {_num(section['epsilon'])}"
    return {
        "kind": section["kind"],
        "claim_epsilon": claim,
        "claim_delta": _num(section["delta"]),
        "epsilon": _num(a["certified_epsilon"]),
        "method": a["certified_method"] or "—",
        "definitive": a["definitive"],
        "interval": None
        if a.get("certified_epsilon_lower") is None or a["certified_epsilon"] is None
        else f"[{interval_end(a['certified_epsilon_lower'], False, 5)}, "
        f"{interval_end(a['certified_epsilon'], True, 5)}]",
        "epsilon_informative": _num(a["certified_epsilon_at_informative_delta"]),
        "delta_informative": _num(a["delta_informative"]),
        "noise_ratio": _num(a["noise_ratio"]),
        "claim_met": a["claim_status"] + (" (at an uninformative δ)" if met_uninformative else ""),
        "claim_css": "inconclusive" if met_uninformative else _CLAIM_CSS.get(a["claim_status"], "not-audited"),
        "flag": None
        if section["worst_flag"] is None
        else {**section["worst_flag"], "css": f"flag-{section['worst_flag']['severity']}"},
    }


# -- the first screen: one line per algorithm and file ---------------------------------------------------------


def _sizes(values: Mapping[str, Any], *, lq: bool, horizon: Any) -> list[str]:
    """A world's sizes as ``S = 2, A = 2, H = 8`` (``n = 2, d = 1, H = 4`` for an LQ system)."""
    keys = (("n", "state_dim"), ("d", "control_dim")) if lq else (("S", "states"), ("A", "actions"))
    parts = [f"{symbol} = {values[key]}" for symbol, key in keys if values.get(key) is not None]
    return parts + ([] if horizon is None else [f"H = {horizon}"])


def setting_labels(section: Mapping[str, Any]) -> dict[str, str | None]:
    """Where an algorithm's numbers were measured, in a few words: two settings meet in its report.

    The ledger, the paper's claim, its σ and the regret are the report's setting (the config's world and K users);
    the audit runs in its own small setting (a few users per run, often another horizon, and for RLSVI another
    target), so a σ tight of one is not the σ tight of the other.

    Args:
        section: The algorithm's section of report.json.

    Returns:
        ``report`` (e.g. ``riverswim, S = 2, A = 2, H = 4, K = 2,000``) and ``audit`` (e.g. ``own MDP, S = 2, A = 2,
        H = 8, 4 users per run``, with the audit's target where it is not the report's; None without an audit or
        without its setting).
    """
    settings, led = section["settings"], section["ledger"]
    lq = settings["env"] == "lq"
    horizon = led["parameters"].get("horizon", settings.get("horizon"))
    report = ", ".join(
        [settings["env"], *_sizes(settings, lq=lq, horizon=horizon), f"K = {_num(settings['episodes'])}"]
    )
    audit = section.get("audit") or {}
    result = audit.get("result") if audit.get("available") else None
    setting = None if result is None else result.get("setting")
    if result is None or setting is None:
        return {"report": report, "audit": None}
    world = setting.get("env") or ("LQ system" if lq else "own MDP")
    words = [world, *_sizes(setting, lq=lq, horizon=setting.get("horizon")), f"{result['episodes']} users per run"]
    if (setting.get("epsilon"), setting.get("delta")) != (led["epsilon"], led["delta"]):
        words.append(f"target ε = {_num(setting.get('epsilon'))}, δ = {_num(setting.get('delta'))}")
    return {"report": report, "audit": ", ".join(words)}


#: The badge of the paper's claim (:func:`dpkit.reports.job.paper_claim`): red where the paper's σ or its proof fails.
PAPER_CLAIM_CSS = {"met": "consistent", "flawed": "violation", "not met": "violation", "not certified": "inconclusive"}


def glance_view(row: Mapping[str, Any], section: Mapping[str, Any]) -> dict[str, Any]:
    """One algorithm's line of the report's first screen: both verdicts, the worst flag and the setting of each.

    Args:
        row: The algorithm's row of the report's summary.
        section: Its section of report.json.

    Returns:
        ``audit`` (verdict, css, a short line), ``paper`` (verdict, css, a short line), ``flag`` (or None) and
        ``settings`` (:func:`setting_labels`).
    """
    verdict = row["verdict"]
    if verdict is None:
        short = ""
    elif row["audit_mode"] == AuditMode.SEQUENTIAL:
        short = f"sequential, {_num(row['audit_runs_used'])} runs"
    else:
        sigma = row["audit_sigma"] if isinstance(row["audit_sigma"], str) else _num(row["audit_sigma"])
        short = f"ideal ÷ allowed {_num(row['audit_power_ratio'], 2)}, σ {sigma}"
    relation = "≤" if row["epsilon_at_paper_sigma"] <= row["claimed_epsilon"] else ">"
    bound = "" if row["method"] == AccountingMethod.EXACT else " (upper bound)"
    flag = row["worst_flag"]
    return {
        "audit": {"verdict": verdict or "not audited", "css": verdict or "not-audited", "short": short},
        "paper": {
            "verdict": row["paper_claim"],
            "css": PAPER_CLAIM_CSS[row["paper_claim"]],
            "short": f"ε {_num(row['epsilon_at_paper_sigma'])}{bound} {relation} {_num(row['claimed_epsilon'])} "
            f"at δ = {_num(row['delta'])}",
        },
        "flag": None if flag is None else {**flag, "css": f"flag-{flag['severity']}"},
        "settings": setting_labels(section),
    }
