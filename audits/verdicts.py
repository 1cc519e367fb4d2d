"""The verdict of an audit: the certified error rates against the claim's whole trade-off curve, and power.

``violation``: some evaluated test's Clopper–Pearson upper bounds (FPR⁺, FNR⁺) lie strictly below the claim's
trade-off curve, in either orientation (each test at its own share of α: a correct mechanism is called a violation
with probability at most α). ``inconclusive``: no violation, but the audit could not have seen one
(:func:`power_bound`), or the measured shape points past the claim. ``consistent``: otherwise. Power is read in
the claim's own unit; :func:`diagnose` names the likely cause of a loss above the claim. The three verdicts, the
shapes and the diagnoses in full: see docs/explanation/verdicts.md ("The verdicts in full").
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from dpkit.accountant.validation import check_count, check_probability, check_real, enum_values

from .claims import Claim, ClaimKind, ClaimUnit
from .estimators import AuditEstimate
from .estimators import cp_upper_array as _cp_upper
from .shapes import KAPPA, POWER_NEEDED, Roc, ShapeFamily, ShapeReading, read_shape
from .summary import POWER_RATIO_NEEDED

__all__ = [
    "VERDICTS",
    "Verdict",
    "MARGIN_SHARE",
    "POWER_RATIO_NEEDED",
    "Judgement",
    "delta_lower_bound",
    "diagnose",
    "judge",
    "power_bound",
]


class Verdict(enum.StrEnum):
    """The verdict of an audit (see the module docstring)."""

    VIOLATION = "violation"
    CONSISTENT = "consistent"
    INCONCLUSIVE = "inconclusive"


#: The values of :class:`Verdict`.
VERDICTS: tuple[str, ...] = enum_values(Verdict)
#: The share of α of the engine's test chosen where the claim breaks (its other test, at the equal-error point,
#: takes the rest): the power assumes the same share.
MARGIN_SHARE = 0.75


def delta_lower_bound(fpr_upper: float, fnr_upper: float, epsilon: float) -> float:
    """The δ that error rates (FPR⁺, FNR⁺) certify at ``epsilon``.

    This turns rare events (point masses, disjoint supports) into a δ bound.

    Args:
        fpr_upper: The upper bound FPR⁺ on the false-positive rate.
        fnr_upper: The upper bound FNR⁺ on the false-negative rate.
        epsilon: The ε at which δ is read.

    Returns:
        max(0, 1 − FNR⁺ − e^ε FPR⁺, 1 − FPR⁺ − e^ε FNR⁺).
    """
    a, b = check_real("fpr_upper", fpr_upper), check_real("fnr_upper", fnr_upper)
    if math.isinf(epsilon):
        return 0.0

    def scaled(rate: float) -> float:  # e^ε · rate in log space (a capped e^ε would overstate δ)
        return 0.0 if rate <= 0.0 else math.exp(min(float(epsilon) + math.log(rate), 709.0))

    return max(0.0, 1.0 - b - scaled(a), 1.0 - a - scaled(b))


def _bounds(claim: Claim, fpr_up: np.ndarray, fnr_up: np.ndarray, delta: float) -> np.ndarray:
    """The lower bound, in the claim's unit, that each pair of rate bounds certifies (vectorised)."""
    if claim.unit == ClaimUnit.MU:
        return np.maximum(0.0, -special.ndtri(fpr_up) - special.ndtri(fnr_up))
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1.0 - delta - fnr_up, 0.0)) - np.log(fpr_up)
        two = np.log(np.maximum(1.0 - delta - fpr_up, 0.0)) - np.log(fnr_up)
    return np.maximum(0.0, np.nan_to_num(np.maximum(one, two), nan=0.0, neginf=0.0))


