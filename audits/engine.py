"""The audit: run a release function on neighbouring datasets, attack, bound, and give a verdict.

``audit(release, dataset0, dataset1, claim)`` runs ``release`` ``runs`` times on each dataset, in three
independent splits with their own seeds:

* a *training* split (at most :data:`TRAIN_CAP` runs per dataset) — the only outputs ever held in
  memory — on which the learned attacks are fitted (absent for attacks that need no fit);
* a *selection* split, on which the attack (``attack="auto"``: every attack of
  :data:`~dpkit.audits.attacks.AUTO_ATTACKS`) and its thresholds are chosen;
* an *evaluation* split, scored by the chosen attack only, on which the Clopper–Pearson bounds are
  computed.

The selection and evaluation splits are *streamed*: each chunk of runs is scored where it is produced
(in-process, on a process pool or on Dask; :mod:`dpkit.algorithms.executors`) and only scores come back, so
memory does not grow with the outputs. Since the attack, its thresholds and the claim are all fixed
before any evaluation run is scored, the bounds hold at confidence 1 − α without a correction for
the number of attacks tried on the selection split.

Three thresholds (equal error rate, μ-maximising, ε-maximising) are evaluated at α/3 each (a union
bound); :func:`dpkit.audits.verdicts.judge` compares their error-rate bounds with the claim's whole trade-off
curve and gives ``violation``, ``consistent`` or — when the audit lacks the power to see a violation —
``inconclusive``. With several neighbouring pairs, :func:`audit_pairs` splits α evenly over the pairs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.validation import check_choice, check_count, check_probability
from dpkit.algorithms.executors import AutoExecutor, Executor, describe_executor, run_pair, spawn_seeds

from .attacks import AUTO_ATTACKS, Attack, make_attack
from .claims import Claim
from .estimators import OBJECTIVES, AuditEstimate, estimate, select_threshold
from .verdicts import VERDICTS, Judgement, judge

if TYPE_CHECKING:
    from .sequential import SequentialResult

__all__ = ["AUTO", "TRAIN_CAP", "VERDICTS", "AuditResult", "PairsResult", "audit", "audit_outputs", "audit_pairs"]

#: The attack name that fits every attack of :data:`~dpkit.audits.attacks.AUTO_ATTACKS` and chooses one.
AUTO = "auto"
#: The most training runs per dataset (the only outputs held in memory): enough to fit any attack.
TRAIN_CAP = 100_000


@dataclass(frozen=True)
class AuditResult:
    """One audit of one neighbouring pair: the bounds, the judgement against the claim, the attack."""

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

    @property
    def verdict(self) -> str:
        return self.judgement.verdict

    @property
    def claimed_epsilon(self) -> float:
        return self.judgement.claimed_epsilon

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
    def epsilon_gdp_reading(self) -> float:
        """ε at the audit's δ of the μ lower bound read as μ-GDP (valid against claims that imply GDP)."""
        mu = self.mu_lower
        return 0.0 if mu <= 0.0 else gdp_epsilon(min(mu, 1e3), self.delta if self.delta > 0 else 1e-5)

    @property
    def epsilon_estimate(self) -> float | None:
        """ε at the audit's δ of the point estimate of μ (the strongest test's) read as μ-GDP: an estimate beside
        the certified :attr:`epsilon_gdp_reading`, not a bound; ``None`` when the estimate is not finite."""
        mu = self.estimate.mu_estimate
        if not math.isfinite(mu):
            return None
        return 0.0 if mu <= 0.0 else gdp_epsilon(min(mu, 1e3), self.delta if self.delta > 0 else 1e-5)

    def to_dict(self) -> dict[str, Any]:
        """Every number of the audit, under the keys every audit result uses. Deterministic: the
        executor and the wall time are left out, so the same seed gives the same dictionary under
        every executor and worker count."""
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
            "epsilon_estimate": self.epsilon_estimate,
            "candidates": [dict(c) for c in self.candidates],
            "tests": [e.to_dict() for e in self.estimates],
        }


