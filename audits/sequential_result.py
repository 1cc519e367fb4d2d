"""The result of a sequential audit (:mod:`dpkit.audits.sequential`): its looks — the evidence after each batch — and
:class:`SequentialResult`, the verdict with the runs it used of its budget, the e-values and the final test."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .claims import Claim, ClaimUnit
from .selection import AuditResult
from .sequential_plan import SEQUENTIAL_SHARE, SequentialPlan
from .shape_estimate import EpsilonEstimate, gdp_reading
from .summary import Headline
from .verdicts import Verdict

__all__ = ["Look", "SequentialResult"]


@dataclass(frozen=True)
class Look:
    """The evidence after one batch: runs used per dataset, the claim's e-value, the bound certified so far."""

    batch: int
    phase: str
    runs_used: int
    e_value: float
    bound: float
    attack: str | None

    def to_dict(self) -> dict[str, Any]:
        """The look as plain data (JSON-ready).

        Returns:
            Its batch and phase, the runs used so far, the e-value, the bound and the attack.
        """
        return {
            "batch": self.batch,
            "phase": self.phase,
            "runs_used": self.runs_used,
            "e_value": self.e_value,
            "bound": self.bound,
            "attack": self.attack,
        }


@dataclass(frozen=True, repr=False)
class SequentialResult(Headline):
    """A sequential audit of one neighbouring pair: the verdict, the runs it used of its budget, the evidence (an
    :class:`~dpkit.audits.summary.AuditSummary`).

    ``final`` is the fixed audit's result on the final evaluation split when the audit reached its budget
    (``None`` when it stopped early with a violation). ``bound`` is the step-down bound of the e-processes in the
    claim's unit (0 when nothing was certified).
    """

    claim: Claim
    verdict: Verdict
    stopped_early: bool
    plan: SequentialPlan
    runs_used: int
    alpha: float
    delta: float
    e_value: float
    e_value_max: float
    bound: float
    final: AuditResult | None
    looks: tuple[Look, ...]
    attack: str
    seed: int
    executor: str
    seconds: float
    mu_estimate: float | None = None
    rates: tuple[float, float] | None = None
    candidates: tuple[dict[str, Any], ...] = field(default=())
    target: str | None = None

    @property
    def runs(self) -> int:
        """The budget: the most runs per dataset this audit could have used."""
        return self.plan.budget

    @property
    def shape_estimate(self) -> EpsilonEstimate:
        """The final test's estimate of ε from its ROC's shape; none when the audit stopped before it."""
        if self.final is not None:
            return self.final.shape_estimate
        note = "stopped before its final test: no shape fitted"
        return EpsilonEstimate(None, None, None, self.delta, note)

    @property
    def epsilon_estimate(self) -> float | None:
        """The final test's estimate of ε (:attr:`shape_estimate`; ``None`` when the audit stopped before it)."""
        return self.shape_estimate.value

    @property
    def positions(self) -> None:
        return None

    @property
    def alpha_sequential(self) -> float:
        return self.alpha * SEQUENTIAL_SHARE

    @property
    def threshold(self) -> float:
        """The e-value at which the audit stops: 1/(α·:data:`SEQUENTIAL_SHARE`)."""
        return 1.0 / self.alpha_sequential

    def _unit_bound(self, unit: ClaimUnit, final: float | None) -> float:
        mine = self.bound if self.claim.unit == unit else 0.0
        return max(mine, final if final is not None else 0.0)

    @property
    def epsilon_lower(self) -> float:
        """The ε lower bound at :attr:`delta` (confidence 1 − α; 0 when none was certified)."""
        return self._unit_bound(ClaimUnit.EPSILON, None if self.final is None else self.final.epsilon_lower)

    @property
    def mu_lower(self) -> float:
        """The μ lower bound (confidence 1 − α; 0 when none was certified)."""
        return self._unit_bound(ClaimUnit.MU, None if self.final is None else self.final.mu_lower)

    @property
    def claimed_epsilon(self) -> float:
        return self.claim.epsilon_at(self.delta)

    @property
    def claimed_mu(self) -> float | None:
        return self.claim.mu

    @property
    def power(self) -> float | None:
        """The power of the final test (``None`` when the audit stopped before it)."""
        return None if self.final is None else self.final.power

    @property
    def power_ratio(self) -> float | None:
        return None if self.final is None else self.final.power_ratio

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data (JSON-ready, deterministic).

        Returns:
            The keys of :meth:`AuditResult.to_dict` (``runs``: the budget) and the sequential ones: ``runs_used``,
            ``stopped_early``, ``fixed_runs`` and ``evidence`` (e-values, α shares, the looks).
        """
        if self.final is not None:
            out = self.final.to_dict()
        else:
            est = self.mu_estimate
            out = {
                "verdict": self.verdict,
                "claim": self.claim.to_dict(),
                "claimed_epsilon": self.claimed_epsilon,
                "claimed_mu": self.claimed_mu,
                "delta": self.delta,
                "delta_lower": None,
                "mu_estimate": est,
                "mu_interval": None,
                "power": None,
                "power_ratio": None,
                "confidence": 1.0 - self.alpha,
                "seed": self.seed,
                "attack": self.attack,
                "fpr": None if self.rates is None else self.rates[0],
                "fnr": None if self.rates is None else self.rates[1],
                "fpr_upper": None,
                "fnr_upper": None,
                "threshold": None,
                "epsilon_gdp_reading": gdp_reading(self.mu_lower, self.claim, self.delta),
                **self.shape_estimate.to_dict(),
                "candidates": [dict(c) for c in self.candidates],
                "tests": [],
            }
        out.update(
            verdict=self.verdict,
            epsilon_lower=self.epsilon_lower,
            mu_lower=self.mu_lower,
            runs=self.runs,
            runs_used=self.runs_used,
            fixed_runs=self.plan.runs,
            stopped_early=self.stopped_early,
            sequential=True,
            evidence={
                "e_value": self.e_value,
                "e_value_max": self.e_value_max,
                "threshold": self.threshold,
                "alpha_sequential": self.alpha_sequential,
                "alpha_final": self.alpha - self.alpha_sequential,
                "bound": self.bound,
                "unit": self.claim.unit,
                "plan": self.plan.to_dict(),
                "looks": [look.to_dict() for look in self.looks],
            },
        )
        return out
