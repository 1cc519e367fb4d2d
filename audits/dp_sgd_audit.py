"""One-run audits of a DP-SGD training run (Steinke, Nasr & Jagielski 2023; the f-DP reading of Mahloujifar et al.
2024): M canaries, each in the training set with probability ½, one run, the guesses tested against the whole
trade-off curve of the run's claim (:class:`~dpkit.audits.dp_sgd_claim.DpSgdClaim`, from dpkit's PLD).

White-box (every iterate, Dirac gradient canaries) runs two tests, at 0.9α and 0.1α: the canaries' alignment with the
updates (the attack with power against DP-SGD) and their step-to-step jumps (noise reused across steps).
Black-box (final model, input canaries) scores minus the loss. The guess count comes from the claim alone; the
verdict is ``consistent`` only where the same audit of an ideal run at the claim certifies at least half of its ε.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from dpkit.accountant.validation import check_count, check_index, check_positive, check_probability

from .dp_sgd_canaries import (
    ThreatModel,
    TrainingSet,
    alignment_scores,
    alignments,
    dirac_canaries,
    jump_scores,
)
from .dp_sgd_claim import DpSgdClaim
from .one_run import GUESS_SHARES, MAX_CANARIES, run_counts
from .one_run_estimators import one_run_fdp_epsilon_lower, one_run_fdp_p_value, one_run_mu_lower
from .summary import POWER_RATIO_NEEDED
from .verdicts import Verdict

__all__ = ["CANARY_NORM_FACTOR", "TrainingAuditResult", "audit_training_run", "judge_training_run"]

#: A Dirac canary's gradient norm, in clipping norms: a loop that does not clip lets it through at this size.
CANARY_NORM_FACTOR = 10.0
#: Simulated runs of the ideal DP-SGD at the claim behind the guess count and the power.
POWER_RUNS = 41
#: The guess count is the one that certifies most against DP-SGD with the claim's noise over this factor.
DESIGN_MARGIN = 1.5


@dataclass(frozen=True)
class TrainingAuditResult:
    """A one-run audit of a DP-SGD training run against its claim.

    Each test runs at its share of α (Bonferroni; ``tests`` holds each one's p-value over its share) and
    ``p_value`` is the smallest: ``violation`` when it is at most α. ``epsilon_lower`` reads the right guesses in
    the claim's family (DP-SGD at its q and T, any noise); ``epsilon_lower_any`` assumes nothing of the mechanism
    (the (ε, δ) curve's reading). ``power`` is
    ``epsilon_lower`` of the median ideal run at the claim (:data:`POWER_RUNS` simulated): below half the claimed ε,
    or for black-box (no ideal black-box attack is known), the verdict is ``inconclusive``, never ``consistent``.
    """

    claim: DpSgdClaim
    threat: ThreatModel
    delta: float
    alpha: float
    coins: np.ndarray
    scores: np.ndarray
    guesses: int
    correct: int
    tests: tuple[tuple[str, int, float], ...]
    p_value: float
    epsilon_lower: float
    epsilon_lower_any: float
    claimed_epsilon: float
    power: float
    ideal_most: int
    seed: int
    seconds: float

    @property
    def canaries(self) -> int:
        return int(self.coins.shape[0])

    @property
    def power_ratio(self) -> float:
        return self.power / self.claimed_epsilon if self.claimed_epsilon > 0 else math.inf

    @property
    def verdict(self) -> Verdict:
        if self.p_value <= self.alpha:
            return Verdict.VIOLATION
        if (
            self.threat is ThreatModel.BLACK_BOX
            or self.power_ratio < POWER_RATIO_NEEDED
            or self.correct > self.ideal_most
        ):
            return Verdict.INCONCLUSIVE
        return Verdict.CONSISTENT

    @property
    def reason(self) -> str:
        """Why the verdict is what it is, in a sentence."""
        if self.p_value <= self.alpha:
            name, right, _ = min(self.tests, key=lambda t: t[2])
            said = f"{right} of {self.guesses} guesses right, p = {self.p_value:.3g} <= α = {self.alpha:g}"
            return f"the {name} test: {said}"
        if self.threat is ThreatModel.BLACK_BOX:
            return "no violation; a black-box audit has no power guarantee at the claim, so it cannot say consistent"
        if self.power_ratio < POWER_RATIO_NEEDED:
            certified = f"{self.power_ratio:.3g} of its ε (< {POWER_RATIO_NEEDED:g})"
            return f"too few canaries: an ideal run at the claim would certify {certified}"
        if self.correct > self.ideal_most:
            return (
                f"{self.correct} right guesses, more than any of {POWER_RUNS} ideal runs at the claim "
                f"({self.ideal_most}), without a rejection: more canaries would tell"
            )
        return "no violation, and the power to see one"

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data (JSON-ready).

        Returns:
            The verdict, the threat model, the claim, the bounds beside the accountant's ε, the tests and counts.
        """
        return {
            "mode": "one-run training",
            "verdict": self.verdict,
            "reason": self.reason,
            "threat_model": self.threat.value,
            "threat_statement": self.threat.statement,
            "claim": self.claim.to_dict(),
            "delta": self.delta,
            "claimed_epsilon": self.claimed_epsilon,
            "epsilon_lower": self.epsilon_lower,
            "epsilon_lower_reading": "DP-SGD at the claim's q and T, any noise multiplier",
            "epsilon_lower_any": self.epsilon_lower_any,
            "p_value": self.p_value,
            "tests": [{"score": n, "correct": c, "p_value": p} for n, c, p in self.tests],
            "power": None if self.threat is ThreatModel.BLACK_BOX else self.power,
            "power_ratio": None if self.threat is ThreatModel.BLACK_BOX else self.power_ratio,
            "ideal_most_correct": self.ideal_most,
            **run_counts(self),
        }


#: The share of α of the jumps test (white-box): noise reused across steps leaves no doubt, so it needs little.
JUMPS_SHARE = 0.1


def _shares(names: list[str]) -> list[float]:
    """Each test's share of α (they add up to 1): the jumps test :data:`JUMPS_SHARE`, the other the rest."""
    if names == ["alignment", "jumps"]:
        return [1.0 - JUMPS_SHARE, JUMPS_SHARE]
    return [1.0 / len(names)] * len(names)


def _right(coins: np.ndarray, scores: np.ndarray, guesses: int) -> int:
    """Right guesses among "in" on the guesses/2 highest scores and "out" on the guesses/2 lowest."""
    order = np.argsort(scores, kind="stable")
    k = guesses // 2
    return int(coins[order[-k:]].sum() + (1 - coins[order[:k]]).sum())


def _ideal_right(claim: DpSgdClaim, *, m: int, counts: list[int], noise: float) -> np.ndarray:
    """Right guesses (runs × counts) of the alignment score of ideal DP-SGD runs: a canary in is sampled
    Binomial(T, q) times, each adding C to its coordinate; the noise is N(0, T·noise²C²). A fixed seed: a function
    of the claim and the canaries alone."""
    rng = np.random.default_rng(0x5D)
    out = np.empty((POWER_RUNS, len(counts)), dtype=np.int64)
    for i in range(POWER_RUNS):
        coins = rng.integers(0, 2, m)
        scores = coins * rng.binomial(claim.steps, claim.sampling_rate, m) + noise * math.sqrt(claim.steps) * (
            rng.standard_normal(m)
        )
        out[i] = [_right(coins, scores, r) for r in counts]
    return out


def _design(claim: DpSgdClaim, *, m: int, level: float) -> tuple[int, np.ndarray]:
    """The guess count (from the claim alone) and the ideal runs' right guesses at it."""
    counts = sorted({2 * max(1, math.floor(share * m / 2)) for share in GUESS_SHARES})
    sharp = _ideal_right(claim, m=m, counts=counts, noise=claim.noise_multiplier / DESIGN_MARGIN)
    mus = [
        one_run_mu_lower(canaries=m, guesses=r, correct=int(np.median(sharp[:, j])), alpha=level)
        for j, r in enumerate(counts)
    ]
    r = counts[int(np.argmax(mus))]
    return r, _ideal_right(claim, m=m, counts=[r], noise=claim.noise_multiplier)[:, 0]


def judge_training_run(
    coins: np.ndarray,
    scores: dict[str, np.ndarray],
    claim: DpSgdClaim,
    *,
    threat: ThreatModel,
    alpha: float = 0.05,
    delta: float = 1e-5,
    seed: int = 0,
    seconds: float = 0.0,
) -> TrainingAuditResult:
    """The verdict of one training run's coins and scores (one array per test) against ``claim``.

    Args:
        coins: 1 for each canary in the training set, 0 for each left out.
        scores: The scores of each test, by name (the first is the headline's: its right guesses and power; the
            bounds are the largest of the tests').
        claim: The run's claim.
        threat: The threat model the scores come from.
        alpha: The level (shared among the tests: :data:`JUMPS_SHARE` to the jumps test, else equally).
        delta: Where ε is read.
        seed: Recorded in the result.
        seconds: Recorded in the result.

    Returns:
        The result.

    Raises:
        ValueError: If the coins are not 0/1 of at least 2 canaries, or a score is not finite or not of their shape.
    """
    c = np.asarray(coins).astype(np.int64)
    m = c.shape[0]
    if c.ndim != 1 or m < 2 or not np.isin(c, (0, 1)).all():
        raise ValueError(f"coins must be a 0/1 vector of at least 2 canaries, got shape {c.shape}")
    for name, s in scores.items():
        if s.shape != c.shape or not np.isfinite(s).all():
            raise ValueError(f"the {name} scores must be {m} finite numbers, got shape {s.shape}")
    level = check_probability("alpha", alpha)
    shares = _shares(list(scores))
    head_level = level * shares[0]
    r, ideal = _design(claim, m=m, level=head_level)
    tests = []
    for (name, s), share in zip(scores.items(), shares):
        v = _right(c, s, r)
        p_raw = one_run_fdp_p_value(canaries=m, guesses=r, correct=v, trade_off=claim.trade_off)
        tests.append((name, v, min(1.0, p_raw / share)))  # each test at its share of α: p over the share
    p = min(t[2] for t in tests)
    lower = lower_any = 0.0
    for (_, v, _), share in zip(tests, shares):
        kw: dict[str, Any] = {"canaries": m, "guesses": r, "correct": v, "alpha": level * share, "delta": delta}
        if v > 0:
            lower = max(lower, claim.epsilon_lower(**kw))
            lower_any = max(lower_any, one_run_fdp_epsilon_lower(**kw))
    power = 0.0  # black-box: no ideal attack is known (the verdict is never consistent)
    if threat is ThreatModel.WHITE_BOX:
        v_ideal = int(np.median(ideal))
        power = claim.epsilon_lower(canaries=m, guesses=r, correct=v_ideal, alpha=head_level, delta=delta)
    head = next(iter(scores.values()))
    return TrainingAuditResult(
        claim, threat, delta, alpha, c, head, r, tests[0][1], tuple(tests), p, lower, lower_any,
        claim.epsilon_at(delta), power, int(ideal.max()), seed, seconds,
    )  # fmt: skip


def _base(dataset: Any) -> tuple[np.ndarray, np.ndarray]:
    """The user's own examples as (features, labels) arrays (none: an empty set)."""
    if dataset is None:
        return np.zeros((0, 0)), np.zeros(0)
    try:
        x, y = dataset
    except (TypeError, ValueError):
        raise ValueError("dataset must be a pair (features, labels)") from None
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim < 2 or y.shape != (x.shape[0],):
        raise ValueError(f"dataset must be features (n, …) and labels (n,), got shapes {x.shape} and {y.shape}")
    return x, y


def audit_training_run(
    train: Callable[[TrainingSet, np.random.Generator], Any],
    *,
    claim: DpSgdClaim,
    canaries: int = 1000,
    threat: ThreatModel | str = ThreatModel.WHITE_BOX,
    parameters: int | None = None,
    dataset: Any = None,
    loss: Callable[[Any, np.ndarray, np.ndarray], Any] | None = None,
    clip_norm: float = 1.0,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float = 1e-5,
    progress: Callable[[float], None] | None = None,
) -> TrainingAuditResult:
    """Train once with ``canaries`` canaries, each in with probability ½, and judge the run against ``claim``.

    Args:
        train: ``train(dataset, rng)``: DP-SGD on a :class:`~dpkit.audits.dp_sgd_canaries.TrainingSet` (every
            gradient canary one more example); white-box: returns every iterate θ₀…θ_T, (T + 1, parameters);
            black-box: the final parameters (or every iterate: the last is read).
        claim: What the run claims (σ, q, T).
        canaries: M, at least 2.
        threat: ``white-box`` (Dirac gradient canaries, every iterate) or ``black-box`` (input canaries, the loss).
        parameters: White-box: the number of parameters (flattened), at least M.
        dataset: The user's examples (features, labels); black-box canaries are its rows, shuffled, random labels.
        loss: Black-box: ``loss(params, features, labels)``, one loss per example.
        clip_norm: C, the clipping norm the run claims (a Dirac canary's norm is :data:`CANARY_NORM_FACTOR` × C).
        seed: The seed of the canaries, coins and the run's generator.
        alpha: The level.
        delta: Where ε is read.
        progress: Called with 1 after each of the 4 stages (canaries, training, scores, judgement).

    Returns:
        The result.

    Raises:
        ValueError: A bad value, a threat model's missing input (parameters, loss, dataset), an option of the other
            threat model, or train's output not of the shape the threat model needs (naming it).
        TypeError: If ``claim`` is not a DpSgdClaim or ``train`` is not callable.
    """
    if not isinstance(claim, DpSgdClaim):
        raise TypeError(
            f"claim must be a DpSgdClaim (noise multiplier, sampling rate, steps), got {type(claim).__name__}"
        )
    if not callable(train):
        raise TypeError(f"train must be callable, got {type(train).__name__}")
    tm = ThreatModel(threat)
    m = check_count("canaries", canaries) if canaries != 0 else 0
    if m < 2 or m > MAX_CANARIES:
        raise ValueError(f"canaries must be between 2 and {MAX_CANARIES:,}, got {canaries:g}")
    seed = check_index("seed", seed)
    check_positive("clip_norm", clip_norm)
    tick = progress or (lambda _: None)
    started = time.perf_counter()
    canary_rng, coin_rng, run_rng = np.random.default_rng(seed).spawn(3)
    coins = coin_rng.integers(0, 2, m)
    x, y = _base(dataset)
    if tm is ThreatModel.WHITE_BOX:
        if loss is not None:
            raise ValueError("loss applies to a black-box audit (white-box scores the updates)")
        if parameters is None:
            raise ValueError("a white-box audit needs parameters: the number of the model's parameters (>= canaries)")
        gradient = dirac_canaries(m, parameters=parameters, norm=CANARY_NORM_FACTOR * clip_norm, rng=canary_rng)
        data = TrainingSet(x, y, gradient.subset(np.flatnonzero(coins)))
    else:
        if loss is None or dataset is None:
            raise ValueError("a black-box audit needs dataset (its rows make the canaries) and loss(params, x, y)")
        if parameters is not None:
            raise ValueError("parameters applies to a white-box audit (Dirac canaries)")
        rows = canary_rng.integers(0, x.shape[0], m)
        cx = canary_rng.permuted(x[rows].reshape(m, -1), axis=1).reshape((m, *x.shape[1:]))
        cy = canary_rng.integers(0, 2, m).astype(float)
        inside = np.flatnonzero(coins)
        data = TrainingSet(np.concatenate([x, cx[inside]]), np.concatenate([y, cy[inside]]))
    tick(1)
    output = train(data, run_rng)
    tick(1)
    if tm is ThreatModel.WHITE_BOX:
        iterates = np.asarray(output, dtype=float)
        want = (claim.steps + 1, int(parameters))  # type: ignore[arg-type]
        if iterates.shape != want:
            raise ValueError(
                f"{getattr(train, '__name__', 'train')} must return every iterate θ0…θT of a white-box run, shape "
                f"{want} (steps + 1, parameters), got {iterates.shape}"
            )
        if not np.isfinite(iterates).all():
            raise ValueError("train returned a non-finite iterate")
        aligned = alignments(iterates, gradient)
        scores = {"alignment": alignment_scores(aligned), "jumps": jump_scores(aligned)}
    else:
        final = output[-1] if np.ndim(output) == 2 and np.shape(output)[0] == claim.steps + 1 else output
        losses = np.asarray(cast("Callable[..., Any]", loss)(final, cx, cy), dtype=np.float64)  # loss: checked above
        if losses.shape != (m,) or not np.isfinite(losses).all():
            raise ValueError(f"loss(params, features, labels) must return {m} finite losses, got shape {losses.shape}")
        scores = {"loss": -losses}
    tick(1)
    result = judge_training_run(coins, scores, claim, threat=tm, alpha=alpha, delta=delta, seed=seed)
    tick(1)
    return dataclasses.replace(result, seconds=time.perf_counter() - started)
