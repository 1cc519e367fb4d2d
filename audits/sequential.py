"""Sequential, anytime-valid audits: runs arrive in batches and the audit stops as soon as the answer is known.

The test is by betting: under the claim, a wealth built from each pair of runs is a nonnegative supermartingale,
so by Ville's inequality the audit may look after every pair and stop with ``violation`` at the first crossing of
2/α (the e-process runs at α/2). Attacks, events and stakes are learned from earlier runs only. Otherwise it ends
at its budget with the fixed audit's own test at the other α/2. The derivation, the budget and the certified
bounds: see docs/sequential.md ("In short").

:func:`audit_sequential_batches` is generic over how batches are produced (a :data:`BatchSource`);
:func:`audit_sequential` audits a release function on the executors of :mod:`dpkit.algorithms.executors`.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_count, check_probability
from dpkit.algorithms.executors import AutoExecutor, Executor, describe_executor, run_pair, spawn_seeds

from .attacks import Attack
from .betting import CHAIN, Bet, choose_bet, claim_tangents, eprocess_chain, smoothed_rate
from .claims import Claim
from .defaults import AUDIT_DEFAULTS
from .estimators import Objective, mu_from_rates, select_threshold
from .selection import (
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
)
from .sequential_plan import (
    FIRST_BATCH,
    SEQUENTIAL_SHARE,
    SequentialPlan,
    grown_final_size,
    plan_sequential,
    split_evenly,
)
from .sequential_result import Look, SequentialResult
from .verdicts import Verdict

__all__ = [
    "CHAIN",
    "FIRST_BATCH",
    "SEQUENTIAL_SHARE",
    "BatchSource",
    "Look",
    "SequentialPlan",
    "SequentialResult",
    "audit_pairs_sequential",
    "audit_sequential",
    "audit_sequential_batches",
    "audit_sources_sequential",
    "plan_sequential",
    "release_source",
    "take_turns",
]

#: ``source(n, index, transform) -> (rows0, rows1)``: ``n`` fresh, independent runs on D and on D′ (the batch
#: ``index``; its randomness must never have been used before), one row each, transformed by ``transform`` where
#: they are produced when it is given (e.g. scored in the workers, so that outputs never accumulate).
BatchSource = Callable[[int, int, Callable[[np.ndarray], np.ndarray] | None], tuple[np.ndarray, np.ndarray]]


# -- the driver -------------------------------------------------------------------------------------------------


def _fresh(spec: list[Attack]) -> list[Attack]:
    """Unfitted copies of the candidate attacks (each look fits its own)."""
    return [copy.deepcopy(a) for a in spec]


def _pieces(size: int, first: int) -> list[int]:
    """A batch asked for in up to four pieces (none smaller than four first batches)."""
    count = max(1, min(4, size // (4 * first)))
    pieces = [size // count] * count
    pieces[-1] += size - sum(pieces)
    return pieces


def _score(attack: Attack, outputs: np.ndarray) -> np.ndarray:
    return np.asarray(attack.score(outputs), dtype=float)


def _finite(scores: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(scores)))


class _Audit:
    """The state of one sequential audit (see :func:`audit_sequential_batches`)."""

    def __init__(
        self,
        source: BatchSource,
        claim: Claim,
        plan: SequentialPlan,
        spec: list[Attack],
        *,
        alpha: float,
        delta: float,
        objectives: tuple[str, ...],
        on_look: Callable[[Look], None] | None,
        seed: int = 0,
        executor: str = "in-process",
    ) -> None:
        self.source, self.claim, self.plan, self.spec = source, claim, plan, spec
        self.seed, self.executor, self.started = seed, executor, time.perf_counter()
        self.final: AuditResult | None = None
        self.alpha, self.delta, self.objectives, self.on_look = alpha, delta, objectives, on_look
        self.needs_fit = any(a.needs_fit for a in spec)
        self.log_level = math.log(1.0 / (alpha * SEQUENTIAL_SHARE))
        self.chain = eprocess_chain(claim, delta)
        self.tangents = [claim_tangents(p.claim) for p in self.chain]
        self.pool0: list[np.ndarray] = []
        self.pool1: list[np.ndarray] = []
        self.pooled = 0
        self.fitted_on = -1
        self.current: list[Attack] | None = None if self.needs_fit else spec
        self.sel: tuple[np.ndarray, np.ndarray] | None = None
        self.runs_used = 0
        self.requests = 0
        self.looks: list[Look] = []
        self.notes: list[dict[str, Any]] = []
        self.attack_name: str | None = None
        self.last_rates: tuple[float, float] | None = None
        self.last_mu: float | None = None

    # the bound the e-processes certify so far (step-down over the nested claims)
    def bound(self) -> float:
        value = 0.0
        for p in self.chain:
            if p.crossed_at is None:
                break
            if p.value is not None:
                value = p.value
        return value

    def violated(self) -> bool:
        return self.chain[0].crossed_at is not None

    def _fit(self) -> list[Attack] | None:
        """Candidates fitted on the pooled raw outputs (``None`` before there are any)."""
        if not self.needs_fit:
            return self.spec
        if not self.pool0:  # nothing to learn from yet: the attacks that need no fitting can already be scored,
            # so that the next batch bets (their scores on the first batch choose its bet)
            return [a for a in self.spec if not a.needs_fit] or None
        if self.fitted_on == self.pooled:  # nothing new to learn from (the pool is full)
            return self.current
        self.fitted_on = self.pooled
        out0, out1 = np.concatenate(self.pool0), np.concatenate(self.pool1)
        fitted, notes = fit_attacks(_fresh(self.spec), out0, out1)
        self.notes = notes
        return fitted

    def _bets(self, attacks: list[Attack] | None) -> tuple[int | None, list[Bet | None]]:
        """Choose the attack (the claim's best bet) and every e-process's bet on the selection scores."""
        if attacks is None or self.sel is None:
            return None, [None] * len(self.chain)
        sel0, sel1 = self.sel
        best, best_bet = None, None
        for j in range(len(attacks)):
            if not (_finite(sel0[:, j]) and _finite(sel1[:, j])):
                continue
            bet = choose_bet(sel0[:, j], sel1[:, j], self.tangents[0])
            if best is None or (bet is not None and (best_bet is None or bet.growth > best_bet.growth)):
                best, best_bet = j, bet
        if best is None:
            return None, [None] * len(self.chain)
        bets: list[Bet | None] = [best_bet]
        for k in range(1, len(self.chain)):  # the weaker claims, while a bet on them may grow
            bet = choose_bet(sel0[:, best], sel1[:, best], self.tangents[k]) if bets[-1] is not None else None
            bets.append(bet)
        return best, bets

    def _start(self, bets: list[Bet | None]) -> None:
        for p, bet in zip(self.chain, bets, strict=True):
            p.start(bet)
        self.played: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])

    def _play(self, s0: np.ndarray, s1: np.ndarray) -> None:
        start = self.runs_used - s0.size
        for p in self.chain:
            p.play(s0, s1, start=start, log_level=self.log_level)
        if self.chain[0].bet is not None and _finite(s0) and _finite(s1):
            # the estimate: the GDP reading of the bet attack's error rates at its equal-error threshold on the runs
            # of this batch
            self.played[0].append(s0)
            self.played[1].append(s1)
            s0, s1 = np.concatenate(self.played[0]), np.concatenate(self.played[1])
            t = select_threshold(s0, s1, "eer")
            fp, fn = int(np.count_nonzero(s0 > t)), int(np.count_nonzero(s1 <= t))
            fpr, fnr = float(smoothed_rate(fp, s0.size)), float(smoothed_rate(fn, s1.size))
            self.last_rates = (fpr, fnr)
            self.last_mu = abs(mu_from_rates(fpr, fnr))

    def _record(self, batch: int, phase: str) -> None:
        look = Look(batch, phase, self.runs_used, self.chain[0].e_value, self.bound(), self.attack_name)
        self.looks.append(look)
        if self.on_look is not None:
            self.on_look(look)

    def _request(self, size: int, transform: Callable[[np.ndarray], np.ndarray] | None) -> tuple[np.ndarray, ...]:
        out = self.source(size, self.requests, transform)
        self.requests += 1
        self.runs_used += size
        return out

    def steps(self) -> Iterator[None]:
        """The audit, one piece of a batch per step (so that several audits may take turns): the learning batches,
        then, unless the claim's e-process crossed, the final ones."""
        yield from self._learn()
        if not self.violated():
            yield from self._finish()

    def _learn(self) -> Iterator[None]:
        """The learning batches: refit, choose on the last batch, bet on the next (asking for it in pieces, so
        that a violation stops the audit within a quarter of a batch); stop at a violation."""
        for k, size in enumerate(self.plan.learning):
            chosen, bets = self._bets(self.current)
            self._start(bets)
            nxt = self._fit() if self.needs_fit else self.spec
            keep_raw = self.needs_fit and self.pooled + size <= TRAIN_CAP
            bet_attack = None if chosen is None or self.current is None else self.current[chosen]
            head = () if bet_attack is None else (bet_attack,)
            self.attack_name = None if bet_attack is None else bet_attack.name
            parts: list[tuple[np.ndarray, ...]] = []
            for piece in _pieces(size, self.plan.learning[0]):
                if keep_raw:
                    out0, out1 = self._request(piece, None)
                    parts.append((out0, out1))
                    if bet_attack is not None:
                        self._play(_score(bet_attack, out0), _score(bet_attack, out1))
                else:
                    assert nxt is not None
                    s0, s1 = self._request(piece, ScoreAll(head + tuple(nxt)))
                    parts.append((s0[:, len(head) :], s1[:, len(head) :]))
                    if head:
                        self._play(s0[:, 0], s1[:, 0])
                self._record(k, "learning")
                yield
                if self.violated():
                    return
            both0, both1 = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
            if keep_raw:
                self.pool0.append(both0)
                self.pool1.append(both1)
                self.pooled += size
                self.sel = None if nxt is None else (ScoreAll(tuple(nxt))(both0), ScoreAll(tuple(nxt))(both1))
            else:
                self.sel = (both0, both1)
            self.current = nxt

    def _finish(self) -> Iterator[None]:
        """The final batches: the engine's final test fixed on the last learning batch, bets continued; at the last
        one, :attr:`final` is the final test's result."""
        assert self.current is not None and self.sel is not None
        shares = objective_shares(self.objectives, self.alpha * (1.0 - SEQUENTIAL_SHARE))
        sel0, sel1 = self.sel
        n_final = sum(self.plan.final)
        chosen, thresholds, rows = choose_attack(
            self.current, sel0, sel1, self.claim, self.delta, shares, self.objectives, eval_sizes=(n_final, n_final)
        )
        grown = grown_final_size(self.plan, self.claim, sel0[:, chosen], sel1[:, chosen], shares, self.delta)
        if grown > n_final:  # the runs so far show a shape its planned final test could not see: go on, in budget
            self.plan = dataclasses.replace(self.plan, final=split_evenly(grown, len(self.plan.final)))
            chosen, thresholds, rows = choose_attack(
                self.current, sel0, sel1, self.claim, self.delta, shares, self.objectives, eval_sizes=(grown, grown)
            )
        attack = self.current[chosen]
        self.attack_name = attack.name
        prev = (sel0[:, chosen], sel1[:, chosen])
        ev0: list[np.ndarray] = []
        ev1: list[np.ndarray] = []
        last = len(self.plan.learning) + len(self.plan.final) - 1
        for k, size in enumerate(self.plan.final, start=len(self.plan.learning)):
            bets: list[Bet | None] = [choose_bet(prev[0], prev[1], self.tangents[0])]
            for j in range(1, len(self.chain)):
                bets.append(choose_bet(prev[0], prev[1], self.tangents[j]) if bets[-1] is not None else None)
            self._start(bets)
            s0, s1 = self._request(size, ScoreAll((attack,)))
            s0, s1 = s0[:, 0], s1[:, 0]
            ev0.append(s0)
            ev1.append(s1)
            self._play(s0, s1)
            prev = (s0, s1)
            self._record(k, "final")
            if k == last:
                self.final = audit_result(
                    self.claim,
                    attack,
                    thresholds,
                    np.concatenate(ev0),
                    np.concatenate(ev1),
                    shares=shares,
                    alpha=self.alpha * (1.0 - SEQUENTIAL_SHARE),
                    delta=self.delta,
                    runs=self.plan.budget,
                    seed=self.seed,
                    executor=self.executor,
                    started=self.started,
                    candidates=self.notes + rows,
                )
            yield
            if self.violated():
                return

    def result(self) -> SequentialResult:
        """The result once :meth:`steps` ran out (or stopped at the claim's violation)."""
        violated = self.violated()
        if not violated and self.final is None:
            raise RuntimeError("the sequential audit has not finished")
        lead = self.chain[0]
        return SequentialResult(
            claim=self.claim,
            verdict=Verdict.VIOLATION if violated else self.final.verdict,  # type: ignore[union-attr]
            stopped_early=violated and self.final is None,
            plan=self.plan,
            runs_used=self.runs_used,
            alpha=self.alpha,
            delta=self.delta,
            e_value=lead.e_value,
            e_value_max=math.exp(min(lead.log_max, 700.0)),
            bound=self.bound(),
            final=self.final,
            looks=tuple(self.looks),
            attack=self.attack_name or self.spec[0].name,
            seed=self.seed,
            executor=self.executor,
            seconds=time.perf_counter() - self.started,
            mu_estimate=self.last_mu,
            rates=self.last_rates,
            candidates=tuple(self.notes),
        )


def _prepare(
    source: BatchSource,
    claim: Claim,
    *,
    runs: int,
    attack: Attack | str | Sequence[Attack],
    alpha: float,
    delta: float | None,
    objective: Objective | str | None,
    seed: int,
    executor: str,
    on_look: Callable[[Look], None] | None,
) -> _Audit:
    """A sequential audit ready to step: the inputs checked, the plan made."""
    if not callable(source):
        raise TypeError(f"source must be callable (n, index, transform) -> (rows0, rows1), got {source!r}")
    alpha, objectives, delta = check_audit_options(claim, alpha, objective, delta)
    spec = candidate_attacks(attack)
    plan = plan_sequential(claim, runs=runs, alpha=alpha, delta=delta, needs_fit=any(a.needs_fit for a in spec))
    return _Audit(
        source,
        claim,
        plan,
        spec,
        alpha=alpha,
        delta=delta,
        objectives=objectives,
        on_look=on_look,
        seed=int(seed),
        executor=executor,
    )


def audit_sequential_batches(
    source: BatchSource,
    claim: Claim,
    *,
    runs: int = AUDIT_DEFAULTS.runs,
    attack: Attack | str = AUDIT_DEFAULTS.attack,
    alpha: float = AUDIT_DEFAULTS.alpha,
    delta: float | None = None,
    objective: Objective | str | None = None,
    seed: int = AUDIT_DEFAULTS.seed,
    executor: str = "in-process",
    on_look: Callable[[Look], None] | None = None,
) -> SequentialResult:
    """A sequential, anytime-valid audit of the runs ``source`` produces, against ``claim``.

    For the RL audits (``dpkit.audits.rl``) the source runs ``rl_release`` on the two neighbouring datasets, e.g.
    ``release_source(rl_release, d0, d1, seed=seed, executor=executor, chunk_size=250)``, and the claim must be
    fixed before the first batch (a claim read from the runs would be graded against itself); a source wrapping
    another one may keep the rows' extra columns (μ of the run's releases) as they pass.

    Args:
        source: ``source(n, index, transform)`` returns ``n`` fresh runs on D and on D′ (a :data:`BatchSource`;
            :func:`release_source` builds one from a release function and an executor).
        claim: The privacy claim audited, fixed before the first batch.
        runs: The fixed audit's runs per dataset this audit stands in for; the batches and the budget (at most
            1.3× ``runs``) are :func:`plan_sequential`'s.
        attack: As for :func:`~dpkit.audits.engine.audit_pair`.
        alpha: As for :func:`~dpkit.audits.engine.audit_pair`: the error probability of the whole audit.
        delta: As for :func:`~dpkit.audits.engine.audit_pair`: where ε is read.
        objective: As for :func:`~dpkit.audits.engine.audit_pair`.
        seed: Recorded in the result only.
        executor: The executor's description, recorded in the result only.
        on_look: Called after every piece of a batch with the evidence so far (:class:`Look`), or None.

    Returns:
        The sequential audit's result.

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: If ``runs`` or another option is outside its range, or ``attack`` is an unknown name.
    """
    state = _prepare(
        source,
        claim,
        runs=runs,
        attack=attack,
        alpha=alpha,
        delta=delta,
        objective=objective,
        seed=seed,
        executor=executor,
        on_look=on_look,
    )
    for _ in state.steps():
        pass
    return state.result()


# -- release functions ------------------------------------------------------------------------------------------


def release_source(
    release: Callable[..., np.ndarray],
    dataset0: Any,
    dataset1: Any,
    *,
    seed: int = AUDIT_DEFAULTS.seed,
    executor: Executor | None = None,
    chunk_size: int = 10_000,
    progress: Callable[[int], None] | None = None,
) -> BatchSource:
    """A :data:`BatchSource` running ``release`` on ``dataset0`` and ``dataset1`` with :func:`run_pair`.

    Batch ``i`` uses the ``i``-th child of child 3 of ``SeedSequence(seed)`` (children 0–2 are the fixed audit's
    splits), so the runs depend on the seed and the batch sizes only, never on the executor.

    Args:
        release: The release function, ``release(dataset, rng, n) -> array (n, …)``.
        dataset0: The dataset D.
        dataset1: The neighbouring dataset D′.
        seed: The root seed of the batches.
        executor: Where the runs are made (None: in-process).
        chunk_size: Runs per chunk handed to the executor.
        progress: Called with the number of runs just done, or None.

    Returns:
        The source ``source(n, index, transform) -> (runs on D, runs on D′)``.
    """
    root = spawn_seeds(seed, 4)[3]

    def source(
        n: int, index: int, transform: Callable[[np.ndarray], np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        child = spawn_seeds(root, index + 1)[index]
        return run_pair(
            release,
            dataset0,
            dataset1,
            n,
            child,
            executor=executor,
            chunk_size=chunk_size,
            progress=progress,
            transform=transform,
        )

    return source


def audit_sequential(
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
    on_look: Callable[[Look], None] | None = None,
) -> SequentialResult:
    """The sequential, anytime-valid audit of ``release`` on one neighbouring pair.

    Args:
        release: The release function, ``release(dataset, rng, n) -> array (n, …)``.
        dataset0: The dataset D.
        dataset1: The neighbouring dataset D′.
        claim: The privacy claim audited.
        attack: As for :func:`~dpkit.audits.engine.audit_pair`.
        runs: The fixed audit's runs per dataset this audit stands in for (the budget is
            :func:`plan_sequential`'s).
        seed: The seed of the batches (:func:`release_source`).
        alpha: The audit's error probability.
        delta: Where ε is read, as for :func:`~dpkit.audits.engine.audit_pair`.
        objective: As for :func:`~dpkit.audits.engine.audit_pair`.
        executor: Where the runs are made; None: an :class:`~dpkit.algorithms.executors.AutoExecutor` of this call
            (in-process while the target is fast, every core once a batch is projected at 2 s or more).
        chunk_size: Runs per chunk handed to the executor.
        progress: Called with the number of runs just done, or None.
        on_look: As in :func:`audit_sequential_batches`.

    Returns:
        The sequential audit's result.

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: If an option is outside its range or ``attack`` is an unknown name.
    """
    results, _ = audit_pairs_sequential(
        release,
        [(dataset0, dataset1)],
        claim,
        attacks=[attack],
        runs=runs,
        seed=seed,
        alpha=alpha,
        delta=delta,
        objective=objective,
        executor=executor,
        chunk_size=chunk_size,
        progress=progress,
        on_look=on_look,
    )
    return results[0]


def audit_pairs_sequential(
    release: Callable[..., np.ndarray],
    pairs: Sequence[tuple[Any, Any]],
    claim: Claim,
    *,
    attacks: Sequence[Attack | str],
    runs: int = AUDIT_DEFAULTS.runs,
    seed: int = AUDIT_DEFAULTS.seed,
    alpha: float = AUDIT_DEFAULTS.alpha,
    delta: float | None = None,
    objective: Objective | str | None = None,
    executor: Executor | None = None,
    chunk_size: int = AUDIT_DEFAULTS.chunk_size,
    progress: Callable[[int], None] | None = None,
    on_look: Callable[[Look], None] | None = None,
) -> tuple[list[SequentialResult], int]:
    """Sequential audits of every pair at α/len(pairs) each, taking turns so that a violation of any stops them all.

    Args:
        release: The release function, ``release(dataset, rng, n) -> array (n, …)``.
        pairs: The neighbouring pairs ``(dataset0, dataset1)``; pair i uses seed ``seed + i``.
        claim: The privacy claim audited.
        attacks: One attack (or name) per pair.
        runs: As for :func:`audit_sequential`.
        seed: The first pair's seed.
        alpha: The error probability over every pair together (a union bound).
        delta: Where ε is read.
        objective: As for :func:`~dpkit.audits.engine.audit_pair`.
        executor: Where the runs are made (None: an :class:`~dpkit.algorithms.executors.AutoExecutor`).
        chunk_size: Runs per chunk handed to the executor.
        progress: Called with the number of runs just done, or None.
        on_look: As in :func:`audit_sequential_batches`.

    Returns:
        The results of the audits that concluded (every one, or those that finished before the violation, and the
        violation), and the runs per dataset used over all pairs (unfinished ones included).

    Raises:
        ValueError: If there is no pair or not one attack per pair, or ``chunk_size`` or ``alpha`` is invalid.
    """
    pairs = list(pairs)
    if not pairs or len(attacks) != len(pairs):
        raise ValueError(f"need one attack for each of at least one pair, got {len(attacks)} for {len(pairs)} pairs")
    check_count("chunk_size", chunk_size)
    alpha = check_probability("alpha", alpha)
    own = executor is None
    ex: Executor = AutoExecutor() if executor is None else executor
    try:
        states = [
            _prepare(
                release_source(release, d0, d1, seed=seed + i, executor=ex, chunk_size=chunk_size, progress=progress),
                claim,
                runs=runs,
                attack=att,
                alpha=alpha / len(pairs),
                delta=delta,
                objective=objective,
                seed=seed + i,
                executor=ex.name,
                on_look=on_look,
            )
            for i, ((d0, d1), att) in enumerate(zip(pairs, attacks, strict=True))
        ]
        concluded = take_turns(states)
    finally:
        if own:
            ex.close()
    ran = describe_executor(ex)
    name = release_name(release)
    results = [dataclasses.replace(states[i].result(), executor=ran, target=name) for i in concluded]
    return results, sum(state.runs_used for state in states)


def take_turns(states: Sequence[_Audit]) -> list[int]:
    """Step several sequential audits a piece of a batch at a time each, in turns.

    They run until every one reached its budget or one of them crossed its threshold (the verdict of all together
    is then known).

    Args:
        states: The prepared audits.

    Returns:
        The indices of the audits that concluded, in order.
    """
    steps = [state.steps() for state in states]
    running, concluded, end = list(range(len(states))), [], object()
    while running:
        for i in list(running):
            if next(steps[i], end) is end:  # this audit ran to its budget
                running.remove(i)
                concluded.append(i)
            elif states[i].violated():  # the verdict of every pair together is known: stop them all
                concluded.append(i)
                running = []
                break
    return sorted(concluded)


def audit_sources_sequential(
    sources: Sequence[BatchSource],
    claims: Sequence[Claim],
    *,
    attacks: Sequence[Attack | str | Sequence[Attack]],
    runs: int,
    seeds: Sequence[int],
    alpha: float = AUDIT_DEFAULTS.alpha,
    delta: float | None = None,
    objective: Objective | str | None = None,
    executor: str = "in-process",
    on_look: Callable[[Look], None] | None = None,
) -> tuple[list[SequentialResult | None], list[int], list[int], list[tuple[Look, ...]]]:
    """Sequential audits of several sources at α/len(sources) each, taking turns as :func:`audit_pairs_sequential`.

    The generic form, for sources that are not a release function's pairs (the RL audits' positions, each with its
    own allowance).

    Args:
        sources: The batch sources (:data:`BatchSource`).
        claims: One claim per source.
        attacks: One attack, name or sequence of attacks per source.
        runs: As for :func:`audit_sequential_batches`.
        seeds: One seed per source, recorded in its result.
        alpha: The error probability over every source together (a union bound).
        delta: Where ε is read.
        objective: As for :func:`~dpkit.audits.engine.audit_pair`.
        executor: The executor's description, recorded in the results.
        on_look: As in :func:`audit_sequential_batches`.

    Returns:
        For each source: its result (None when another source's violation stopped it first), the runs per dataset
        it used, its budget, and its looks (the evidence after every piece of a batch).

    Raises:
        ValueError: If there is no source, the claims, attacks and seeds are not one per source, or ``alpha`` is
            not a probability.
    """
    if not sources or not (len(sources) == len(claims) == len(attacks) == len(seeds)):
        raise ValueError(
            f"need one claim, attack and seed for each of at least one source, got {len(sources)} sources, "
            f"{len(claims)} claims, {len(attacks)} attacks, {len(seeds)} seeds"
        )
    alpha = check_probability("alpha", alpha)
    states = [
        _prepare(
            source,
            claim,
            runs=runs,
            attack=att,
            alpha=alpha / len(sources),
            delta=delta,
            objective=objective,
            seed=int(sd),
            executor=executor,
            on_look=on_look,
        )
        for source, claim, att, sd in zip(sources, claims, attacks, seeds, strict=True)
    ]
    concluded = set(take_turns(states))
    return (
        [state.result() if i in concluded else None for i, state in enumerate(states)],
        [state.runs_used for state in states],
        [state.plan.budget for state in states],
        [tuple(state.looks) for state in states],
    )
