"""Sequential, anytime-valid RL audits: every position of the changed user audited at once, stopping at the first
violation (issue 31; the test is :mod:`dpkit.audits.sequential`'s, derived in docs/sequential.md).

Each position is a neighbouring pair with its own allowance, fixed before any run: the μ the claim allows the
worst-placed user (dpkit's σ_tight of the registered declaration) × √share of the position
(:func:`~dpkit.audits.rl.position_claim`) — the fixed audit caps the pair's realised difference at this too, but
reads the realised difference from its runs; a sequential test may not (its claim must not depend on what it
tests), so it takes the cap, which is never smaller: never a false alarm, at most a little power lost where the
canaries reach less than the whole declared μ. The positions take turns a piece of a batch at a time, each at its
share of α (a union bound), and all stop at the first crossing: a violation at any position is the audit's verdict.
Otherwise each ends at its budget with the fixed audit's final test (same three verdicts).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_member, check_probability
from dpkit.algorithms.executors import Executor

from ..claims import Claim
from ..sequential import SEQUENTIAL_SHARE, Look, SequentialResult, audit_sources_sequential, release_source
from ..summary import Headline
from ..verdicts import Verdict
from .candidates import RlAttack, rl_attacks
from .explain import rl_sequential_diagnosis, rl_sequential_reason
from .fixed import PositionClaim, position_claim
from .rows import RowLayout
from .setting import RlSetting, neighbouring_datasets, probe_plan, rl_release, validate_runs

__all__ = ["RlSequentialResult", "SequentialPosition", "audit_positions_sequential"]


@dataclass(frozen=True)
class SequentialPosition:
    """One position of a sequential RL audit: its name, share, the allowance it was judged against, the declared μ
    there, the runs per dataset it used, its result (``None`` when another position's violation stopped it
    before it concluded) and its looks (the evidence after every piece of a batch, a stopped position's too)."""

    position: str | int
    share: float
    mu_allowed: float
    declared_mu: float
    runs_used: int
    result: SequentialResult | None
    looks: tuple[Look, ...] = ()

    @property
    def verdict(self) -> str:
        return "stopped" if self.result is None else self.result.verdict

    def to_dict(self) -> dict[str, Any]:
        """The position's audit as plain data (JSON-ready).

        Returns:
            Its name, share, allowance, declared μ, runs used, verdict, bounds and evidence.
        """
        r = self.result
        return {
            "position": self.position,
            "share": self.share,
            "mu_allowed": self.mu_allowed,
            "declared_mu": self.declared_mu,
            "runs_used": self.runs_used,
            "verdict": self.verdict,
            "mu_lower": None if r is None else r.mu_lower,
            "epsilon_lower": None if r is None else r.epsilon_lower,
            "e_value": None if r is None else r.e_value,
            "stopped_early": None if r is None else r.stopped_early,
            "attack": None if r is None else r.attack,
            "looks": [look.to_dict() for look in self.looks],
        }


@dataclass(frozen=True, repr=False)
class RlSequentialResult(Headline):
    """A sequential audit of every position: ``verdict`` is ``violation`` as soon as one position's is;
    ``consistent`` only if every position concluded consistent; ``inconclusive`` otherwise. ``runs`` is the fixed
    audit's runs per dataset and position it stands in for, ``budget`` the most a position may use, ``runs_used``
    what all positions used together (per dataset). ``claim`` is what every position's allowance is read from (the
    σ used and the σ the claim needs, the claim's μ and the declared μ at the worst-placed user: the same at every
    position), ``seed`` the audit's seed."""

    setting: RlSetting
    positions: tuple[SequentialPosition, ...]
    runs: int
    budget: int
    alpha: float
    seconds: float
    claim: PositionClaim
    seed: int

    @property
    def threshold(self) -> float:
        """The e-value at which a position's audit stops with a violation: 1/(α/P · :data:`SEQUENTIAL_SHARE`) for P
        positions (2/α for one)."""
        return len(self.positions) / (self.alpha * SEQUENTIAL_SHARE)

    @property
    def verdict(self) -> Verdict:
        verdicts = [p.verdict for p in self.positions]
        if Verdict.VIOLATION in verdicts:
            return Verdict.VIOLATION
        return Verdict.CONSISTENT if all(v == Verdict.CONSISTENT for v in verdicts) else Verdict.INCONCLUSIVE

    @property
    def runs_used(self) -> int:
        return sum(p.runs_used for p in self.positions)

    @property
    def power(self) -> float | None:
        """The headline position's power (``None`` when it stopped before its final test)."""
        result = self.worst.result
        return None if result is None else result.power

    @property
    def epsilon_estimate(self) -> float | None:
        """The headline position's estimate of ε (``None`` without one)."""
        result = self.worst.result
        return None if result is None else result.epsilon_estimate

    @property
    def fixed_runs(self) -> int:
        """The runs per dataset the fixed audit of every position spends."""
        return self.runs * len(self.positions)

    @property
    def stopped_early(self) -> bool:
        return any(p.result is not None and p.result.stopped_early for p in self.positions)

    @property
    def worst(self) -> SequentialPosition:
        """The headline position: one whose verdict is the audit's — a violating one first, then an inconclusive
        one — and among those the largest μ lower bound over the allowance (a stopped position never)."""
        rank = {"consistent": 0, "inconclusive": 1, "violation": 2}

        def weight(p: SequentialPosition) -> tuple[int, float]:
            if p.result is None:
                return (-1, -1.0)
            ratio = p.result.mu_lower / p.mu_allowed if p.mu_allowed > 0 else math.inf * (p.result.mu_lower > 0)
            return (rank[p.verdict], ratio)

        return max(self.positions, key=weight)

    def strongest(self, bound: str) -> SequentialPosition:
        """The concluded position with the largest ``bound``.

        Args:
            bound: ``"mu_lower"`` or ``"epsilon_lower"``.

        Returns:
            That position.
        """
        concluded = [p for p in self.positions if p.result is not None]
        return max(concluded, key=lambda p: float(getattr(p.result, bound)))

    @property
    def mu_lower(self) -> float:
        """The headline position's μ lower bound (at its share of α)."""
        result = self.worst.result
        return 0.0 if result is None else result.mu_lower

    @property
    def epsilon_lower(self) -> float:
        """The headline position's ε lower bound."""
        result = self.worst.result
        return 0.0 if result is None else result.epsilon_lower

    def to_dict(self) -> dict[str, Any]:
        """Every number (deterministic: no wall time).

        Returns:
            The setting, the claim's σ and μ as the fixed audit reports them (``sigmas``, ``sigmas_claim``,
            ``claimed_epsilon``, ``claim_mu``, ``exact_mu``), the verdict and bounds (the headline position's,
            ``worst_position``, with ``mu_lower_largest`` and ``epsilon_lower_largest``), the runs (``runs``,
            ``budget``, ``fixed_runs``, ``runs_used``), the e-value ``threshold`` and each position's evidence.
        """
        s, pc = self.setting, self.claim
        mu, eps = self.strongest("mu_lower"), self.strongest("epsilon_lower")
        return {
            "algorithm": s.algorithm,
            "observer": s.observer,
            "sigma": dict(s.sigma) if isinstance(s.sigma, tuple) else s.sigma,
            "sigmas": dict(pc.sigmas),
            "sigmas_claim": dict(pc.sigmas_claim),
            "epsilon": s.epsilon,
            "delta": s.delta,
            "claimed_epsilon": float(pc.declaration.epsilon),
            "claim_mu": pc.claim_mu,
            "exact_mu": pc.exact_mu,
            "episodes": s.episodes,
            "relation": s.relation,
            "seed": self.seed,
            "sequential": True,
            "verdict": self.verdict,
            "runs": self.runs,
            "budget": self.budget,
            "fixed_runs": self.fixed_runs,
            "runs_used": self.runs_used,
            "stopped_early": self.stopped_early,
            "mu_lower": self.mu_lower,
            "epsilon_lower": self.epsilon_lower,
            "mu_allowed": self.worst.mu_allowed,
            "mu_lower_largest": None if mu.result is None else mu.result.mu_lower,
            "mu_lower_largest_position": mu.position,
            "epsilon_lower_largest": None if eps.result is None else eps.result.epsilon_lower,
            "epsilon_lower_largest_position": eps.position,
            "alpha": self.alpha,
            "confidence": 1.0 - self.alpha,
            "threshold": self.threshold,
            "worst_position": self.worst.position,
            "positions": [p.to_dict() for p in self.positions],
            # why the verdict is what it is, and where the evidence points (as the fixed audit's)
            "reason": rl_sequential_reason(self),
            "diagnosis": rl_sequential_diagnosis(self),
        }


def audit_positions_sequential(
    setting: RlSetting,
    *,
    positions_to_probe: Sequence[str | int] | None = None,
    runs: int = 4000,
    seed: int = 0,
    attack: RlAttack | str = "auto",
    alpha: float = 0.05,
    executor: Executor | None = None,
    chunk_size: int = 250,
    progress: Callable[[int], None] | None = None,
    on_look: Callable[[Look], None] | None = None,
) -> RlSequentialResult:
    """The sequential audit of ``setting`` at every position, standing in for :func:`~dpkit.audits.rl.audit_positions`.

    Args:
        setting: The audit's setting.
        positions_to_probe: The positions; None: every position of :func:`~dpkit.audits.rl.fixed`.
        runs: The fixed audit's runs per dataset and position (each position's budget is at most 1.3× that).
        seed: The audit's seed.
        attack: As for :func:`~dpkit.audits.rl.audit_setting`.
        alpha: The error probability of the whole audit (each position at its share).
        executor: Where the runs are made (None: in-process).
        chunk_size: Runs per chunk handed to the executor.
        progress: Called with the runs done.
        on_look: Called after every piece of a batch with the evidence so far.

    Returns:
        The sequential audit of the positions.

    Raises:
        ValueError: If a position is unknown, or ``runs`` or another option is invalid.
    """
    probes = probe_plan(setting, positions_to_probe, seed)
    alpha = check_probability("alpha", alpha)
    runs = validate_runs(runs)
    attack = check_member("attack", attack, RlAttack)
    started = time.perf_counter()
    settings, seeds = [p for p, _ in probes], [child for _, child in probes]
    names = [s.position for s in settings]
    claims_of = [position_claim(s) for s in settings]  # fixed before any run
    sources, claims, attacks = [], [], []
    for s, pc, child in zip(settings, claims_of, seeds, strict=True):
        d0, d1 = neighbouring_datasets(s)
        first = rl_release(d0, np.random.default_rng(child), 1)  # the columns of a run (no audit data)
        sources.append(
            release_source(rl_release, d0, d1, seed=child, executor=executor, chunk_size=chunk_size, progress=progress)
        )
        claims.append(Claim.gdp(pc.cap) if pc.cap > 0 else Claim.dp(0.0, s.delta))
        attacks.append(rl_attacks(s, attack, layout=RowLayout.of(first, s.white_box), runs=runs))
    results, used, budgets, looks = audit_sources_sequential(
        sources,
        claims,
        attacks=attacks,
        runs=runs,
        seeds=seeds,
        alpha=alpha,
        delta=setting.delta,
        executor="in-process" if executor is None else executor.name,
        on_look=on_look,
    )
    rows = tuple(
        SequentialPosition(
            position=name,
            share=pc.share,
            mu_allowed=pc.cap,
            declared_mu=pc.exact_mu * math.sqrt(pc.share),
            runs_used=u,
            result=r,
            looks=seen,
        )
        for name, pc, r, u, seen in zip(names, claims_of, results, used, looks, strict=True)
    )
    return RlSequentialResult(
        setting=setting,
        positions=rows,
        runs=runs,
        budget=max(budgets),
        alpha=alpha,
        seconds=time.perf_counter() - started,
        claim=claims_of[0],
        seed=seed,
    )


#: Names retired by a rename, each with its new name: they still resolve, with a DeprecationWarning, for a release.
_RENAMED = {"RlSequentialAudit": "RlSequentialResult"}


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        import warnings

        warnings.warn(f"{name} is deprecated: it is now {_RENAMED[name]}", DeprecationWarning, 2)
        return globals()[_RENAMED[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
