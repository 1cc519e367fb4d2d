"""The audit: run a release function on neighbouring datasets, attack, bound, and give a verdict.

``audit(release, dataset0, dataset1, claim)`` runs ``release`` ``runs`` times on each dataset
(vectorised, through an executor, seeds split with ``SeedSequence`` so the result does not depend
on the executor), splits the outputs into

* a *training* split, used only to fit a learned attack (absent for white-box attacks),
* a *selection* split, used only to choose the threshold,
* an *evaluation* split, used only for the Clopper–Pearson bounds,

and reports the ε lower bound at δ, the μ lower bound (GDP reading) and a point estimate. The
verdict is ``violation`` when, at confidence 1 − α, the lower bound exceeds what the claim allows
(ε at δ; and μ, for claims that imply μ-GDP), else ``consistent``. With several neighbouring pairs,
:func:`audit_pairs` splits α evenly over the pairs (a union bound) and keeps the strongest.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accountant.gdp import gdp_epsilon
from accountant.validation import check_choice, check_count, check_probability

from .attacks import Attack, make_attack
from .claims import Claim
from .estimators import OBJECTIVES, AuditEstimate, estimate, select_threshold
from .executors import Executor, run_pair

__all__ = ["VERDICTS", "AuditResult", "PairsResult", "audit", "audit_outputs", "audit_pairs"]

VERDICTS: tuple[str, ...] = ("violation", "consistent")


@dataclass(frozen=True)
class AuditResult:
    """One audit of one neighbouring pair: the bounds, the claim's allowance and the verdict."""

    claim: Claim
    estimates: tuple[AuditEstimate, ...]
    claimed_epsilon: float
    claimed_mu: float | None
    verdict: str
    attack: str
    runs: int
    seed: int
    executor: str
    seconds: float

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
    def epsilon_gdp_reading(self) -> float:
        """ε at the audit's δ of the μ lower bound read as μ-GDP (valid against claims that imply GDP)."""
        mu = self.mu_lower
        return 0.0 if mu <= 0.0 else gdp_epsilon(min(mu, 1e3), self.delta if self.delta > 0 else 1e-5)

    def to_dict(self) -> dict[str, Any]:
        """Every number of the audit. Deterministic: the executor and the wall time are left out,
        so the same seed gives the same dictionary under every executor and worker count."""
        return {
            "claim": self.claim.to_dict(),
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_mu": self.claimed_mu,
            "verdict": self.verdict,
            "attack": self.attack,
            "runs": self.runs,
            "seed": self.seed,
            "delta": self.delta,
            "epsilon_lower": self.epsilon_lower,
            "mu_lower": self.mu_lower,
            "mu_estimate": self.estimate.mu_estimate,
            "mu_interval": list(self.estimate.mu_interval),
            "epsilon_gdp_reading": self.epsilon_gdp_reading,
            "tests": [e.to_dict() for e in self.estimates],
        }