def _split(n: int, fractions: tuple[float, ...]) -> list[slice]:
    cuts = np.floor(np.cumsum((0.0,) + fractions) * n).astype(int)
    cuts[-1] = n
    return [slice(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


def _candidates(attack: Attack | str | Sequence[Attack]) -> list[Attack]:
    """The attacks to fit and choose from: every :data:`AUTO_ATTACKS` for ``"auto"``, the attacks of a sequence,
    else the one given."""
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
class _ScoreAll:
    """Scores of every candidate attack, one column each (a picklable transform for the executors)."""

    attacks: tuple[Attack, ...]

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return np.stack([np.asarray(a.score(outputs), dtype=float) for a in self.attacks], axis=1)


def _fit(candidates: list[Attack], out0: np.ndarray, out1: np.ndarray) -> tuple[list[Attack], list[dict[str, Any]]]:
    """Fit the candidates on the training split. With several (``auto``), one whose fit fails on these
    outputs (e.g. constant outputs) is left out with the reason recorded; a single attack's failure is raised."""
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


def _bound(claim: Claim, est: AuditEstimate) -> float:
    return est.mu_lower if claim.unit == "mu" else est.epsilon_lower


def _choose(
    attacks: list[Attack],
    sel0: np.ndarray,
    sel1: np.ndarray,
    claim: Claim,
    delta: float,
    share: float,
    objectives: tuple[str, ...],
) -> tuple[int, list[float], list[dict[str, Any]]]:
    """On the selection split only: each attack's thresholds (one per objective) and the bound they give
    there (in the claim's unit); the attack that refutes the claim there, else the largest bound, wins
    (the first, i.e. the cheapest, on ties)."""
    best, best_key, best_thresholds = 0, (False, -math.inf), [0.0]
    rows: list[dict[str, Any]] = []
    for j, att in enumerate(attacks):
        s0, s1 = sel0[:, j], sel1[:, j]
        if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
            rows.append({"attack": att.name, "skipped": "non-finite scores on the selection split"})
            continue
        thresholds = [select_threshold(s0, s1, obj, delta, share) for obj in objectives]
        ests = [estimate(s0, s1, t, share, delta) for t in thresholds]
        key = (any(claim.refuted_by(e.fpr_upper, e.fnr_upper) for e in ests), max(_bound(claim, e) for e in ests))
        rows.append({"attack": att.name, "selection_bound": key[1], "selection_refutes": key[0]})
        if key > best_key:
            best, best_key, best_thresholds = j, key, thresholds
    if best_key[1] == -math.inf:
        raise ValueError("every attack gave non-finite scores on the selection split")
    return best, best_thresholds, rows


def _result(
    claim: Claim,
    attack: Attack,
    thresholds: list[float],
    ev0: np.ndarray,
    ev1: np.ndarray,
    *,
    share: float,
    alpha: float,
    delta: float,
    runs: int,
    seed: int,
    executor: str,
    started: float,
    candidates: list[dict[str, Any]],
) -> AuditResult:
    estimates = tuple(estimate(ev0, ev1, t, share, delta) for t in thresholds)
    judgement = judge(claim, estimates, delta=delta, alpha=alpha, n0=ev0.size, n1=ev1.size)
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


def _check_common(
    claim: object, alpha: float, objective: str | None, delta: float | None
) -> tuple[float, tuple[str, ...], float]:
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    alpha = check_probability("alpha", alpha)
    objectives = OBJECTIVES if objective is None else (check_choice("objective", objective, OBJECTIVES),)
    delta = claim.default_delta() if delta is None else float(delta)
    if not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must lie in [0, 1), got {delta!r}")
    return alpha, objectives, delta


def audit(
    release: Callable[..., np.ndarray],
    dataset0: Any,
    dataset1: Any,
    claim: Claim,
    *,
    attack: Attack | str = AUTO,
    runs: int = 20_000,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float | None = None,
    objective: str | None = None,
    executor: Executor | None = None,
    chunk_size: int = 10_000,
    progress: Callable[[int], None] | None = None,
) -> AuditResult:
    """Audit ``release`` on one neighbouring pair against ``claim``, streaming (see the module docstring).

    ``runs`` independent runs per dataset. ``attack``: ``"auto"`` (default: every attack of
    :data:`~dpkit.audits.attacks.AUTO_ATTACKS` fitted, one chosen on the selection split), a name for
    :func:`~dpkit.audits.attacks.make_attack`, or an :class:`~dpkit.audits.attacks.Attack` (fitted attacks and
    the executor's workers must be able to pickle it). Splits: learned attacks are fitted on
    min(runs/3, :data:`TRAIN_CAP`) runs, a quarter of the rest selects, the remainder is evaluated;
    an attack that needs no fit selects on 20% and is evaluated on 80%. ``delta`` is where ε is read
    (default: the claim's δ for dp claims, else 1e-5). ``objective`` ("eer", "mu" or "epsilon", see
    :func:`~dpkit.audits.estimators.select_threshold`) restricts the thresholds; by default all three are
    evaluated at α/3 each — the equal-error threshold is the robust one for symmetric trade-offs, the
    μ-maximising one finds asymmetric ones, the ε-maximising one sits in a tail. ``executor=None`` is an
    :class:`~dpkit.algorithms.executors.AutoExecutor` of this call: in-process while the target is fast, every
    core once the work ahead of a split is projected at 2 s or more in-process.
    """
    alpha, objectives, delta = _check_common(claim, alpha, objective, delta)
    if executor is None:
        with AutoExecutor() as auto:
            return audit(
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
    candidates = _candidates(attack)
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
        candidates, notes = _fit(candidates, out0, out1)
        del out0, out1
    sel0, sel1 = run_pair(
        release, dataset0, dataset1, n_select, seed_select, transform=_ScoreAll(tuple(candidates)), **options
    )
    share = alpha / len(objectives)
    chosen, thresholds, rows = _choose(candidates, sel0, sel1, claim, delta, share, objectives)
    del sel0, sel1
    ev0, ev1 = run_pair(
        release, dataset0, dataset1, n_eval, seed_eval, transform=_ScoreAll((candidates[chosen],)), **options
    )
    return _result(
        claim,
        candidates[chosen],
        thresholds,
        ev0[:, 0],
        ev1[:, 0],
        share=share,
        alpha=alpha,
        delta=delta,
        runs=runs,
        seed=int(seed),
        started=started,
        candidates=notes + rows,
        executor=describe_executor(executor),
    )


def audit_outputs(
    out0: np.ndarray,
    out1: np.ndarray,
    claim: Claim,
    *,
    attack: Attack | str | Sequence[Attack] = AUTO,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float | None = None,
    objective: str | None = None,
    executor: str = "in-process",
    started: float | None = None,
    splits: tuple[float, float, float] | None = None,
) -> AuditResult:
    """Split, attack, bound and judge outputs already computed (``out0`` on D, ``out1`` on D′, one row
    per run, as many rows each), in memory — for callers that produce the outputs themselves (e.g. the
    RL audits). ``attack`` may also be a sequence of attacks to choose from on the selection split. Splits
    (``splits``: the shares of training, selection and evaluation): by default a learned attack (or ``auto``) is
    fitted on a third, selects on a sixth and is bounded on half; an attack that needs no fit selects on 20% and
    is bounded on 80%."""
    alpha, objectives, delta = _check_common(claim, alpha, objective, delta)
    out0, out1 = np.asarray(out0), np.asarray(out1)
    if out0.shape[0] != out1.shape[0]:
        raise ValueError(f"out0 and out1 must hold as many runs, got {out0.shape[0]} and {out1.shape[0]}")
    runs = check_count("runs", out0.shape[0])
    if runs < 6:
        raise ValueError(f"runs must be >= 6 (train, selection and evaluation splits), got {runs}")
    candidates = _candidates(attack)
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
    train, select, evaluate = _split(runs, fractions)
    notes: list[dict[str, Any]] = []
    if needs_fit:
        candidates, notes = _fit(candidates, out0[train], out1[train])
    score = _ScoreAll(tuple(candidates))
    share = alpha / len(objectives)
    chosen, thresholds, rows = _choose(
        candidates, score(out0[select]), score(out1[select]), claim, delta, share, objectives
    )
    att = candidates[chosen]
    return _result(
        claim,
        att,
        thresholds,
        np.asarray(att.score(out0[evaluate]), dtype=float),
        np.asarray(att.score(out1[evaluate]), dtype=float),
        share=share,
        alpha=alpha,
        delta=delta,
        runs=runs,
        seed=int(seed),
        executor=executor,
        started=started,
        candidates=notes + rows,
    )


@dataclass(frozen=True)
class PairsResult:
    """Audits of several neighbouring pairs at α/len(pairs) each; the verdict is the worst one. Sequential audits
    (:class:`~dpkit.audits.sequential.SequentialResult`) stop at the first pair that is a violation."""

    results: tuple[AuditResult | SequentialResult, ...]
    alpha: float
    #: Sequential audits: the runs per dataset used over every pair (those left unfinished included).
    runs_used: int | None = None

    @property
    def strongest(self) -> AuditResult | SequentialResult:
        """The pair with the largest μ lower bound (then ε lower bound)."""
        return max(self.results, key=lambda r: (r.mu_lower, r.epsilon_lower))

    @property
    def verdict(self) -> str:
        """``violation`` if any pair is one; else the strongest pair's verdict (``inconclusive`` when it lacks
        power)."""
        if any(r.verdict == "violation" for r in self.results):
            return "violation"
        return self.strongest.verdict

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
    attack: Attack | str | Callable[[], Attack] = AUTO,
    seed: int = 0,
    sequential: bool = False,
    **options: Any,
) -> PairsResult:
    """Audit every pair in ``pairs`` at confidence 1 − α/len(pairs) each (a union bound).

    ``attack`` may be a factory (called once per pair) so that learned attacks are fitted afresh;
    a name makes a new attack per pair. Pair i uses seed ``seed + i``. ``sequential``: the pairs' sequential
    audits take turns (:func:`~dpkit.audits.sequential.audit_pairs_sequential`; ``options`` may then hold
    ``on_look``) and all stop at the first violation, the verdict of every pair together being known; the
    results hold the audits that concluded (a sequential audit copies a learned attack before each fit, so
    one instance may serve every pair).
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
        from .sequential import audit_pairs_sequential

        done, used = audit_pairs_sequential(release, pairs, claim, attacks=attacks, seed=seed, alpha=alpha, **options)
        return PairsResult(tuple(done), alpha, runs_used=used)
    results = [
        audit(release, d0, d1, claim, attack=att, seed=seed + i, alpha=alpha / len(pairs), **options)
        for i, ((d0, d1), att) in enumerate(zip(pairs, attacks, strict=True))
    ]
    return PairsResult(tuple(results), alpha)
