"""What every audit of a release function shares: its result (:class:`AuditResult`), the candidate attacks
(``"auto"``: every attack of :data:`~dpkit.audits.attacks.AUTO_ATTACKS`), fitting them on the training split, choosing
one and its thresholds on the selection split, and judging the evaluation split against the claim. The fixed-size
audit (:mod:`dpkit.audits.engine`) and the sequential one (:mod:`dpkit.audits.sequential`) are built from these.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_choice, check_probability

from .attacks import AUTO_ATTACKS, Attack, make_attack
from .claims import Claim, ClaimUnit
from .defaults import AUTO
from .estimators import OBJECTIVES, AuditEstimate, Objective, estimate, select_threshold
from .shape_estimate import EpsilonEstimate, gdp_reading, shape_estimate
from .shapes import margin_threshold, roc_points
from .summary import Headline
from .verdicts import MARGIN_SHARE, Judgement, Verdict, judge

__all__ = [
    "AUTO",
    "AUDIT_OBJECTIVES",
    "DEFAULT_OBJECTIVES",
    "TRAIN_CAP",
    "AuditResult",
    "ScoreAll",
    "audit_result",
    "candidate_attacks",
    "check_audit_options",
    "choose_attack",
    "claimed_unit_bound",
    "fit_attacks",
    "objective_shares",
    "release_name",
    "split_runs",
]

#: The most training runs per dataset (the only outputs held in memory): enough to fit any attack.
TRAIN_CAP = 100_000
#: How an audit's thresholds may be chosen on the selection split: ``margin`` where the measured ROC falls furthest
#: below the claim's whole trade-off curve (:func:`~dpkit.audits.shapes.margin_threshold`), or one of
#: :data:`~dpkit.audits.estimators.OBJECTIVES` (equal error rate, the largest μ or ε lower bound).
AUDIT_OBJECTIVES: tuple[str, ...] = ("margin", *OBJECTIVES)
#: The tests of an audit by default: one where the claim breaks (at :data:`~dpkit.audits.verdicts.MARGIN_SHARE` of
#: α) and one at the equal-error point (the rest: the robust reading of μ and of the shape).
DEFAULT_OBJECTIVES: tuple[str, ...] = ("margin", "eer")


def objective_shares(objectives: Sequence[str], alpha: float) -> tuple[float, ...]:
    """The share of α of each test; the shares add up to α (a union bound).

    Args:
        objectives: The tests' objectives.
        alpha: The audit's α.

    Returns:
        :data:`~dpkit.audits.verdicts.MARGIN_SHARE` · α for the test where the claim breaks and the rest for the
        equal-error one (the default tests), else α split evenly.
    """
    if tuple(objectives) == DEFAULT_OBJECTIVES:
        return (MARGIN_SHARE * alpha, (1.0 - MARGIN_SHARE) * alpha)
    return tuple(alpha / len(objectives) for _ in objectives)


@dataclass(frozen=True, repr=False)
class AuditResult(Headline):
    """One audit of one neighbouring pair: the bounds, the judgement against the claim, the attack (an
    :class:`~dpkit.audits.summary.AuditSummary`); ``target`` names the release audited (:func:`release_name`; not
    in :meth:`to_dict`, which holds the numbers)."""

    claim: Claim
    estimates: tuple[AuditEstimate, ...]
    judgement: Judgement
    attack: str
    runs: int
    seed: int
    executor: str
    seconds: float
    alpha: float = 0.05
    candidates: tuple[dict[str, Any], ...] = field(default=())
    target: str | None = None

    @property
    def verdict(self) -> Verdict:
        return self.judgement.verdict

    @property
    def claimed_epsilon(self) -> float:
        return self.judgement.claimed_epsilon

    @property
    def runs_used(self) -> int:
        """Runs per dataset used: all of ``runs`` (a fixed audit)."""
        return self.runs

    @property
    def positions(self) -> None:
        return None

    @property
    def claimed_mu(self) -> float | None:
        return self.judgement.claimed_mu

    @property
    def power(self) -> float:
        return self.judgement.power

    @property
    def diagnosis(self) -> str | None:
        """The likely cause of a measured μ above what the claim allows (:func:`dpkit.audits.verdicts.diagnose`)."""
        return self.judgement.diagnosis

    @property
    def power_ratio(self) -> float:
        return self.judgement.power_ratio

    @property
    def estimate(self) -> AuditEstimate:
        """The test with the largest μ lower bound (its error rates are the ones to show)."""
        return max(self.estimates, key=lambda e: (e.mu_lower, e.epsilon_lower))

    @property
    def epsilon_lower(self) -> float:
        """The largest ε lower bound of the tests (valid at 1 − α: each test ran at α/len(tests))."""
        return max(e.epsilon_lower for e in self.estimates)

    @property
    def mu_lower(self) -> float:
        """The largest μ lower bound of the tests."""
        return max(e.mu_lower for e in self.estimates)

    @property
    def delta(self) -> float:
        return self.estimates[0].delta

    @property
    def epsilon_gdp_reading(self) -> float | None:
        """ε at the audit's δ of the μ lower bound read as μ-GDP: a certified bound against claims that imply GDP
        only (``None`` against the others: their ε is not μ-GDP's)."""
        return gdp_reading(self.mu_lower, self.claim, self.delta)

    @property
    def shape_estimate(self) -> EpsilonEstimate:
        """The point estimate of ε at the audit's δ from the shape of the evaluation ROC, with its interval
        (:func:`~dpkit.audits.shape_estimate.shape_estimate`)."""
        return shape_estimate(self.judgement.shape, self.delta)

    @property
    def epsilon_estimate(self) -> float | None:
        """The fitted shape's ε at the audit's δ (:attr:`shape_estimate`): an estimate beside the certified
        :attr:`epsilon_lower`, not a bound; ``math.inf`` for a Gaussian shape at δ = 0, ``None`` when no shape fits."""
        return self.shape_estimate.value

    def to_dict(self) -> dict[str, Any]:
        """Every number of the audit, under the keys every audit result uses.

        Returns:
            The result as plain data; deterministic (the executor and the wall time are left out, so the same seed gives
            the same dictionary under every executor and worker count).
        """
        est = self.estimate
        return {
            "verdict": self.verdict,
            "claim": self.claim.to_dict(),
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_mu": self.claimed_mu,
            "delta": self.delta,
            "epsilon_lower": self.epsilon_lower,
            "mu_lower": self.mu_lower,
            "delta_lower": self.judgement.delta_lower,
            "mu_estimate": est.mu_estimate,
            "mu_interval": list(est.mu_interval),
            "mu_allowed": self.judgement.mu_allowed,
            "mu_ratio": self.judgement.mu_ratio,
            "diagnosis": self.judgement.diagnosis,
            "reason": self.judgement.reason,
            "trials_needed": self.judgement.trials_needed,
            "shape": None if self.judgement.shape is None else self.judgement.shape.to_dict(),
            "power": self.power,
            "power_ratio": self.power_ratio,
            "confidence": 1.0 - self.alpha,
            "runs": self.runs,
            "seed": self.seed,
            "attack": self.attack,
            "fpr": est.fpr,
            "fnr": est.fnr,
            "fpr_upper": est.fpr_upper,
            "fnr_upper": est.fnr_upper,
            "threshold": est.threshold,
            "epsilon_gdp_reading": self.epsilon_gdp_reading,
            **self.shape_estimate.to_dict(),
            "candidates": [dict(c) for c in self.candidates],
            "tests": [e.to_dict() for e in self.estimates],
        }


def release_name(release: Any) -> str:
    """The name an audit result shows for the release it audited: its qualified name (``mech.py:release`` for a
    function the command line loaded), else its type's.

    Args:
        release: The release function.

    Returns:
        The name.

    Examples:
        >>> release_name(release_name)
        'release_name'
    """
    for attr in ("__qualname__", "__name__"):
        name = getattr(release, attr, None)
        if isinstance(name, str) and name:
            return name
    return type(release).__name__


def split_runs(n: int, fractions: tuple[float, ...]) -> list[slice]:
    """``n`` runs cut into consecutive slices of the given fractions (the last slice takes what rounding leaves).

    Args:
        n: The runs.
        fractions: The share of each slice.

    Returns:
        The slices.
    """
    cuts = np.floor(np.cumsum((0.0,) + fractions) * n).astype(int)
    cuts[-1] = n
    return [slice(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


def candidate_attacks(attack: Attack | str | Sequence[Attack]) -> list[Attack]:
    """The attacks to fit and choose from.

    Args:
        attack: ``"auto"`` (every :data:`AUTO_ATTACKS`), an attack's name, an attack, or a sequence of attacks.

    Returns:
        The candidates.

    Raises:
        TypeError: If ``attack`` is none of those, or an empty sequence.
        ValueError: If ``attack`` is an unknown name.
    """
    if isinstance(attack, str):
        return [make_attack(name) for name in AUTO_ATTACKS] if attack == AUTO else [make_attack(attack)]
    if isinstance(attack, Sequence):
        attacks = [a for a in attack if isinstance(a, Attack)]
        if not attacks or len(attacks) != len(attack):
            raise TypeError(f"attack must be a non-empty sequence of audits.Attack, got {attack!r}")
        return attacks
    if not isinstance(attack, Attack):
        raise TypeError(f"attack must be an audits.Attack or an attack name, got {type(attack).__name__}")
    return [attack]


@dataclass(frozen=True)
class ScoreAll:
    """Scores of every candidate attack, one column each (a picklable transform for the executors)."""

    attacks: tuple[Attack, ...]

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return np.stack([np.asarray(a.score(outputs), dtype=float) for a in self.attacks], axis=1)


def fit_attacks(
    candidates: list[Attack], out0: np.ndarray, out1: np.ndarray
) -> tuple[list[Attack], list[dict[str, Any]]]:
    """Fit the candidates on the training split.

    With several (``auto``), one whose fit fails on these outputs (e.g. constant outputs) is left out with the
    reason recorded; a single attack's failure is raised.

    Args:
        candidates: The attacks.
        out0: The training outputs of D.
        out1: The training outputs of D′.

    Returns:
        The fitted attacks and a note for each one left out.

    Raises:
        ValueError: If no attack could be fitted.
    """
    fitted, notes = [], []
    for att in candidates:
        if att.needs_fit:
            try:
                att.fit(out0, out1)
            except Exception as err:
                if len(candidates) == 1:
                    raise
                notes.append({"attack": att.name, "skipped": f"{type(err).__name__}: {err}"})
                continue
        fitted.append(att)
    if not fitted:
        raise ValueError(
            "no attack could be fitted on the training split: "
            + "; ".join(f"{n['attack']}: {n['skipped']}" for n in notes)
        )
    return fitted, notes


def claimed_unit_bound(claim: Claim, est: AuditEstimate) -> float:
    """The estimate's lower bound in the claim's unit (μ or ε).

    Args:
        claim: The claim.
        est: The estimate.

    Returns:
        Its μ or ε lower bound.
    """
    return est.mu_lower if claim.unit == ClaimUnit.MU else est.epsilon_lower


def choose_attack(
    attacks: list[Attack],
    sel0: np.ndarray,
    sel1: np.ndarray,
    claim: Claim,
    delta: float,
    shares: Sequence[float],
    objectives: tuple[str, ...],
    *,
    eval_sizes: tuple[int, int],
) -> tuple[int, list[float], list[dict[str, Any]]]:
    """Choose the attack and its thresholds on the selection split only.

    The attack that refutes the claim on the selection split wins, then the one likeliest to refute it on the
    evaluation split (the ``margin`` test's projected probability), then the largest bound in the claim's unit (the
    first, i.e. the cheapest, on ties).

    Args:
        attacks: The fitted candidates.
        sel0: Each candidate's scores of the selection runs on D (one column each).
        sel1: The same on D′.
        claim: The claim.
        delta: Where ε is read.
        shares: Each test's share of α.
        objectives: Each test's objective.
        eval_sizes: The evaluation runs on D and D′ the ``margin`` threshold is projected onto.

    Returns:
        The chosen attack's index, its thresholds (one per objective) and a row per candidate.

    Raises:
        ValueError: If every attack gave non-finite scores.
    """
    best, best_key, best_thresholds = 0, (False, -math.inf, -math.inf), [0.0]
    rows: list[dict[str, Any]] = []
    for j, att in enumerate(attacks):
        s0, s1 = sel0[:, j], sel1[:, j]
        if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
            rows.append({"attack": att.name, "skipped": "non-finite scores on the selection split"})
            continue
        thresholds, promise = [], 0.0
        for obj, share in zip(objectives, shares, strict=True):
            if obj == "margin":
                t, promise = margin_threshold(s0, s1, claim, share=share, n0=eval_sizes[0], n1=eval_sizes[1])
            else:
                t = select_threshold(s0, s1, obj, delta, share)
            thresholds.append(t)
        ests = [estimate(s0, s1, t, share, delta) for t, share in zip(thresholds, shares, strict=True)]
        key = (
            any(claim.refuted_by(e.fpr_upper, e.fnr_upper) for e in ests),
            promise,
            max(claimed_unit_bound(claim, e) for e in ests),
        )
        rows.append(
            {
                "attack": att.name,
                "selection_bound": key[2],
                "selection_refutes": key[0],
                "refute_probability": promise,
            }
        )
        if key > best_key:
            best, best_key, best_thresholds = j, key, thresholds
    if best_key[2] == -math.inf:
        raise ValueError("every attack gave non-finite scores on the selection split")
    return best, best_thresholds, rows


def audit_result(
    claim: Claim,
    attack: Attack,
    thresholds: list[float],
    ev0: np.ndarray,
    ev1: np.ndarray,
    *,
    shares: Sequence[float],
    alpha: float,
    delta: float,
    runs: int,
    seed: int,
    executor: str,
    started: float,
    candidates: list[dict[str, Any]],
) -> AuditResult:
    """The audit's result: the chosen attack's thresholds evaluated on the evaluation split and judged.

    Args:
        claim: The claim.
        attack: The chosen attack.
        thresholds: Its thresholds, one per test.
        ev0: Its scores of the evaluation runs on D.
        ev1: Its scores of the evaluation runs on D′.
        shares: Test i's share of α.
        alpha: The audit's α.
        delta: Where ε is read.
        runs: The runs per dataset.
        seed: The audit's seed.
        executor: The executor's description.
        started: ``time.perf_counter()`` at the start.
        candidates: A row per candidate tried.

    Returns:
        The result, judged against the claim with the evaluation ROC's shape.
    """
    estimates = tuple(estimate(ev0, ev1, t, share, delta) for t, share in zip(thresholds, shares, strict=True))
    roc = roc_points(ev0, ev1) if np.all(np.isfinite(ev0)) and np.all(np.isfinite(ev1)) else None
    judgement = judge(claim, estimates, delta=delta, alpha=alpha, n0=ev0.size, n1=ev1.size, roc=roc, runs=runs)
    return AuditResult(
        claim=claim,
        estimates=estimates,
        judgement=judgement,
        attack=attack.name,
        runs=runs,
        seed=int(seed),
        executor=executor,
        seconds=time.perf_counter() - started,
        alpha=alpha,
        candidates=tuple(candidates),
    )


def check_audit_options(
    claim: object, alpha: float, objective: Objective | str | None, delta: float | None
) -> tuple[float, tuple[str, ...], float]:
    """The options every audit checks.

    Args:
        claim: The claim.
        alpha: The audit's α.
        objective: One threshold's objective, or None for the default tests.
        delta: Where ε is read (None: the claim's default).

    Returns:
        α, the objectives to choose thresholds by, and δ.

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: If α is not a probability, ``objective`` is unknown or δ is not in [0, 1).
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    alpha = check_probability("alpha", alpha)
    objectives = DEFAULT_OBJECTIVES if objective is None else (check_choice("objective", objective, AUDIT_OBJECTIVES),)
    delta = claim.default_delta() if delta is None else float(delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    return alpha, objectives, delta
