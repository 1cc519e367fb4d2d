"""The audit: run a release function on neighbouring datasets, attack, bound, and give a verdict.

:func:`audit` runs a release function on one neighbouring pair in three independent splits (training, selection,
evaluation), streams the scores of the last two, and bounds the chosen attack's error rates on the evaluation
split only, so the bounds hold at confidence 1 − α; :func:`audit_outputs` does the same on outputs already
computed, and :func:`audit_pairs` audits several pairs at α/len(pairs) each. The splits, the two thresholds and
how the verdict is read: see docs/explanation/verdicts.md ("How an audit runs").
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_count, check_probability
from dpkit.algorithms.executors import AutoExecutor, Executor, describe_executor, run_pair, spawn_seeds

from .attacks import Attack
from .claims import Claim
from .defaults import AUDIT_DEFAULTS
from .estimators import Objective
from .selection import (
    AUTO,
    TRAIN_CAP,
    AuditResult,
    ScoreAll,
    audit_result,
    candidate_attacks,
    check_audit_options,
    choose_attack,
    fit_attacks,
    objective_shares,
    release_name,
    split_runs,
)
from .sequential import SequentialResult, audit_pairs_sequential
from .shape_estimate import EpsilonEstimate
from .summary import Headline
from .verdicts import VERDICTS, Verdict

__all__ = ["AUTO", "TRAIN_CAP", "VERDICTS", "AuditResult", "PairsResult", "audit_outputs", "audit_pair", "audit_pairs"]


def audit_pair(
    release: Callable[..., np.ndarray],
    dataset0: Any,
    dataset1: Any,
    claim: Claim,
    *,
    attack: Attack | str = AUDIT_DEFAULTS.attack,
    runs: int = AUDIT_DEFAULTS.runs,
    seed: int = AUDIT_DEFAULTS.seed,
    alpha: float = AUDIT_DEFAULTS.alpha,
    delta: float | None = None,
    objective: Objective | str | None = None,
    executor: Executor | None = None,
    chunk_size: int = AUDIT_DEFAULTS.chunk_size,
    progress: Callable[[int], None] | None = None,
) -> AuditResult:
    """Audit ``release`` on one neighbouring pair against ``claim``, streaming the runs' scores.

    Splits: learned attacks are fitted on min(runs/3, :data:`TRAIN_CAP`) runs, a quarter of the rest selects, the
    remainder is evaluated; an attack that needs no fit selects on 20% and is evaluated on 80%.

    Args:
        release: The release function, ``release(dataset, rng, n) -> array (n, …)``.
        dataset0: The dataset D.
        dataset1: The neighbouring dataset D′.
        claim: The privacy claim audited.
        attack: ``"auto"`` (default: every attack of :data:`~dpkit.audits.attacks.AUTO_ATTACKS` fitted, one
            chosen on the selection split), a name for :func:`~dpkit.audits.attacks.make_attack`, or an
            :class:`~dpkit.audits.attacks.Attack` (the executor's workers must be able to pickle it).
        runs: Independent runs per dataset (at least 6), over the three splits.
        seed: The seed every split's seeds are spawned from.
        alpha: The audit's error probability: the bounds hold at confidence 1 − α.
        delta: Where ε is read (default: the claim's δ for dp claims, else 1e-5).
        objective: ``"margin"``, ``"eer"``, ``"mu"`` or ``"epsilon"``
            (:data:`~dpkit.audits.selection.AUDIT_OBJECTIVES`): one threshold at the whole α; by default (None)
            two are evaluated — where the claim breaks (¾α) and at the equal error rate (¼α).
        executor: Where the runs are made; None: an :class:`~dpkit.algorithms.executors.AutoExecutor` of this
            call (in-process while the target is fast, every core once a split is projected at 2 s or more).
        chunk_size: Runs per chunk scored where it is produced.
        progress: Called with the number of runs just done, or None.

    Returns:
        The audit's result: bounds, verdict and the attacks tried.

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: If ``runs`` < 6, ``runs``, ``chunk_size`` or ``seed`` is not a valid count, ``alpha`` or
            ``delta`` lies outside its range, or ``attack`` or ``objective`` is an unknown name.
    """
    alpha, objectives, delta = check_audit_options(claim, alpha, objective, delta)
    if executor is None:
        with AutoExecutor() as auto:
            return audit_pair(
                release,
                dataset0,
                dataset1,
                claim,
                attack=attack,
                runs=runs,
                seed=seed,
                alpha=alpha,
                delta=delta,
                objective=objective,
                executor=auto,
                chunk_size=chunk_size,
                progress=progress,
            )
    runs = check_count("runs", runs)
    if runs < 6:
        raise ValueError(f"runs must be >= 6 (train, selection and evaluation splits), got {runs}")
    candidates = candidate_attacks(attack)
    started = time.perf_counter()
    options: dict[str, Any] = {
        "executor": executor,
        "chunk_size": check_count("chunk_size", chunk_size),
        "progress": progress,
    }
    seed_train, seed_select, seed_eval = spawn_seeds(seed, 3)  # validates the seed
    needs_fit = any(a.needs_fit for a in candidates)
    if needs_fit:
        n_train = min(runs // 3, TRAIN_CAP)
        n_select = (runs - n_train) // 4
    else:
        n_train, n_select = 0, max(1, runs // 5)
    n_eval = runs - n_train - n_select
    notes: list[dict[str, Any]] = []
    if n_train:
        out0, out1 = run_pair(release, dataset0, dataset1, n_train, seed_train, **options)
        candidates, notes = fit_attacks(candidates, out0, out1)
        del out0, out1
    sel0, sel1 = run_pair(
        release, dataset0, dataset1, n_select, seed_select, transform=ScoreAll(tuple(candidates)), **options
    )
    shares = objective_shares(objectives, alpha)
    chosen, thresholds, rows = choose_attack(
        candidates, sel0, sel1, claim, delta, shares, objectives, eval_sizes=(n_eval, n_eval)
    )
    del sel0, sel1
    ev0, ev1 = run_pair(
        release, dataset0, dataset1, n_eval, seed_eval, transform=ScoreAll((candidates[chosen],)), **options
    )
    result = audit_result(
        claim,
        candidates[chosen],
        thresholds,
        ev0[:, 0],
        ev1[:, 0],
        shares=shares,
        alpha=alpha,
        delta=delta,
        runs=runs,
        seed=int(seed),
        started=started,
        candidates=notes + rows,
        executor=describe_executor(executor),
    )
    return dataclasses.replace(result, target=release_name(release))


def audit_outputs(
    out0: np.ndarray,
    out1: np.ndarray,
    claim: Claim,
    *,
    attack: Attack | str | Sequence[Attack] = AUDIT_DEFAULTS.attack,
    seed: int = AUDIT_DEFAULTS.seed,
    alpha: float = AUDIT_DEFAULTS.alpha,
    delta: float | None = None,
    objective: Objective | str | None = None,
    executor: str = "in-process",
    started: float | None = None,
    splits: tuple[float, float, float] | None = None,
) -> AuditResult:
    """Split, attack, bound and judge outputs already computed, in memory.

    For callers that produce the outputs themselves (e.g. the RL audits).

    Args:
        out0: The outputs on D, one row per run.
        out1: The outputs on D′, as many rows.
        claim: The privacy claim audited.
        attack: ``"auto"``, an attack's name, an :class:`~dpkit.audits.attacks.Attack`, or a sequence of attacks
            to choose from on the selection split.
        seed: The seed recorded in the result.
        alpha: The audit's error probability: the bounds hold at confidence 1 − α.
        delta: Where ε is read (default: the claim's δ for dp claims, else 1e-5).
        objective: One threshold's objective (as in :func:`audit`), or None for the two default thresholds.
        executor: The executor's description recorded in the result.
        started: ``time.perf_counter()`` when the audit began (default: now), for the wall time reported.
        splits: The shares of training, selection and evaluation; by default a learned attack (or ``auto``) is
            fitted on a third, selects on a sixth and is bounded on half, an attack that needs no fit selects on
            20% and is bounded on 80%.

    Returns:
        The audit's result: bounds, verdict and the attacks tried.

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: If ``out0`` and ``out1`` hold different numbers of runs or fewer than 6, ``splits`` are not
            three shares ≥ 0 summing to 1 (or give a learned attack no training share), or an option lies outside
            its range.
    """
    alpha, objectives, delta = check_audit_options(claim, alpha, objective, delta)
    out0, out1 = np.asarray(out0), np.asarray(out1)
    if out0.shape[0] != out1.shape[0]:
        raise ValueError(f"out0 and out1 must hold as many runs, got {out0.shape[0]} and {out1.shape[0]}")
    runs = check_count("runs", out0.shape[0])
    if runs < 6:
        raise ValueError(f"runs must be >= 6 (train, selection and evaluation splits), got {runs}")
    candidates = candidate_attacks(attack)
    needs_fit = any(a.needs_fit for a in candidates)
    # The threshold needs far fewer runs than a tight bound: most runs go to the evaluation split.
    fractions = (1 / 3, 1 / 6, 1 / 2) if needs_fit else (0.0, 0.2, 0.8)
    if splits is not None:
        if len(splits) != 3 or min(splits) < 0.0 or abs(sum(splits) - 1.0) > 1e-9 or min(splits[1:]) <= 0.0:
            raise ValueError(
                f"splits must be three shares >= 0 summing to 1 (selection and evaluation > 0), got {splits!r}"
            )
        if needs_fit and splits[0] <= 0.0:
            raise ValueError(f"a learned attack needs a training share > 0, got splits = {splits!r}")
        fractions = tuple(float(x) for x in splits)  # type: ignore[assignment]
    started = time.perf_counter() if started is None else started
    train, select, evaluate = split_runs(runs, fractions)
    notes: list[dict[str, Any]] = []
    if needs_fit:
        candidates, notes = fit_attacks(candidates, out0[train], out1[train])
    score = ScoreAll(tuple(candidates))
    shares = objective_shares(objectives, alpha)
    n_eval = evaluate.stop - evaluate.start
    chosen, thresholds, rows = choose_attack(
        candidates,
        score(out0[select]),
        score(out1[select]),
        claim,
        delta,
        shares,
        objectives,
        eval_sizes=(n_eval, n_eval),
    )
    att = candidates[chosen]
    return audit_result(
        claim,
        att,
        thresholds,
        np.asarray(att.score(out0[evaluate]), dtype=float),
        np.asarray(att.score(out1[evaluate]), dtype=float),
        shares=shares,
        alpha=alpha,
        delta=delta,
        runs=runs,
        seed=int(seed),
        executor=executor,
        started=started,
        candidates=notes + rows,
    )


@dataclass(frozen=True, repr=False)
class PairsResult(Headline):
    """Audits of several neighbouring pairs at α/len(pairs) each; the verdict is the worst one. Sequential audits
    (:class:`~dpkit.audits.sequential.SequentialResult`) stop at the first pair that is a violation. The other
    headline fields (:class:`~dpkit.audits.summary.AuditSummary`) are the strongest pair's."""

    results: tuple[AuditResult | SequentialResult, ...]
    alpha: float
    #: Sequential audits: the runs per dataset used over every pair (those left unfinished included).
    sequential_runs_used: int | None = None

    @property
    def runs_used(self) -> int:
        """The runs per dataset used over every pair (a sequential audit's unfinished pairs included)."""
        if self.sequential_runs_used is not None:
            return self.sequential_runs_used
        return sum(r.runs_used for r in self.results)

    @property
    def runs(self) -> int:
        """Runs per dataset of each pair (a sequential audit's budget)."""
        return self.results[0].runs

    @property
    def claim(self) -> Claim:
        return self.results[0].claim

    @property
    def epsilon_lower(self) -> float:
        return self.strongest.epsilon_lower

    @property
    def epsilon_estimate(self) -> float | None:
        return self.strongest.epsilon_estimate

    @property
    def shape_estimate(self) -> EpsilonEstimate:
        """The strongest pair's estimate of ε, with its interval and shape."""
        return self.strongest.shape_estimate

    @property
    def power(self) -> float | None:
        return self.strongest.power

    @property
    def power_ratio(self) -> float | None:
        return self.strongest.power_ratio

    @property
    def delta(self) -> float:
        return self.strongest.delta

    @property
    def positions(self) -> None:
        return None

    @property
    def strongest(self) -> AuditResult | SequentialResult:
        """The pair with the largest μ lower bound (then ε lower bound)."""
        return max(self.results, key=lambda r: (r.mu_lower, r.epsilon_lower))

    @property
    def verdict(self) -> Verdict:
        """``violation`` if any pair is one; else the strongest pair's verdict (``inconclusive`` when it lacks
        power)."""
        if any(r.verdict == Verdict.VIOLATION for r in self.results):
            return Verdict.VIOLATION
        return self.strongest.verdict

    def verdict_source(self) -> dict[str, Any]:
        """What the verdict table reads (:func:`~dpkit.reports.notebook_view.verdict_table_html`).

        Returns:
            The strongest pair's dictionary, with the verdict of every pair together.
        """
        return self.strongest.to_dict() | {"verdict": self.verdict}

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data (JSON-ready).

        Returns:
            The verdict, α, the index of the strongest pair and every pair's own dictionary.
        """
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
    alpha: float = AUDIT_DEFAULTS.alpha,
    attack: Attack | str | Callable[[], Attack] = AUDIT_DEFAULTS.attack,
    seed: int = AUDIT_DEFAULTS.seed,
    sequential: bool = False,
    **options: Any,
) -> PairsResult:
    """Audit every pair in ``pairs`` at confidence 1 − α/len(pairs) each (a union bound).

    Args:
        release: The release function, ``release(dataset, rng, n) -> array (n, …)``.
        pairs: The neighbouring pairs ``(dataset0, dataset1)``, at least one.
        claim: The privacy claim audited.
        alpha: The audit's error probability over every pair together.
        attack: An attack's name (a new attack per pair), a factory called once per pair (learned attacks fitted
            afresh), or an :class:`~dpkit.audits.attacks.Attack` (one that needs no fit, or any when sequential:
            a sequential audit copies a learned attack before each fit).
        seed: Pair i uses seed ``seed + i``.
        sequential: Whether the pairs' sequential audits take turns
            (:func:`~dpkit.audits.sequential.audit_pairs_sequential`) and all stop at the first violation.
        **options: Passed on to :func:`audit` (or to the sequential audits, which also take ``on_look``).

    Returns:
        Every pair's result (a sequential audit's: those that concluded); the verdict is the worst one.

    Raises:
        ValueError: If ``pairs`` is empty, ``alpha`` is not a probability, or one fitted learned attack instance
            is passed for several fixed-size audits.
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs must hold at least one (dataset0, dataset1) pair")
    alpha = check_probability("alpha", alpha)
    attacks = []
    for _ in pairs:
        att = attack() if callable(attack) and not isinstance(attack, Attack) else attack
        if isinstance(att, Attack) and att.needs_fit and not callable(attack) and not sequential:
            raise ValueError(
                "pass a learned attack by name or as a factory: one fitted instance cannot serve every pair"
            )
        attacks.append(att)
    if sequential:
        done, used = audit_pairs_sequential(release, pairs, claim, attacks=attacks, seed=seed, alpha=alpha, **options)
        return PairsResult(tuple(done), alpha, sequential_runs_used=used)
    results = [
        audit_pair(release, d0, d1, claim, attack=att, seed=seed + i, alpha=alpha / len(pairs), **options)
        for i, ((d0, d1), att) in enumerate(zip(pairs, attacks, strict=True))
    ]
    return PairsResult(tuple(results), alpha)


def __getattr__(name: str) -> Any:
    if name == "audit":  # renamed for what it audits: one neighbouring pair; the old name warns for a release
        import warnings

        warnings.warn("dpkit.audits.audit is deprecated: it is now audit_pair", DeprecationWarning, 2)
        return audit_pair
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
