"""The verdict of an audit: the certified error rates against the claim's whole trade-off curve, and power.

Three verdicts:

* ``violation`` — some evaluated test's Clopper–Pearson upper bounds (FPR⁺, FNR⁺) lie strictly below the
  claim's trade-off curve f (:meth:`~dpkit.audits.claims.Claim.trade_off`), in either orientation. Each test
  is bounded at its own share of α and the shares add up to α (a union bound), so a mechanism that
  satisfies the claim is called a violation with probability at most α, whatever the attack — the
  attack, its thresholds and the claim were all fixed before the evaluation runs were scored;
* ``inconclusive`` — no violation, but the audit could not have seen one: :func:`power_bound`, the bound
  that an *ideal* attack would certify with these evaluation runs against a mechanism exactly at the
  claim, is below half of the claim (``power_ratio`` < 0.5). It depends only on the claim, the number of
  runs and α — never on the runs under test;
* ``consistent`` — no violation, and enough power.

Power is read in the claim's own unit: μ for claims that imply μ-GDP, else ε at the audit's δ.

**One unit, and a diagnosis.** Every claim is also read in μ (:attr:`~dpkit.audits.claims.Claim.mu_allowed`: the
noisiest Gaussian mechanism it allows), so the measured loss (μ, estimate and interval) stands beside what the claim
allows, as a ratio. Where that ratio's interval lies above 1 and holds a factor that usually has one cause, the
judgement names it (:func:`diagnose`): 2 (a sensitivity off by a factor 2: replace-one against add/remove, a mean's
Δ/n where 2Δ/n is right), √2 (√2 in the sensitivity, or half the noise variance missing), √σ (σ used as a
variance: noise of standard deviation √σ), or far above any of them (a noise term missing). A diagnosis is a
likely cause to look at, read off the measurement; the verdict does not depend on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from dpkit.accountant.validation import check_count, check_probability, check_real

from .claims import Claim
from .estimators import AuditEstimate
from .estimators import cp_upper_array as _cp_upper

__all__ = ["VERDICTS", "POWER_RATIO_NEEDED", "Judgement", "delta_lower_bound", "diagnose", "judge", "power_bound"]

VERDICTS: tuple[str, ...] = ("violation", "consistent", "inconclusive")
#: Below this share of the claim, an audit's power is too small to call an implementation consistent.
POWER_RATIO_NEEDED = 0.5
#: How many thresholds the engine evaluates (each at α/3): the power assumes the same share.
_TESTS = 3


def delta_lower_bound(fpr_upper: float, fnr_upper: float, epsilon: float) -> float:
    """The δ that error rates (FPR⁺, FNR⁺) certify at ``epsilon``: max(0, 1 − FNR⁺ − e^ε FPR⁺,
    1 − FPR⁺ − e^ε FNR⁺). This turns rare events (point masses, disjoint supports) into a δ bound."""
    a, b = check_real("fpr_upper", fpr_upper), check_real("fnr_upper", fnr_upper)
    if math.isinf(epsilon):
        return 0.0

    def scaled(rate: float) -> float:  # e^ε · rate in log space (a capped e^ε would overstate δ)
        return 0.0 if rate <= 0.0 else math.exp(min(float(epsilon) + math.log(rate), 709.0))

    return max(0.0, 1.0 - b - scaled(a), 1.0 - a - scaled(b))


def _bounds(claim: Claim, fpr_up: np.ndarray, fnr_up: np.ndarray, delta: float) -> np.ndarray:
    """The lower bound, in the claim's unit, that each pair of rate bounds certifies (vectorised)."""
    if claim.unit == "mu":
        return np.maximum(0.0, -special.ndtri(fpr_up) - special.ndtri(fnr_up))
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1.0 - delta - fnr_up, 0.0)) - np.log(fpr_up)
        two = np.log(np.maximum(1.0 - delta - fpr_up, 0.0)) - np.log(fnr_up)
    return np.maximum(0.0, np.nan_to_num(np.maximum(one, two), nan=0.0, neginf=0.0))