def _split(n: int, fractions: tuple[float, ...]) -> list[slice]:
    cuts = np.floor(np.cumsum((0.0,) + fractions) * n).astype(int)
    cuts[-1] = n
    return [slice(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


def audit(
    release: Callable[..., np.ndarray],
    dataset0: Any,
    dataset1: Any,
    claim: Claim,
    *,
    attack: Attack | str = "logistic",
    runs: int = 20_000,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float | None = None,
    objective: str | None = None,
    executor: Executor | None = None,
    chunk_size: int = 10_000,
    progress: Callable[[int], None] | None = None,
) -> AuditResult:
    """Audit ``release`` on one neighbouring pair against ``claim``.

    ``runs`` independent runs per dataset. ``attack`` is an :class:`~audits.attacks.Attack` or a
    name for :func:`~audits.attacks.make_attack`. Splits: a white-box attack selects its threshold
    on 20% of the runs and is bounded on 80%; a learned one is fitted on a third, selects on a
    sixth and is bounded on half. ``delta`` is where ε is bounded (default: the claim's δ for dp claims, else 1e-5).
    ``objective`` ("eer", "mu" or "epsilon", see :func:`~audits.estimators.select_threshold`) is
    how the threshold is chosen on the selection split. By default all three are used: one
    threshold each, each test bounded at α/3 (a union bound), the largest bounds reported — the
    equal-error threshold is the robust one for symmetric trade-offs, the μ-maximising one finds
    asymmetric ones, the ε-maximising one sits in a tail; any of them may be the one that exposes a bug.
    """
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    runs = check_count("runs", runs)
    alpha = check_probability("alpha", alpha)
    delta = claim.default_delta() if delta is None else float(delta)
    attack = make_attack(attack) if isinstance(attack, str) else attack
    if not isinstance(attack, Attack):
        raise ValueError(f"attack must be an audits.Attack or an attack name, got {attack!r}")
    if objective is not None:
        check_choice("objective", objective, OBJECTIVES)
    if runs < 6:
        raise ValueError(f"runs must be >= 6 (train, selection and evaluation splits), got {runs}")
    started = time.perf_counter()
    out0, out1 = run_pair(release, dataset0, dataset1, runs, seed, executor=executor, chunk_size=chunk_size,
                          progress=progress)
    return audit_outputs(out0, out1, claim, attack=attack, seed=seed, alpha=alpha, delta=delta,
                         objective=objective, executor="in-process" if executor is None else executor.name,
                         started=started)


def audit_outputs(
    out0: np.ndarray,
    out1: np.ndarray,
    claim: Claim,
    *,
    attack: Attack | str = "logistic",
    seed: int = 0,
    alpha: float = 0.05,
    delta: float | None = None,
    objective: str | None = None,
    executor: str = "in-process",
    started: float | None = None,
) -> AuditResult:
    """The second half of :func:`audit`: split, attack, bound and judge outputs already computed
    (``out0`` on D, ``out1`` on D′, one row per run, as many rows each). For callers whose claim
    depends on the runs themselves (e.g. the RL audits, whose allowance is the exact μ of the
    releases the runs made)."""
    if not isinstance(claim, Claim):
        raise ValueError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    out0, out1 = np.asarray(out0), np.asarray(out1)
    if out0.shape[0] != out1.shape[0]:
        raise ValueError(f"out0 and out1 must hold as many runs, got {out0.shape[0]} and {out1.shape[0]}")
    runs = check_count("runs", out0.shape[0])
    if runs < 6:
        raise ValueError(f"runs must be >= 6 (train, selection and evaluation splits), got {runs}")
    alpha = check_probability("alpha", alpha)
    delta = claim.default_delta() if delta is None else float(delta)
    attack = make_attack(attack) if isinstance(attack, str) else attack
    if not isinstance(attack, Attack):
        raise ValueError(f"attack must be an audits.Attack or an attack name, got {attack!r}")
    objectives = OBJECTIVES if objective is None else (check_choice("objective", objective, OBJECTIVES),)
    # The threshold needs far fewer runs than a tight bound: most runs go to the evaluation split.
    fractions = (1 / 3, 1 / 6, 1 / 2) if attack.needs_fit else (0.0, 0.2, 0.8)
    started = time.perf_counter() if started is None else started
    train, select, evaluate = _split(runs, fractions)
    if attack.needs_fit:
        attack.fit(out0[train], out1[train])
    sel0, sel1 = attack.score(out0[select]), attack.score(out1[select])
    ev0, ev1 = attack.score(out0[evaluate]), attack.score(out1[evaluate])
    share = alpha / len(objectives)
    estimates = tuple(
        estimate(ev0, ev1, select_threshold(sel0, sel1, obj, delta, share), share, delta) for obj in objectives
    )
    claimed_eps = claim.epsilon_at(delta)
    claimed_mu = claim.mu
    eps_low = max(e.epsilon_lower for e in estimates)
    mu_low = max(e.mu_lower for e in estimates)
    violated = eps_low > claimed_eps or (claimed_mu is not None and mu_low > claimed_mu)
    return AuditResult(
        claim=claim,
        estimates=estimates,
        claimed_epsilon=claimed_eps,
        claimed_mu=claimed_mu,
        verdict="violation" if violated else "consistent",
        attack=attack.name,
        runs=runs,
        seed=int(seed),
        executor=executor,
        seconds=time.perf_counter() - started,
    )


@dataclass(frozen=True)
class PairsResult:
    """Audits of several neighbouring pairs at α/len(pairs) each; the verdict is the worst one."""

    results: tuple[AuditResult, ...]
    alpha: float

    @property
    def strongest(self) -> AuditResult:
        """The pair with the largest μ lower bound (then ε lower bound)."""
        return max(self.results, key=lambda r: (r.mu_lower, r.epsilon_lower))

    @property
    def verdict(self) -> str:
        return "violation" if any(r.verdict == "violation" for r in self.results) else "consistent"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "alpha": self.alpha,
            "strongest": self.results.index(self.strongest),
            "pairs": [r.to_dict() for r in self.results],
        }


def audit_pairs(
    release: Callable[..., np.ndarray],
    pairs: Sequence[tuple[Any, Any]],
    claim: Claim,
    *,
    alpha: float = 0.05,
    attack: Attack | str | Callable[[], Attack] = "logistic",
    seed: int = 0,
    **options: Any,
) -> PairsResult:
    """Audit every pair in ``pairs`` at confidence 1 − α/len(pairs) each (a union bound).

    ``attack`` may be a factory (called once per pair) so that learned attacks are fitted afresh;
    a name makes a new attack per pair. Pair i uses seed ``seed + i``.
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must hold at least one (dataset0, dataset1) pair")
    alpha = check_probability("alpha", alpha)
    results = []
    for i, (d0, d1) in enumerate(pairs):
        att = attack() if callable(attack) and not isinstance(attack, Attack) else attack
        if isinstance(att, Attack) and att.needs_fit and not callable(attack):
            raise ValueError("pass a learned attack by name or as a factory: one fitted instance cannot serve every pair")
        results.append(audit(release, d0, d1, claim, attack=att, seed=seed + i, alpha=alpha / len(pairs), **options))
    return PairsResult(tuple(results), alpha)