def power_bound(claim: Claim, *, n0: int, n1: int, alpha: float, delta: float, share: float | None = None) -> float:
    """The bound an ideal attack would certify against a mechanism exactly at ``claim``.

    The mechanism's error rates sweep the claim's trade-off curve (x, f(x)); the expected error counts at each
    point give Clopper–Pearson bounds at the test's share of α (half of it per rate), and the best point's bound is
    returned.

    Args:
        claim: The claim.
        n0: The evaluation runs on D.
        n1: The evaluation runs on D′.
        alpha: The audit's error probability.
        delta: Where ε is read (claims not read in μ).
        share: The test's share of α; None: the engine's test where the claim breaks (:data:`MARGIN_SHARE`).

    Returns:
        μ for claims that imply GDP, else ε at ``delta``.

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    n0, n1 = check_count("n0", n0), check_count("n1", n1)
    alpha = check_probability("alpha", alpha)
    share = (MARGIN_SHARE * alpha if share is None else check_probability("share", share)) / 2.0
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
    """The likely cause of a measured loss above the claim's, or None.

    The ratio's interval (``mu_interval`` over ``mu_allowed``; any parameter that scales as Δ/σ) must lie above 1
    and hold 2, √2 or (``sigma`` > 1 given) √σ — the closest to the estimate's ratio is named — or lie above
    :data:`_MISSING_NOISE` (a noise term missing).

    Args:
        mu_estimate: The measured shape's parameter (μ of a Gaussian shape, ε of a Laplace one).
        mu_interval: Its confidence interval.
        mu_allowed: The leakiest the claim allows, in the same unit (None: no diagnosis).
        sigma: The σ of the implementation, where known (for √σ: σ used as a variance).

    Returns:
        The cause in words, or None.
    """
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


def _shape_diagnosis(shape: ShapeReading, sigma: float | None) -> str | None:
    """The diagnosis of a shape that lies past the claim: where it lies, and the likely cause of the ratio of its
    parameter to the leakiest the claim allows (:func:`diagnose`)."""
    fit = shape.fit
    if not 0.0 < shape.allowed < math.inf or not fit.interval[0] > shape.allowed:
        return None
    name = "μ" if fit.family == ShapeFamily.GAUSSIAN else "ε"
    cause = diagnose(fit.parameter, fit.interval, shape.allowed, sigma=sigma)
    head = (
        f"the measured trade-off is {shape.describe()}, past the claim (the leakiest it allows: "
        f"{name} = {shape.allowed:.4g})"
    )
    if cause is None:
        return head
    return f"{head}; {cause.replace('the measured μ', f'the measured {name}')}"


@dataclass(frozen=True)
class Judgement:
    """The verdict of one audit and the numbers behind it: ``mu_allowed`` is the claim in μ (every claim, where a
    Gaussian mechanism can meet it), ``mu_ratio`` the measured μ (estimate) over it; ``shape`` what the shape of the
    evaluation ROC says (:class:`~dpkit.audits.shapes.ShapeReading`; ``None`` when no scores were given); ``reason``
    why the verdict is what it is, in one sentence; ``diagnosis`` where a measured loss lies past the claim and its
    likely cause (only under a violation, or an ``inconclusive`` whose data point to one)."""

    verdict: Verdict
    claimed_epsilon: float
    claimed_mu: float | None
    delta_lower: float | None
    power: float
    power_ratio: float
    mu_allowed: float | None = None
    mu_ratio: float | None = None
    diagnosis: str | None = None
    shape: ShapeReading | None = None
    reason: str | None = None

    @property
    def trials_needed(self) -> int | None:
        """The runs per dataset that would certify the violation the data point to (or, when they point to none, a
        violation of the measured shape just past the claim) with probability 0.8 (``None``: unknown)."""
        return None if self.shape is None else self.shape.trials

    def to_dict(self) -> dict[str, Any]:
        """The judgement as plain data (JSON-ready).

        Returns:
            The verdict, the claimed ε and μ, the δ lower bound, the power and the μ allowance and ratio.
        """
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
            "reason": self.reason,
            "trials_needed": self.trials_needed,
            "shape": None if self.shape is None else self.shape.to_dict(),
        }


def _trials_text(trials: int | None) -> str:
    return "no budget up to 10¹⁵ runs would" if trials is None else f"about {trials:,} runs per dataset would"


def _decide(refuted: bool, ratio: float, shape: ShapeReading | None, shape_power: bool) -> tuple[Verdict, str]:
    """The verdict and its reason (see the module docstring); ``shape_power``: whether ``consistent`` needs the power
    to see a violation of the measured shape just past the claim (claims read in ε: their curve is not Gaussian)."""
    if refuted:
        return Verdict.VIOLATION, "a test's certified error rates lie below the claim's trade-off curve"
    if ratio < POWER_RATIO_NEEDED:
        return Verdict.INCONCLUSIVE, (
            f"too few runs: an ideal attack would certify {ratio:.3g} of the claim against its extremal mechanism "
            f"(< {POWER_RATIO_NEEDED})"
        )
    if shape is not None and shape.points_to_violation:
        return Verdict.INCONCLUSIVE, (
            f"the data point to a violation these runs cannot certify ({shape.family}-shaped, ε ≈ "
            f"{'∞' if math.isinf(shape.epsilon) else f'{shape.epsilon:.4g}'} at δ = {shape.delta:g}); "
            f"certifying it: {_trials_text(shape.trials)}"
        )
    if shape_power and shape is not None and shape.alternative is not None and shape.power < POWER_NEEDED:
        return Verdict.INCONCLUSIVE, (
            f"too few runs to see a {shape.family}-shaped violation at {KAPPA}× the claim's ε at δ = {shape.delta:g} "
            f"(seen with probability {shape.power:.2f} < {POWER_NEEDED}); certifying one: {_trials_text(shape.trials)}"
        )
    if shape is None:
        return Verdict.CONSISTENT, "no violation, and the power to see one at the claim's extremal mechanism"
    if not shape_power:
        return Verdict.CONSISTENT, (
            "no violation, nothing past the claim, and the power to see one at its extremal mechanism (a Gaussian "
            "curve, as tight in its middle as in its tails)"
        )
    seen = (
        f"certified with probability {shape.certify_power:.2f}"
        if shape.certify_power >= POWER_NEEDED
        else f"pointed to with probability {shape.flag_power:.2f} (certified: {shape.certify_power:.2f})"
    )
    return Verdict.CONSISTENT, (
        f"no violation, nothing past the claim, and a {shape.family}-shaped violation at {KAPPA}× the claim's ε "
        f"would be {seen}"
    )


def judge(
    claim: Claim,
    estimates: Sequence[AuditEstimate],
    *,
    delta: float,
    alpha: float,
    n0: int,
    n1: int,
    roc: Roc | None = None,
    runs: int | None = None,
) -> Judgement:
    """Judge evaluated tests against ``claim`` (see the module docstring for why this is sound).

    Args:
        claim: the claim.
        estimates: the evaluated tests, each bounded at its own share of ``alpha`` (``AuditEstimate.alpha``).
        delta: where ε is read.
        alpha: the audit's α (the shares of the tests add up to it).
        n0: the evaluation split's runs on D.
        n1: the evaluation split's runs on D′.
        roc: the evaluation ROC of the tests' attack (:func:`~dpkit.audits.shapes.roc_points`): its shape is read
            against the claim (``None``: no shape, the extremal power alone).
        runs: the audit's runs per dataset (the scale of the trials it would need; default ``n0``).

    Returns:
        The :class:`Judgement`.

    Raises:
        TypeError: when ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: when ``estimates`` is empty or holds something else.
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
    if claim.kind == ClaimKind.DP:
        delta_low = max(
            delta_lower_bound(e.fpr_upper, e.fnr_upper, claim.epsilon)  # type: ignore[arg-type]
            for e in estimates
        )
    share = max(e.alpha for e in estimates)  # the test with the largest share: the one chosen where the claim breaks
    power = power_bound(claim, n0=n0, n1=n1, alpha=alpha, delta=delta, share=share)
    target = claimed_mu if claim.unit == ClaimUnit.MU else claimed_eps
    if target is None or math.isinf(target) or target == 0.0:
        ratio = 0.0  # nothing finite and positive to reach: the audit cannot call it consistent
    else:
        ratio = power / target
    shape = None
    if roc is not None:
        level = min(e.alpha for e in estimates) / 2.0  # the parameter's interval: as wide as the narrowest test's
        shape = read_shape(claim, roc, delta=delta, share=share, level=level, runs=n0 if runs is None else runs)
    verdict, reason = _decide(refuted, ratio, shape, claim.unit == ClaimUnit.EPSILON)
    allowed = claim.mu_allowed
    strongest = max(estimates, key=lambda e: (e.mu_lower, e.epsilon_lower))
    mu_ratio = None
    if allowed is not None and 0.0 < allowed < math.inf and math.isfinite(strongest.mu_estimate):
        mu_ratio = strongest.mu_estimate / allowed
    if shape is None:
        diagnosis = diagnose(strongest.mu_estimate, strongest.mu_interval, allowed, sigma=claim.sigma)
    else:
        diagnosis = _shape_diagnosis(shape, claim.sigma) if verdict != Verdict.CONSISTENT else None
    return Judgement(
        verdict, claimed_eps, claimed_mu, delta_low, power, ratio, allowed, mu_ratio, diagnosis, shape, reason
    )
