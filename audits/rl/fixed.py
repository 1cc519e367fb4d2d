"""Audits of whole private RL algorithms: neighbouring user sequences, observers, exact white-box tests.

A setting (:class:`RlSetting`) fixes an algorithm, its environment, K users and the position of the changed user;
D and D′ differ in that one user only. Each audited algorithm registers its world and observers (one per privacy
model); this module builds D and D′, hands every run to the observer with the claim's σ and the declared Δ of
every release, attacks the rows (the exact white-box log-likelihood ratio, or a learned attack) and reads them
against what the claim allows the pair (:class:`RlAuditResult`). :func:`audit_positions` audits several positions
at shares of α; :func:`audit_registered_algorithm` a registered algorithm, :func:`register_agent` a user's own.
How the runs are read and judged: see docs/explanation/rl-audits.md ("How an RL audit reads its runs").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpkit.accountant.declarations import PrivacyDeclaration, informative_delta
from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.sensitivity import Relation
from dpkit.accountant.validation import check_choice, check_member, check_probability
from dpkit.algorithms import registry
from dpkit.algorithms.executors import Executor, run_pair, spawn_seeds
from dpkit.algorithms.spec import AlgorithmSpec

from ..claims import Claim
from ..engine import AuditResult, audit_outputs
from ..estimators import RocBand, mu_from_rates, roc_band
from ..summary import Headline, HeldAudit
from ..verdicts import Verdict
from .candidates import AUTO_SPLITS, RlAttack, rl_attacks
from .explain import rl_diagnosis, rl_reason
from .plans import (
    PlanChoice,
    choose_plan_world,
    judge_view,
    probe_members,
    probe_runs,
    reads_plans,
)
from .rows import RowLayout
from .setting import (
    RlSetting,
    audit_hook,
    default_setting,
    implementation_declaration,
    neighbouring_datasets,
    positions,
    probe_plan,
    registered_declaration,
    rl_release,
    setting_claim_sigmas,
    validate_runs,
)

__all__ = [
    "RlAuditResult",
    "RlPositionsResult",
    "audit_setting",
    "audit_positions",
    "audit_plan_probe",
    "PLAN_PROBE_CHILD",
    "audit_registered_algorithm",
    "register_agent",
    "declared_mu",
]

#: Thresholds of the reported ROC (quantiles of the evaluation scores of D and D′ together).
ROC_POINTS = 101


# What a position is judged against (the attacks on the rows: dpkit.audits.rl.candidates)


@dataclass(frozen=True)
class PositionClaim:
    """What an audit of one position is judged against, fixed before any run: the implementation's declaration and
    σ, the σ the claim needs (dpkit's σ_tight of the *registered* declaration), the claim's μ there, the declared μ
    at the σ used, and the position's share of the declared mechanisms."""

    declaration: PrivacyDeclaration
    sigmas: Mapping[str, float]
    sigmas_claim: Mapping[str, float]
    claim_mu: float
    exact_mu: float
    share: float

    @property
    def cap(self) -> float:
        """The most the claim allows a pair at this position: the claim's μ at the worst-placed user × √share."""
        return self.claim_mu * math.sqrt(self.share)


def position_claim(setting: RlSetting) -> PositionClaim:
    """The :class:`PositionClaim` of ``setting`` (its position), the σ of both declarations checked.

    Args:
        setting: The audit's setting.

    Returns:
        What the position's audit is judged against, fixed before any run.
    """
    declaration, sigmas = implementation_declaration(setting)
    registered = registered_declaration(setting)
    for decl in (declaration, registered):  # the registered Δ too: it cannot be declared away
        _check_audit_sigmas(decl, sigmas, setting.relation)
    claim_sigmas = setting_claim_sigmas(setting)
    return PositionClaim(
        declaration=declaration,
        sigmas=sigmas,
        sigmas_claim=claim_sigmas,
        claim_mu=declared_mu(registered, claim_sigmas, setting.relation),
        exact_mu=declared_mu(declaration, sigmas, setting.relation),
        share=setting.share,
    )


# The audit


@dataclass(frozen=True, repr=False)
class RlAuditResult(HeldAudit):
    """One audit of one algorithm: the claim, the exact accounting, the pair, the bounds, the verdicts."""

    setting: RlSetting
    attack: str
    sigmas: Mapping[str, float]
    sigmas_claim: Mapping[str, float]
    claimed_epsilon: float
    exact_mu: float
    exact_epsilon: float
    pair_mu: float
    pair_mu_allowed: float
    audit: AuditResult
    claim_verdict: str
    #: the attack's ROC on the evaluation split with its simultaneous Clopper–Pearson band at 1 − α
    roc: RocBand
    paper_epsilon_closed_form: float | None
    seconds: float
    #: the informative δ (min(1e-5, 1/K) of the registered declaration), the claim's μ (the declared releases at
    #: the σ the claim needs) and its ε there, and the exact ε of the declared releases at the σ used there
    delta_informative: float = 1e-5
    claim_mu: float = math.nan
    claimed_epsilon_at_informative_delta: float = math.nan
    exact_epsilon_at_informative_delta: float = math.nan
    #: the share of the declared mechanisms that hold the changed user at this position (1: the worst-placed user)
    position_share: float = 1.0
    #: α of this audit (one position's share of the whole audit's α when several positions are probed)
    alpha: float = 0.05
    #: why the verdict is what it is where the numbers alone do not say it (a black-box view without power)
    note: str | None = None
    #: a plan probe's choice of world (:class:`~dpkit.audits.rl.plans.PlanChoice`), ``None`` for the other pairs
    probe: PlanChoice | None = None

    @property
    def epsilon_lower(self) -> float:
        return self.audit.epsilon_lower

    @property
    def mu_lower(self) -> float:
        return self.audit.mu_lower

    @property
    def verdict(self) -> str:
        return self.audit.verdict

    @property
    def declared_mu_at_position(self) -> float:
        """The declared μ of the releases that hold the changed user at this position, at the σ used: the ledger's
        μ × sqrt(share) (the ledger's μ at the worst-placed user)."""
        return self.exact_mu * math.sqrt(self.position_share)

    @property
    def position_name(self) -> str:
        """The position's name (``first``, ``k=2``…), or ``plans, WORLD`` for a plan probe's pair."""
        return str(self.setting.position) if self.probe is None else f"plans, {self.setting.world}"

    @property
    def reach(self) -> float:
        """pair μ / declared μ at this position: the share of the declared sensitivity the canaries realise."""
        declared = self.declared_mu_at_position
        return self.pair_mu / declared if declared > 0 else 0.0

    @property
    def efficiency(self) -> float:
        """μ lower bound / pair μ: how much of the pair's exact μ the audit certifies."""
        return self.mu_lower / self.pair_mu if self.pair_mu > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Every number (deterministic: no wall time); the keys: docs/explanation/rl-audits.md ("An RL audit's keys").

        Returns:
            The result as plain data; ``roc`` is the attack's ROC on the evaluation split with its band
            (:meth:`~dpkit.audits.estimators.RocBand.to_dict`).
        """
        s = self.setting
        common = {k: v for k, v in self.audit.to_dict().items() if k not in ("tests", "candidates", "claimed_epsilon")}
        return common | {
            "algorithm": s.algorithm,
            "observer": s.observer,
            "attack": self.attack,
            "relation": s.relation,
            "position": s.position,
            "position_index": s.index,
            "position_share": self.position_share,
            "declared_mu_at_position": self.declared_mu_at_position,
            "episodes": s.episodes,
            "runs": self.audit.runs,
            "seed": self.audit.seed,
            "sigma": dict(s.sigma) if isinstance(s.sigma, tuple) else s.sigma,
            "sigmas": dict(self.sigmas),
            "sigmas_claim": dict(self.sigmas_claim),
            "epsilon": s.epsilon,
            "delta": s.delta,
            "claimed_epsilon": self.claimed_epsilon,
            "delta_informative": self.delta_informative,
            "claimed_epsilon_at_informative_delta": self.claimed_epsilon_at_informative_delta,
            "claim_mu": self.claim_mu,
            "exact_mu": self.exact_mu,
            "exact_epsilon": self.exact_epsilon,
            "exact_epsilon_at_informative_delta": self.exact_epsilon_at_informative_delta,
            "pair_mu": self.pair_mu,
            "pair_mu_allowed": self.pair_mu_allowed,
            "mu_allowed": self.pair_mu_allowed,
            "reach": self.reach,
            "epsilon_lower": self.epsilon_lower,
            "mu_lower": self.mu_lower,
            "mu_estimate": self.audit.estimate.mu_estimate,
            "efficiency": self.efficiency,
            "verdict": self.verdict,
            "claim_verdict": self.claim_verdict,
            "paper_epsilon_closed_form": self.paper_epsilon_closed_form,
            "note": self.note,
            "probe": None if self.probe is None else self.probe.to_dict(),
            "setting": s.to_dict(),
            "audit": self.audit.to_dict(),
            "roc": self.roc.to_dict(),
        }


def _equal_error_mu(mus: np.ndarray) -> float:
    """The exact μ of the pair at its equal-error point: runs whose releases are μ_i-GDP (μ_i known
    from the run) mix into a trade-off whose equal-error rate is mean Φ(−μ_i/2); the GDP μ through
    that point (μ itself when every run has the same μ)."""
    from scipy import special

    p = float(np.mean(special.ndtr(-0.5 * np.asarray(mus, dtype=float))))
    return mu_from_rates(p, p) if p < 0.5 else 0.0


def declared_mu(declaration: PrivacyDeclaration, sigmas: Mapping[str, float], relation: Relation) -> float:
    """μ of the declared releases at ``sigmas`` (exact GDP composition, the ledger's).

    Args:
        declaration: The implementation's privacy declaration.
        sigmas: One σ, or one per step, per release.
        relation: The neighbouring relation the sensitivities are read under.

    Returns:
        The declared releases' μ.
    """
    return declaration.ledger(relation=relation, sigmas={r.name: sigmas[r.name] for r in declaration.releases}).mu


def _check_audit_sigmas(declaration: PrivacyDeclaration, sigmas: Mapping[str, Any], relation: Relation) -> None:
    """σ > 0 wherever a release (or a step of one) has a positive sensitivity: σ = 0 there adds no noise, nothing
    is private. A step of sensitivity 0 may go without noise (the optimal allocation's step H)."""
    for r in declaration.releases:
        if r.name not in sigmas:
            continue  # the implementation's own declaration names its releases; the registered one is checked too
        values = r.step_sigmas(sigmas[r.name]) if np.size(sigmas[r.name]) in (1, r.steps) else ()
        for h, (s, d) in enumerate(zip(values, r.step_sensitivities(relation)), start=1):
            if s <= 0.0 and d > 0.0:
                raise ValueError(
                    f"sigma[{r.name!r}] must be > 0 for an audit at step h = {h} (Δ = {d:g}): σ = 0 adds no noise, "
                    f"nothing is private; got {s!r}"
                )


def _check_executor(setting: RlSetting, executor: Executor | None) -> None:
    """An algorithm registered at run time reaches process-pool workers only if its spec can be pickled, and
    Dask workers not at all (they are other machines' processes): refuse before any run, naming why."""
    if executor is None or executor.name == "in-process" or not registry.is_runtime(setting.algorithm):
        return
    if executor.name.startswith("dask"):
        raise ValueError(
            f"{setting.algorithm!r} was registered in this process, which Dask workers do not share: run it with "
            "the in-process or process-pool executor, or make it a plugin (entry-point group dpkit.algorithms)"
        )
    if not registry.travels(setting.algorithm):
        raise ValueError(
            f"{setting.algorithm!r} was registered with callables that cannot be pickled (a lambda, a closure, or a "
            "function of a file loaded by path): run it in-process, or define them at module level"
        )


def audit_setting(
    setting: RlSetting,
    *,
    runs: int = 4000,
    seed: int = 0,
    attack: RlAttack | str = "auto",
    alpha: float = 0.05,
    executor: Executor | None = None,
    chunk_size: int = 250,
    progress: Callable[[int], None] | None = None,
) -> RlAuditResult:
    """Audit one setting (one position of the changed user): the runs, the attack, the bounds and the verdicts.

    Args:
        setting: The setting audited.
        runs: Runs per dataset (:func:`validate_runs`).
        seed: The seed of the runs' streams.
        attack: ``auto`` (white-box and learned, chosen on a selection split), ``white-box`` or ``learned``.
        alpha: The audit's error probability.
        executor: Where the runs are made (None: in-process).
        chunk_size: Runs per chunk handed to the executor.
        progress: Called with the number of runs just done, or None.

    Returns:
        The audit of the position.

    Raises:
        ValueError: If ``setting`` is not an :class:`RlSetting`, or ``runs``, ``attack`` or ``alpha`` is invalid.
    """
    if not isinstance(setting, RlSetting):
        raise ValueError(f"setting must be an RlSetting, got {type(setting).__name__}")
    runs = validate_runs(runs)
    attack = check_member("attack", attack, RlAttack)
    started = time.perf_counter()
    _check_executor(setting, executor)
    pc = position_claim(setting)
    declaration, sigmas, claim_sigmas, claim_mu, share = (
        pc.declaration,
        pc.sigmas,
        pc.sigmas_claim,
        pc.claim_mu,
        pc.share,
    )
    d0, d1 = neighbouring_datasets(setting)
    out0, out1 = run_pair(rl_release, d0, d1, runs, seed, executor=executor, chunk_size=chunk_size, progress=progress)
    mus = np.concatenate([out0[:, -2], out1[:, -2]])
    pair_mu = _equal_error_mu(mus)
    registered = registered_declaration(setting)
    # What the claim allows this pair: each release's realised difference capped at its declared Δ, over the σ the
    # claim needs, and never more than the declared μ at this position (a joint bound is below the separate Δ's).
    allowed = min(float(np.concatenate([out0[:, -1], out1[:, -1]]).max()), pc.cap)
    exact_mu = pc.exact_mu
    delta = setting.delta
    # The claim for this pair: its exact μ at the σ the target needs (0 when the pair releases nothing).
    claim = Claim.gdp(allowed) if allowed > 0 else Claim.dp(0.0, delta)
    att = rl_attacks(setting, attack, layout=RowLayout.of(out0, setting.white_box), runs=runs)
    result = audit_outputs(
        out0,
        out1,
        claim,
        attack=att,
        seed=seed,
        alpha=alpha,
        delta=delta,
        executor="in-process" if executor is None else executor.name,
        started=started,
        splits=AUTO_SPLITS if isinstance(att, list) else None,
    )
    note = None
    if not setting.white_box:  # a black-box view is consistent only with power measured on it
        view = judge_view(
            setting,
            out0,
            out1,
            result,
            runs=runs,
            seed=int(spawn_seeds(seed, 3)[2].generate_state(1)[0]),
            alpha=alpha,
            executor=executor,
            chunk_size=chunk_size,
            progress=progress,
        )
        judged = replace(result.judgement, verdict=view.verdict, power=view.power, power_ratio=view.power_ratio)
        result, note = replace(result, judgement=judged), view.note
    chosen = next(a for a in att if a.name == result.attack) if isinstance(att, list) else att
    claimed = float(declaration.epsilon)
    delta_inf = informative_delta(registered)
    scores0, scores1 = chosen.score(out0[out0.shape[0] // 2 :]), chosen.score(out1[out1.shape[0] // 2 :])
    paper_closed_form = audit_hook(setting, "closed_form")
    closed_form = None if paper_closed_form is None else float(paper_closed_form(setting))
    return RlAuditResult(
        setting=setting,
        attack=chosen.name,
        sigmas=sigmas,
        sigmas_claim=claim_sigmas,
        claimed_epsilon=claimed,
        exact_mu=exact_mu,
        exact_epsilon=gdp_epsilon(exact_mu, delta) if exact_mu > 0 else 0.0,
        pair_mu=pair_mu,
        pair_mu_allowed=allowed,
        audit=result,
        claim_verdict="violation" if result.epsilon_lower > claimed else "consistent",
        roc=roc_band(scores0, scores1, points=ROC_POINTS, level=1.0 - alpha),
        paper_epsilon_closed_form=closed_form,
        seconds=time.perf_counter() - started,
        delta_informative=delta_inf,
        claim_mu=claim_mu,
        claimed_epsilon_at_informative_delta=gdp_epsilon(claim_mu, delta_inf) if claim_mu > 0 else 0.0,
        exact_epsilon_at_informative_delta=gdp_epsilon(exact_mu, delta_inf) if exact_mu > 0 else 0.0,
        position_share=share,
        alpha=alpha,
        note=note,
    )


@dataclass(frozen=True, repr=False)
class RlPositionsResult(Headline):
    """An audit of several positions of the changed user, each a neighbouring pair tested at its share of α.

    ``verdict``: ``violation`` if any position's is; ``consistent`` only if every position is; ``inconclusive``
    otherwise. Every other headline number is read from one position, :attr:`worst` (how it is chosen: see
    docs/explanation/rl-audits.md, "The headline position"); the largest bounds are :meth:`strongest`'s."""

    results: tuple[RlAuditResult, ...]
    alpha: float

    @property
    def worst(self) -> RlAuditResult:
        """The headline position (see the class docstring): its verdict is the audit's."""
        rank = {"consistent": 0, "inconclusive": 1, "violation": 2}

        def weight(r: RlAuditResult) -> tuple[int, float, float]:
            ratio = r.mu_lower / r.pair_mu_allowed if r.pair_mu_allowed > 0 else math.inf * (r.mu_lower > 0)
            return (rank[r.verdict], ratio, r.mu_lower)

        return max(self.results, key=weight)

    def strongest(self, bound: str) -> RlAuditResult:
        """The position with the largest ``bound``, the first on ties.

        Args:
            bound: ``"mu_lower"`` or ``"epsilon_lower"`` (each position's at its share of α, valid at 1 − α together).

        Returns:
            That position's audit.
        """
        check_choice("bound", bound, ("mu_lower", "epsilon_lower"))
        return max(self.results, key=lambda r: float(getattr(r, bound)))

    @property
    def verdict(self) -> Verdict:
        verdicts = [r.verdict for r in self.results]
        if Verdict.VIOLATION in verdicts:
            return Verdict.VIOLATION
        return Verdict.CONSISTENT if all(v == Verdict.CONSISTENT for v in verdicts) else Verdict.INCONCLUSIVE

    @property
    def claim_verdict(self) -> Verdict:
        """The paper's ε against the largest ε lower bound of the positions (``strongest("epsilon_lower")``)."""
        violated = any(r.claim_verdict == Verdict.VIOLATION for r in self.results)
        return Verdict.VIOLATION if violated else Verdict.CONSISTENT

    @property
    def reason(self) -> str:
        """Why the verdict is what it is, in one sentence (:func:`~dpkit.audits.rl.explain.rl_reason`)."""
        return rl_reason(self)

    @property
    def diagnosis(self) -> str | None:
        """Where the evidence points and its likely cause, beside a violation or an inconclusive that points to one
        (:func:`~dpkit.audits.rl.explain.rl_diagnosis`)."""
        return rl_diagnosis(self)

    @property
    def seconds(self) -> float:
        return math.fsum(r.seconds for r in self.results)

    @property
    def runs(self) -> int:
        """Runs per dataset at each position."""
        return self.results[0].audit.runs

    @property
    def runs_used(self) -> int:
        """Runs per dataset used at every position together (the plan probe's own runs included)."""
        return sum(r.audit.runs for r in self.results)

    @property
    def positions(self) -> tuple[RlAuditResult, ...]:
        """Each position's audit (:attr:`results`)."""
        return self.results

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.worst, name)

    def position_rows(self) -> list[dict[str, Any]]:
        """One summary per position.

        Returns:
            Per position: its name, index, share, reach, allowance, bounds, power and verdict.
        """
        return [
            {
                "position": r.position_name,
                "world": r.setting.world,
                "index": r.setting.index,
                "share": r.position_share,
                "declared_mu": r.declared_mu_at_position,
                "pair_mu": r.pair_mu,
                "reach": r.reach,
                "mu_allowed": r.pair_mu_allowed,
                "mu_lower": r.mu_lower,
                "epsilon_lower": r.epsilon_lower,
                "mu_estimate": r.audit.estimate.mu_estimate,
                "power_ratio": r.audit.power_ratio,
                "attack": r.attack,
                "alpha": r.alpha,
                "verdict": r.verdict,
            }
            for r in self.results
        ]

    def to_dict(self) -> dict[str, Any]:
        """The headline position's dictionary with the whole audit's.

        Returns:
            :meth:`RlAuditResult.to_dict` of the headline position (its verdict is the audit's) with the whole audit's
            ``claim_verdict``, ``reason`` and ``diagnosis`` (:attr:`reason`, :attr:`diagnosis`; the headline
            position's own are under ``audit``) and α (``confidence`` 1 − α: the positions' bounds hold together),
            ``worst_position``
            (the headline), the largest bounds over the positions with theirs (``mu_lower_largest``,
            ``mu_lower_largest_position``, ``epsilon_lower_largest``, ``epsilon_lower_largest_position``) and
            ``positions`` (:meth:`position_rows`).
        """
        worst, mu, eps = self.worst, self.strongest("mu_lower"), self.strongest("epsilon_lower")
        return worst.to_dict() | {
            "verdict": self.verdict,
            "claim_verdict": self.claim_verdict,
            "reason": self.reason,
            "diagnosis": self.diagnosis,
            "confidence": 1.0 - self.alpha,
            "alpha": self.alpha,
            "worst_position": worst.position_name,
            "mu_lower_largest": mu.mu_lower,
            "mu_lower_largest_position": mu.position_name,
            "epsilon_lower_largest": eps.epsilon_lower,
            "epsilon_lower_largest_position": eps.position_name,
            "positions": self.position_rows(),
        }


def audit_positions(
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
    plans: bool | None = None,
) -> RlPositionsResult:
    """Audit ``setting`` at several positions of the changed user, position j at α/P with its own seed.

    Args:
        setting: The audit's setting.
        positions_to_probe: The positions; None: every position of :func:`positions`.
        runs: Runs per dataset at each position.
        seed: The audit's seed (:func:`probe_plan`).
        attack: As for :func:`audit_setting`.
        alpha: The error probability of the whole audit (a union bound over the pairs).
        executor: Where the runs are made (None: in-process).
        chunk_size: Runs per chunk handed to the executor.
        progress: Called with the number of runs just done, or None.
        plans: Whether to add the algorithm's plan probe (:func:`audit_plan_probe`) as one more pair, every pair
            then at α/(P + 1); None: when every position is probed and the algorithm names one (never when the
            attack reads no plan: ``white-box``, or ``auto`` below :data:`AUTO_MIN_RUNS` runs).

    Returns:
        The audit of every position (see :class:`RlPositionsResult`).

    Raises:
        ValueError: If ``setting`` is not an :class:`RlSetting`, a position is unknown, or an option is invalid.
    """
    probes = probe_plan(setting, positions_to_probe, seed)
    alpha = check_probability("alpha", alpha)
    validate_runs(runs)
    attack = check_member("attack", attack, RlAttack)
    every = {p.position for p, _ in probes} >= set(positions(setting))
    members = probe_members(setting) if (every if plans is None else plans) and reads_plans(attack, runs) else ()
    share = alpha / (len(probes) + bool(members))
    results = [
        audit_setting(
            probe,
            runs=runs,
            seed=child,
            attack=attack,
            alpha=share,
            executor=executor,
            chunk_size=chunk_size,
            progress=progress,
        )
        for probe, child in probes
    ]
    if members:
        results.append(
            audit_plan_probe(
                members,
                runs=runs,
                seed=spawn_seeds(seed, PLAN_PROBE_CHILD + 1)[PLAN_PROBE_CHILD],
                attack=attack,
                alpha=share,
                executor=executor,
                chunk_size=chunk_size,
                progress=progress,
            )
        )
    return RlPositionsResult(tuple(results), alpha)


#: The name alike the other results' (:mod:`dpkit.audits.summary`).
RlPositionsResult = RlPositionsResult

#: The child of an audit's seed its plan probe draws from (the positions use the first children).
PLAN_PROBE_CHILD = 64


def audit_plan_probe(
    members: Sequence[RlSetting],
    *,
    runs: int,
    seed: int | np.random.SeedSequence,
    attack: RlAttack | str = "auto",
    alpha: float = 0.05,
    executor: Executor | None = None,
    chunk_size: int = 250,
    progress: Callable[[int], None] | None = None,
) -> RlAuditResult:
    """The plan probe of an audit (:mod:`dpkit.audits.rl.plans`): the world whose plans tell D and D′ apart best.

    Every world of ``members`` is tried on pilot runs (child 0 of ``seed``); the best is audited on
    :func:`~dpkit.audits.rl.plans.probe_runs` fresh runs (child 1) at ``alpha``.

    Args:
        members: The settings of the worlds to try (:func:`~dpkit.audits.rl.plans.probe_members`).
        runs: Runs per dataset and position of the audit (the pilots' and the probe's follow from it).
        seed: The probe's seed.
        attack: As for :func:`audit_setting`.
        alpha: The probe's share of the audit's error probability.
        executor: Where the runs are made (None: in-process).
        chunk_size: Runs per chunk handed to the executor.
        progress: Called with the number of runs just done, or None.

    Returns:
        The audit of the chosen world, which records the choice (``probe``).
    """
    pilots, fresh = spawn_seeds(seed, 2)
    choice = choose_plan_world(
        members, runs=runs, seed=pilots, executor=executor, chunk_size=chunk_size, progress=progress
    )
    result = audit_setting(
        choice.setting,
        runs=probe_runs(runs),
        seed=int(fresh.generate_state(1)[0]),
        attack=attack,
        alpha=alpha,
        executor=executor,
        chunk_size=chunk_size,
        progress=progress,
    )
    return replace(result, probe=choice)


def register_agent(agent: AlgorithmSpec | Callable[..., Any], *, name: str | None = None) -> str:
    """Make a user's own agent auditable.

    ``agent`` follows the local-DP messages protocol or the joint-DP billboard protocol; the claim is its own
    declaration at the audit's target, calibrated by dpkit (see docs/explanation/rl-audits.md, "Your own agent").

    Args:
        agent: A full :class:`~dpkit.algorithms.spec.AlgorithmSpec` (registered as it is), or an agent factory.
        name: The name to register it as (default: the factory's ``__name__``; the names of built-ins and plugins
            are refused).

    Returns:
        The name to audit it by (:func:`audit_registered_algorithm`).

    Raises:
        TypeError: If ``agent`` is neither an AlgorithmSpec nor an agent factory.
        ValueError: If the spec registers no audit, or the name is a built-in's or a plugin's.
    """
    from .user_agents import agent_spec

    spec = agent_spec(agent, name=name)
    if spec.audit is None:
        raise ValueError(f"{spec.name} registers no audit (its AlgorithmSpec has audit=None)")
    if spec.name in registry.names() and not registry.is_runtime(spec.name):
        raise ValueError(
            f"{spec.name!r} is the name of a registered algorithm (a built-in or a plugin): give your agent another "
            "name"
        )
    registry.register(spec, replace=True)
    return spec.name


def audit_registered_algorithm(
    algorithm: str,
    *,
    sigma: str | float = "tight",
    observer: str | None = None,
    runs: int = 4000,
    episodes: int | None = None,
    epsilon: float | None = None,
    delta: float | None = None,
    seed: int = 0,
    position: str | int | None = None,
    attack: RlAttack | str = "auto",
    alpha: float = 0.05,
    executor: Executor | None = None,
    progress: Callable[[int], None] | None = None,
    **overrides: Any,
) -> RlPositionsResult:
    """Audit ``algorithm`` in its default setting (:func:`default_setting`) with the given changes.

    Args:
        algorithm: The registered algorithm's name.
        sigma: ``"tight"`` (the σ the target needs), another named σ, or a number.
        observer: The privacy model's observer (default: the algorithm's own).
        runs: Runs per dataset at each position.
        episodes: The episodes of each run (default: the setting's).
        epsilon: The target ε (default: the algorithm's).
        delta: The target δ (default: the algorithm's).
        seed: The audit's seed.
        position: One position to audit alone; None: every position of :func:`positions`, α split evenly.
        attack: As for :func:`audit_setting`.
        alpha: The audit's error probability.
        executor: Where the runs are made (None: in-process).
        progress: Called with the number of runs just done, or None.
        **overrides: Further changes to the default setting (:func:`default_setting`).

    Returns:
        The audit of the positions.

    Raises:
        ValueError: If the algorithm is unknown or a setting or option is invalid.
    """
    setting = default_setting(
        algorithm,
        sigma=sigma,
        observer=observer,
        episodes=episodes,
        epsilon=epsilon,
        delta=delta,
        **overrides,
    )
    return audit_positions(
        setting,
        positions_to_probe=None if position is None else [position],
        runs=runs,
        seed=seed,
        attack=attack,
        alpha=alpha,
        executor=executor,
        progress=progress,
    )
