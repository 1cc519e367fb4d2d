"""Why an RL audit's verdict is what it is, and where the evidence points: the ``why:`` and ``diagnosis:`` of an
audit of several positions (:class:`~dpkit.audits.rl.RlPositionsResult`), built on each position's judgement
(:class:`~dpkit.audits.verdicts.Judgement`: its reason, its diagnosis) as a release audit's are.

The diagnosis names what the numbers the audit holds point to, in this order: a σ below the one the target needs
(the declaration itself short of the claim), canaries whose releases differ by more than the declared sensitivity
(reach above 1: a contribution not clipped), a signal carried by the plans served after the changed user (a
policy computed from more than the released statistics), and the headline position's own diagnosis (the measured
trade-off's ratio to the allowance: a factor in Δ or σ, or a noise term missing). Like a release audit's, it comes
only beside a violation, or an inconclusive whose evidence points somewhere; never beside consistent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..shapes import ShapeFamily
from ..verdicts import POWER_RATIO_NEEDED, Verdict

__all__ = [
    "REACH_TOLERANCE",
    "rl_reason",
    "rl_diagnosis",
    "rl_sequential_reason",
    "rl_sequential_diagnosis",
    "sigma_shortfalls",
    "verdict_meanings",
]

#: A pair's reach (pair μ ÷ declared μ at its position) above 1 by more than this is a sensitivity exceeded
#: (floating-point noise in the runs' μ_i stays far below it).
REACH_TOLERANCE = 1e-6


def verdict_meanings() -> tuple[str, str]:
    """What each of an RL audit's two verdicts is judged against, one sentence each.

    Returns:
        The verdict against the declaration's, and the verdict against the paper's claim's.
    """
    return (
        "against the declaration: each position's certified μ lower bound against the μ the registered declaration "
        "allows its pair at the σ the target needs (σ_tight), with the power to see a violation",
        "against the paper's claim: the largest certified ε lower bound of the positions against the claimed ε at "
        "the target δ (violated only when that bound exceeds it)",
    )


def rl_reason(audit: Any) -> str:
    """Why the audit's verdict is what it is, in one sentence.

    Args:
        audit: An :class:`~dpkit.audits.rl.RlPositionsResult` (its ``results``, ``verdict`` and ``worst`` are read).

    Returns:
        The reason: under violation, the position and attack whose certified bound lies past its allowance; under
        consistent, that no position's does and each had the power to see one; under inconclusive, the headline
        position's own reason (or its view's note, for a black-box view).
    """
    results, worst = audit.results, audit.worst
    total = len(results)
    if audit.verdict == Verdict.VIOLATION:
        bad = sum(r.verdict == Verdict.VIOLATION for r in results)
        return (
            f"{bad} of {total} position(s) violate the declaration; at {worst.position_name} the {worst.attack} "
            f"attack certifies μ ≥ {worst.mu_lower:.4g} where the declaration allows the pair "
            f"{worst.pair_mu_allowed:.4g} (its certified error rates lie below that μ's trade-off curve)"
        )
    if audit.verdict == Verdict.CONSISTENT:
        ratio = min(r.audit.power_ratio for r in results)
        return (
            f"no position's certified μ exceeds what the declaration allows its pair, and at each an ideal attack "
            f"would certify at least {ratio:.3g} of the allowance with these runs ({POWER_RATIO_NEEDED} needed)"
        )
    why = worst.note or worst.audit.judgement.reason or "the evidence is too weak to call"
    return f"at {worst.position_name}: {why}"


def rl_sequential_reason(audit: Any) -> str:
    """Why a sequential audit of every position (:class:`~dpkit.audits.rl.sequential.RlSequentialResult`) says what
    it says, in one sentence.

    Args:
        audit: The sequential audit (its ``positions``, ``verdict``, ``worst`` and ``threshold`` are read).

    Returns:
        The reason: the violating position and how it was certified (its e-value crossing the threshold, or its
        final test), that every position concluded consistent, or the headline position's own reason.
    """
    worst, total = audit.worst, len(audit.positions)
    result = worst.result
    if audit.verdict == Verdict.VIOLATION:
        bad = sum(p.verdict == Verdict.VIOLATION for p in audit.positions)
        how = (
            f"its e-value {result.e_value:.4g} crossed {audit.threshold:.4g} (a correct implementation crosses with "
            "probability ≤ α/2)"
            if result.stopped_early
            else f"its final test certifies μ ≥ {result.mu_lower:.4g}, the declaration allowing {worst.mu_allowed:.4g}"
        )
        return f"{bad} of {total} position(s) violate the declaration; at {worst.position} {how}"
    if audit.verdict == Verdict.CONSISTENT:
        return (
            "no position's e-value crossed its threshold, and each position's final test certified no more than its "
            "allowance with the power to see a violation"
        )
    if result is None or result.final is None:
        return f"at {worst.position}: the audit stopped before its final test"
    return f"at {worst.position}: {result.final.judgement.reason}"


def rl_sequential_diagnosis(audit: Any) -> str | None:
    """Where a sequential audit's evidence points: a σ below what the target needs (its claim's), beside a violation
    or an inconclusive; None under consistent or where nothing points.

    Args:
        audit: The sequential audit (its ``verdict`` and ``claim`` are read).

    Returns:
        The diagnosis, or None.
    """
    if audit.verdict == Verdict.CONSISTENT:
        return None
    return _sigma_cause(audit.claim.sigmas, audit.claim.sigmas_claim, audit.claim.exact_mu, audit.claim.claim_mu)


def _sigma_cause(sigmas: Mapping[str, Any], needed: Mapping[str, Any], exact_mu: float, claim_mu: float) -> str | None:
    """The diagnosis of a σ short of what the target needs, or None."""
    short = sigma_shortfalls(sigmas, needed)
    if not short:
        return None
    each = ", ".join(f"{name} {used:.4g} ({ratio:.3g}×)" for name, ratio, used in short)
    return (
        f"σ below what the target needs ({each} of it): the noise itself is short of the claim (the declared "
        f"releases' exact μ {exact_mu:.4g} against the claim's {claim_mu:.4g})"
    )


def sigma_shortfalls(sigmas: Mapping[str, Any], needed: Mapping[str, Any]) -> list[tuple[str, float, float]]:
    """The releases whose σ (at some step) lies below the σ the claim needs there.

    Args:
        sigmas: The σ used, one or one per step, per release.
        needed: The σ the claim needs, likewise.

    Returns:
        Per release short of it: its name, the smallest ratio σ used ÷ σ needed and the σ used there.
    """
    short = []
    for name, used in sigmas.items():
        if name not in needed:
            continue
        u, n = np.atleast_1d(np.asarray(used, dtype=float)), np.atleast_1d(np.asarray(needed[name], dtype=float))
        if u.shape != n.shape:
            u, n = np.broadcast_arrays(u, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.where(n > 0, u / n, 1.0)
        k = int(np.argmin(ratios))
        if ratios[k] < 1.0 - 1e-9:
            short.append((name, float(ratios[k]), float(u[k])))
    return short


def rl_diagnosis(audit: Any) -> str | None:
    """Where the evidence of a violation (or of an inconclusive that points to one) lies, and its likely cause.

    Args:
        audit: An :class:`~dpkit.audits.rl.RlPositionsResult`.

    Returns:
        The diagnosis (the causes found, joined by "; "), or None: under consistent, or where nothing points.
    """
    if audit.verdict == Verdict.CONSISTENT:
        return None
    worst = audit.worst
    causes: list[str] = []
    short = _sigma_cause(worst.sigmas, worst.sigmas_claim, worst.exact_mu, worst.claim_mu)
    if short is not None:
        causes.append(short)
    over = [r for r in _pointing(audit.results) if r.reach > 1.0 + REACH_TOLERANCE]
    if over:
        r = max(over, key=lambda r: r.reach)
        causes.append(
            f"the canaries' releases differ by more than the declared sensitivity (at {r.position_name}: pair μ "
            f"{r.pair_mu:.4g} against the declared {r.declared_mu_at_position:.4g}, reach {r.reach:.3g} > 1): a "
            "user's contribution is not clipped to the declared Δ"
        )
    pointing = _pointing(audit.results)
    # the plans: an attack on them carried the signal, or only the plan probe's pair points past its allowance
    plans = [r for r in pointing if r.attack.startswith("plans")]
    if not plans and pointing and all(r.probe is not None for r in pointing):
        plans = pointing
    if plans:
        r = plans[0]
        causes.append(
            f"the plans served after the changed user carry the signal ({r.attack} attack at {r.position_name}): "
            "the policy depends on her data beyond the released noisy statistics (planning on exact ones leaks)"
        )
    own = _own_diagnosis(worst)
    if own is not None and not causes:
        causes.append(f"at {worst.position_name}, {own}")
    return "; ".join(causes) or None


def _pointing(results: Sequence[Any]) -> list[Any]:
    """The positions whose evidence points past their allowance: violations first, then the inconclusive ones whose
    judgement diagnoses a loss past it."""
    bad = [r for r in results if r.verdict == Verdict.VIOLATION]
    return bad or [r for r in results if r.verdict == Verdict.INCONCLUSIVE and r.audit.judgement.diagnosis is not None]


def _own_diagnosis(worst: Any) -> str | None:
    """The headline position's judgement's diagnosis (the measured trade-off against its allowance) and, for a
    randomized-response-shaped one (some runs give the changed user away outright), its likely cause."""
    judgement = worst.audit.judgement
    if judgement.diagnosis is None:
        return None
    shape = judgement.shape
    if shape is None or shape.family != ShapeFamily.RANDOMIZED_RESPONSE:
        return str(judgement.diagnosis)
    return (
        f"{judgement.diagnosis}: some runs give the changed user away outright, the mark of a release without "
        "its declared noise or of one noise draw reused across releases"
    )