def power_bound(claim: Claim, *, n0: int, n1: int, alpha: float, delta: float) -> float:
    """The bound an ideal attack would certify against a mechanism exactly at ``claim``.

    The mechanism's error rates sweep the claim's trade-off curve (x, f(x)); with n0 and n1
    evaluation runs, the expected error counts at each point give Clopper–Pearson bounds at the
    share of α each of the engine's tests gets (α/3, then α/6 per rate), and the best point's bound
    is returned (μ for claims that imply GDP, else ε at ``delta``).
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    n0, n1 = check_count("n0", n0), check_count("n1", n1)
    share = check_probability("alpha", alpha) / _TESTS / 2.0
    x = np.unique(np.concatenate([np.logspace(-9, math.log10(0.5), 400), np.linspace(0.0, 1.0, 201)]))
    fx = claim.trade_off(x)
    k0, k1 = np.round(n0 * x), np.round(n1 * fx)
    b1 = _bounds(claim, _cp_upper(k0, n0, share), _cp_upper(k1, n1, share), delta)
    b2 = _bounds(claim, _cp_upper(np.round(n0 * fx), n0, share), _cp_upper(np.round(n1 * x), n1, share), delta)
    return float(max(b1.max(), b2.max()))


#: Above this many times what the claim allows, the measured μ fits no factor of the sensitivity or of σ.
_MISSING_NOISE = 8.0


def diagnose(
    mu_estimate: float, mu_interval: tuple[float, float], mu_allowed: float | None, *, sigma: float | None = None
) -> str | None:
    """The likely cause of a measured μ above the claim's, or None: the ratio's interval (``mu_interval`` over
    ``mu_allowed``) must lie above 1 and hold 2, √2 or (``sigma`` > 1 given) √σ — the closest to the estimate's
    ratio is named — or lie above :data:`_MISSING_NOISE` (a noise term missing)."""
    if mu_allowed is None or not (0.0 < mu_allowed < math.inf) or not math.isfinite(mu_estimate):
        return None
    lo, hi = (v / mu_allowed for v in mu_interval)
    ratio = mu_estimate / mu_allowed
    if not lo > 1.0:
        return None
    causes = [
        (
            2.0,
            "a factor 2 in the sensitivity: the noise assumes half the true Δ (replace-one read as add/remove, or "
            "a mean's Δ/n where 2Δ/n is right)",
        ),
        (
            math.sqrt(2.0),
            "a factor √2: the sensitivity is √2 times what the noise assumes (two coordinates or "
            "releases counted as one), or half the noise variance is missing",
        ),
    ]
    if sigma is not None and sigma > 1.0 and abs(math.log(math.sqrt(sigma) / math.sqrt(2.0))) > 0.05:
        causes.append(
            (
                math.sqrt(sigma),
                f"σ used as a variance: noise of standard deviation √σ = "
                f"{math.sqrt(sigma):.4g} instead of σ = {sigma:.4g}",
            )
        )
    fits = [(abs(math.log(ratio / f)), f, text) for f, text in causes if lo <= f <= hi]
    head = f"the measured μ is {ratio:.3g}× what the claim allows (interval {lo:.3g}–{hi:.3g})"
    if fits:
        _, factor, text = min(fits)
        return f"{head}: likely {text}"
    if lo > _MISSING_NOISE:
        return f"{head}: far beyond a factor in Δ or σ: likely a noise term missing (a release without noise)"
    return None


@dataclass(frozen=True)
class Judgement:
    """The verdict of one audit and the numbers behind it: ``mu_allowed`` is the claim in μ (every claim, where a
    Gaussian mechanism can meet it), ``mu_ratio`` the measured μ (estimate) over it, ``diagnosis`` the likely
    cause of a ratio above 1 (:func:`diagnose`)."""

    verdict: str
    claimed_epsilon: float
    claimed_mu: float | None
    delta_lower: float | None
    power: float
    power_ratio: float
    mu_allowed: float | None = None
    mu_ratio: float | None = None
    diagnosis: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_mu": self.claimed_mu,
            "delta_lower": self.delta_lower,
            "power": self.power,
            "power_ratio": self.power_ratio,
            "mu_allowed": self.mu_allowed,
            "mu_ratio": self.mu_ratio,
            "diagnosis": self.diagnosis,
        }


def judge(
    claim: Claim, estimates: Sequence[AuditEstimate], *, delta: float, alpha: float, n0: int, n1: int
) -> Judgement:
    """Judge evaluated tests against ``claim`` (see the module docstring for why this is sound).

    ``estimates`` were each bounded at their own share of ``alpha``; ``n0``/``n1`` are the
    evaluation-split sizes; ``delta`` is where ε is read.
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    estimates = tuple(estimates)
    if not estimates or not all(isinstance(e, AuditEstimate) for e in estimates):
        raise ValueError("estimates must be a non-empty sequence of AuditEstimate")
    claimed_eps = claim.epsilon_at(delta)
    claimed_mu = claim.mu
    refuted = any(claim.refuted_by(e.fpr_upper, e.fnr_upper) for e in estimates)
    delta_low = None
    if claim.kind == "dp":
        delta_low = max(
            delta_lower_bound(e.fpr_upper, e.fnr_upper, claim.epsilon)  # type: ignore[arg-type]
            for e in estimates
        )
    power = power_bound(claim, n0=n0, n1=n1, alpha=alpha, delta=delta)
    target = claimed_mu if claim.unit == "mu" else claimed_eps
    if target is None or math.isinf(target) or target == 0.0:
        ratio = 0.0  # nothing finite and positive to reach: the audit cannot call it consistent
    else:
        ratio = power / target
    if refuted:
        verdict = "violation"
    elif ratio < POWER_RATIO_NEEDED:
        verdict = "inconclusive"
    else:
        verdict = "consistent"
    allowed = claim.mu_allowed
    strongest = max(estimates, key=lambda e: (e.mu_lower, e.epsilon_lower))
    mu_ratio = None
    if allowed is not None and 0.0 < allowed < math.inf and math.isfinite(strongest.mu_estimate):
        mu_ratio = strongest.mu_estimate / allowed
    diagnosis = diagnose(strongest.mu_estimate, strongest.mu_interval, allowed, sigma=claim.sigma)
    return Judgement(verdict, claimed_eps, claimed_mu, delta_low, power, ratio, allowed, mu_ratio, diagnosis)
