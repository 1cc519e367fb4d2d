"""One-run audits of release functions: many canary records in one dataset, one run (Steinke, Nasr & Jagielski
2023; the f-DP analysis of Mahloujifar, Melis & Chaudhuri 2024).

Each of M canaries joins the dataset with probability ½; the release runs once; the auditor guesses "in" for the k
highest scores and "out" for the k lowest (k chosen from the claim alone), and the count of right guesses is
tested against the claim's whole trade-off curve. :func:`audit_one_run_target` runs a release function,
:func:`judge_one_run` judges coins and scores of one's own. The design and why a GDP claim is caught in one run:
see docs/explanation/verdicts.md ("One-run audits").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.validation import check_count, check_index, check_probability, shown_int
from dpkit.audit_modes import AuditMode

from .claims import Claim, ClaimKind
from .one_run_estimators import (
    one_run_fdp_epsilon_lower,
    one_run_fdp_p_value,
    one_run_fdp_rejects,
    one_run_mu_lower,
)
from .summary import POWER_RATIO_NEEDED, SingleRun

__all__ = [
    "GUESS_SHARES",
    "MAX_CANARIES",
    "OneRunResult",
    "RunCounts",
    "audit_one_run_target",
    "design_guesses",
    "judge_one_run",
    "run_counts",
]

#: The guess counts considered (each: the k highest and the k lowest scores, 2k guesses), as shares of the
#: canaries. One is chosen before the run, from the claim alone: the one with the most power at the claim.
GUESS_SHARES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
#: The most canary records one run may hold.
MAX_CANARIES = 10_000_000


class RunCounts(Protocol):
    """What a one-run audit's result counts of its run (a release's :class:`OneRunResult` and a DP-SGD run's
    :class:`~dpkit.audits.dp_sgd_audit.TrainingAuditResult`): the keys :func:`run_counts` gives their ``to_dict``."""

    @property
    def alpha(self) -> float: ...

    @property
    def coins(self) -> np.ndarray: ...

    @property
    def canaries(self) -> int: ...

    @property
    def guesses(self) -> int: ...

    @property
    def correct(self) -> int: ...

    @property
    def seed(self) -> int: ...

    @property
    def seconds(self) -> float: ...


def run_counts(result: RunCounts) -> dict[str, Any]:
    """The last keys of a one-run audit's ``to_dict`` (a release's or a DP-SGD run's): the confidence and the run's
    counts.

    Args:
        result: A one-run audit's result.

    Returns:
        ``confidence`` (1 − α), ``canaries``, ``included`` (the canaries whose coin put them in), ``guesses``,
        ``correct``, ``seed`` and ``seconds``, in that order.
    """
    return {
        "confidence": 1.0 - result.alpha,
        "canaries": result.canaries,
        "included": int(result.coins.sum()),
        "guesses": result.guesses,
        "correct": result.correct,
        "seed": result.seed,
        "seconds": result.seconds,
    }


def _claim_curve(claim: Claim) -> dict[str, Any]:
    """The keyword arguments that give :func:`one_run_fdp_p_value` the claim's trade-off curve."""
    if claim.mu is not None:
        return {"mu": float(claim.mu)}
    if claim.kind == ClaimKind.DP:
        return {"epsilon": float(claim.epsilon), "delta": float(claim.delta)}  # type: ignore[arg-type]
    return {"trade_off": lambda x: float(claim.trade_off(x)[()])}


@dataclass(frozen=True, repr=False)
class OneRunResult(SingleRun):
    """A one-run audit against a claim: the run's coins and scores, the guesses made and how many were right, and
    the verdict.

    ``p_value`` bounds the probability of ``correct`` or more right guesses of ``guesses`` for every mechanism
    with the claim's trade-off curve: ``violation`` when it is at most α. ``mu_lower`` and ``epsilon_lower`` (at
    ``delta``) hold with confidence 1 − α. ``power`` is what the same canaries and guesses certify with the median
    number of right guesses of the ideal mechanism exactly at the claim (μ for claims that imply GDP, else ε at
    δ); below half the claim the verdict is ``inconclusive``, never ``consistent``. ``ideal_most`` is the most right
    guesses of those simulated runs: more right guesses than that, without a rejection, point to a violation the
    run cannot certify, and the verdict is ``inconclusive`` too (a mechanism exactly at the claim gives more with
    probability 1/(:data:`POWER_RUNS` + 1))."""

    claim: Claim
    delta: float
    alpha: float
    coins: np.ndarray
    scores: np.ndarray
    guesses: int
    correct: int
    p_value: float
    mu_lower: float
    epsilon_lower: float
    power: float
    seed: int
    seconds: float
    reach: float | None = None
    ideal_most: int | None = None

    @property
    def canaries(self) -> int:
        return int(self.coins.shape[0])

    @property
    def claimed_epsilon(self) -> float:
        return float(self.claim.epsilon_at(self.delta))

    @property
    def claimed(self) -> float:
        """The claim in the unit of ``power``: μ for claims that imply GDP, else ε at ``delta``."""
        return float(self.claim.mu) if self.claim.mu is not None else self.claimed_epsilon

    @property
    def power_ratio(self) -> float:
        return self.power / self.claimed if self.claimed > 0 else math.inf

    @property
    def verdict(self) -> str:
        if self.p_value <= self.alpha:
            return "violation"
        if self.power_ratio < POWER_RATIO_NEEDED or (self.ideal_most is not None and self.correct > self.ideal_most):
            return "inconclusive"
        return "consistent"

    @property
    def reason(self) -> str:
        """Why the verdict is what it is, in a sentence."""
        if self.p_value <= self.alpha:
            return f"{self.correct} of {self.guesses} guesses right: p = {self.p_value:.3g} <= α = {self.alpha:g}"
        if self.power_ratio < POWER_RATIO_NEEDED:
            return (
                f"too few canaries or guesses: the ideal mechanism at the claim would certify {self.power_ratio:.3g} "
                f"of it (< {POWER_RATIO_NEEDED:g})"
            )
        if self.ideal_most is not None and self.correct > self.ideal_most:
            return (
                f"the data point to a violation this run cannot certify: {self.correct} of {self.guesses} guesses "
                f"right, more than any of {POWER_RUNS} runs of the ideal mechanism at the claim ({self.ideal_most}); "
                "more canaries would certify it"
            )
        return "no violation, the power to see one, and no more right guesses than the claim's ideal mechanism makes"

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data (JSON-ready).

        Returns:
            The verdict, the claim, the p-value, the bounds, the power and the run's counts.
        """
        return {
            "mode": AuditMode.ONE_RUN,
            "verdict": self.verdict,
            "claim": self.claim.to_dict(),
            "analysis": "f-DP: the claim's trade-off curve",
            "p_value": self.p_value,
            "delta": self.delta,
            "claimed_epsilon": self.claimed_epsilon,
            "claimed_mu": self.claim.mu,
            "epsilon_lower": self.epsilon_lower,
            "mu_lower": self.mu_lower,
            "power": self.power,
            "power_unit": "mu" if self.claim.mu is not None else "epsilon",
            "power_ratio": self.power_ratio,
            "ideal_most_correct": self.ideal_most,
            "reason": self.reason,
            "reach": self.reach,
            **run_counts(self),
        }


#: Simulated runs behind a one-run audit's power (the median number of right guesses is used).
POWER_RUNS = 41
#: The guess count is the one that certifies most against an ideal mechanism leaking this many times the claim
#: (μ × 1.5, or ε × 1.5): the audit is designed to see a violation of that size.
DESIGN_MARGIN = 1.5


def _guesses(share: float, m: int) -> int:
    """The guess count of a share of ``m`` canaries: 2k, the k highest and the k lowest scores (k >= 1)."""
    return 2 * max(1, math.floor(share * m / 2))


def _right(coins: np.ndarray, order: np.ndarray, guesses: int) -> int:
    """Right guesses among the ``guesses`` // 2 highest ("in") and lowest ("out") scores (ascending ``order``)."""
    k = guesses // 2
    return int(coins[order[-k:]].sum() + (1 - coins[order[:k]]).sum())


def _bounds(claim: Claim, *, m: int, r: int, v: int, level: float, delta: float) -> tuple[float, float]:
    """(μ lower, ε lower at δ) certified by ``v`` of ``r`` at ``level``: the GDP reading for claims that imply
    GDP (ε from μ), the (ε, δ) curve's otherwise."""
    mu = one_run_mu_lower(canaries=m, guesses=r, correct=v, alpha=level)
    if claim.mu is not None:
        eps = gdp_epsilon(mu, delta) if mu > 0 else 0.0
    else:
        eps = one_run_fdp_epsilon_lower(canaries=m, guesses=r, correct=v, delta=delta, alpha=level)
    return mu, eps


def _scaled(claim: Claim, factor: float, delta: float) -> Claim:
    """The ideal mechanism that leaks ``factor`` times the claim: μ·factor for claims that imply GDP, else pure
    ε·factor at the claim's ε at ``delta``."""
    if claim.mu is not None:
        return Claim.gdp(float(claim.mu) * factor)
    return Claim.dp(claim.epsilon_at(delta) * factor, 0.0)


def _powers(claim: Claim, *, m: int, counts: Sequence[int], level: float, delta: float) -> list[float]:
    """For each guess count, the bound (μ for GDP claims, else ε at δ) it certifies at level α with the median
    number of right guesses over :data:`POWER_RUNS` simulated runs of the ideal mechanism exactly at the claim
    (:func:`_ideal_right`)."""
    right = _ideal_right(claim, m=m, counts=counts, delta=delta)
    return [_power(claim, m=m, r=r, right=right[:, i], level=level, delta=delta) for i, r in enumerate(counts)]


def _power(claim: Claim, *, m: int, r: int, right: np.ndarray, level: float, delta: float) -> float:
    """The bound ``r`` guesses certify with the median of the simulated runs' right guesses ``right`` (μ for claims
    that imply GDP, else ε at δ)."""
    mu, eps_lower = _bounds(claim, m=m, r=r, v=math.floor(np.median(right)), level=level, delta=delta)
    return mu if claim.mu is not None else eps_lower


def _ideal_right(claim: Claim, *, m: int, counts: Sequence[int], delta: float) -> np.ndarray:
    """The right guesses of each guess count (columns) in :data:`POWER_RUNS` simulated runs (rows) of the ideal
    mechanism exactly at the claim (each canary a Gaussian shift of the claim's μ; randomized response at ε for
    other claims). A fixed seed: a function of the claim, the canaries and the guesses alone, nothing of the run
    under test."""
    rng = np.random.default_rng(0x0E)
    right = np.empty((POWER_RUNS, len(counts)))
    for t in range(POWER_RUNS):
        coins = rng.integers(0, 2, m)
        if claim.mu is not None:
            scores = rng.standard_normal(m) + float(claim.mu) * coins
        else:
            eps = claim.epsilon_at(delta)
            keep = rng.random(m) < (1.0 / (1.0 + math.exp(-eps)) if math.isfinite(eps) else 1.0)
            scores = np.where(keep, coins, 1 - coins) + 1e-3 * rng.random(m)  # randomized response, ties split
        order = np.argsort(scores, kind="stable")
        right[t] = [_right(coins, order, r) for r in counts]
    return right


def design_guesses(claim: Claim, *, canaries: int, alpha: float, delta: float) -> int:
    """The guess count :func:`judge_one_run` uses by default, from the claim alone.

    Args:
        claim: The claim the run will be judged against.
        canaries: The number of canaries.
        alpha: The test's level.
        delta: Where ε is read.

    Returns:
        The count of :data:`GUESS_SHARES` of ``canaries`` that certifies most against an ideal mechanism leaking
        :data:`DESIGN_MARGIN` times ``claim``.
    """
    counts = sorted({_guesses(share, canaries) for share in GUESS_SHARES})
    sharper = _scaled(claim, DESIGN_MARGIN, delta)
    return counts[int(np.argmax(_powers(sharper, m=canaries, counts=counts, level=alpha, delta=delta)))]


def judge_one_run(
    coins: Any,
    scores: Any,
    claim: Claim,
    *,
    alpha: float = 0.05,
    delta: float | None = None,
    guesses: int | None = None,
    reach: float | None = None,
    seed: int = 0,
    seconds: float = 0.0,
) -> OneRunResult:
    """The verdict of one run's coins and per-canary scores against ``claim``, at confidence 1 − ``alpha``.

    Args:
        coins: One per canary: 1 if it was in the dataset, 0 if not (at least 2 canaries).
        scores: One finite score per canary (higher: more likely in).
        claim: The privacy claim tested (its whole trade-off curve).
        alpha: The test's level, in (0, 1).
        delta: Where ε is read (default: the claim's own δ for an (ε, δ) claim, else 10⁻⁵).
        guesses: The number of guesses (even: half "in" on the highest scores, half "out" on the lowest); by
            default :func:`design_guesses`, chosen from the claim alone before looking at the run.
        reach: For claims that imply GDP, the μ per canary the scores can show for a mechanism exactly at the
            claim when they cannot see each canary alone; guess count and power are then those of min(μ, reach).
        seed: The seed recorded in the result.
        seconds: The run's wall time recorded in the result.

    Returns:
        The p-value, the μ and ε lower bounds, the power and the verdict (``inconclusive`` when the scores see
        less than half the claim, or when more guesses are right than in any simulated run of the ideal mechanism
        at the claim while the p-value does not reject: the data point to a violation the run cannot certify).

    Raises:
        TypeError: If ``claim`` is not a :class:`~dpkit.audits.claims.Claim`.
        ValueError: If the coins are not a 0/1 vector of at least 2, the scores are not finite or not of its
            shape, ``alpha`` is not in (0, 1), ``reach`` is given for a claim without μ or is negative, or
            ``guesses`` is odd or more than the canaries.
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be a dpkit.audits.Claim, got {type(claim).__name__}")
    c = np.asarray(coins)
    s = np.asarray(scores, dtype=float)
    if c.ndim != 1 or c.shape[0] < 2:
        raise ValueError(f"coins must be a vector of at least 2 canaries, got shape {c.shape}")
    if not np.isin(c, (0, 1)).all():
        raise ValueError("coins must be 0 (out) or 1 (in)")
    if s.shape != c.shape:
        raise ValueError(f"scores must have the coins' shape {c.shape}, got {s.shape}")
    if not np.isfinite(s).all():
        raise ValueError(
            f"scores must be finite; canary {int(np.flatnonzero(~np.isfinite(s))[0])} is {s[~np.isfinite(s)][0]}"
        )
    level_all = check_probability("alpha", alpha)
    if not 0.0 < level_all < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    d = claim.default_delta() if delta is None else check_probability("delta", delta)
    c = c.astype(np.int64)
    m = c.shape[0]
    curve = _claim_curve(claim)
    seen = claim
    if reach is not None:
        if claim.mu is None:
            raise ValueError("reach applies to claims that imply GDP (a μ)")
        if not reach >= 0:
            raise ValueError(f"reach must be >= 0, got {reach!r}")
        seen = Claim.gdp(max(min(float(claim.mu), float(reach)), 1e-12))
    if guesses is None:
        r = design_guesses(seen, canaries=m, alpha=level_all, delta=d)
    else:
        r = check_count("guesses", guesses)
        if r % 2 or r > m:
            raise ValueError(f"guesses must be even (half in, half out) and <= the {m} canaries, got {r}")
    ideal = _ideal_right(seen, m=m, counts=[r], delta=d)[:, 0]
    power = _power(seen, m=m, r=r, right=ideal, level=level_all, delta=d)
    v = _right(c, np.argsort(s, kind="stable"), r)
    p = one_run_fdp_p_value(canaries=m, guesses=r, correct=v, **curve)
    if p <= level_all and not one_run_fdp_rejects(canaries=m, guesses=r, correct=v, alpha=level_all, **curve):
        p = math.nextafter(level_all, 1.0)  # the p-value's bisection and the one-step test disagree: the safe side
    mu, eps = _bounds(claim, m=m, r=r, v=v, level=level_all, delta=d)
    return OneRunResult(claim, d, level_all, c, s, r, v, p, mu, eps, power, seed, seconds, reach, int(ideal.max()))


def _inner_product(output: np.ndarray, canary: Any) -> float:
    x = np.asarray(canary, dtype=float).ravel()
    if x.size != output.size:
        raise ValueError(
            f"the default score is the inner product of the output ({output.size} values) with a canary record "
            f"({x.size} values): give score=… for records of another shape"
        )
    return float(output @ x)


def audit_one_run_target(
    release: Callable[..., Any],
    *,
    canaries: Sequence[Any],
    claim: Claim,
    dataset: Sequence[Any] = (),
    score: Callable[[np.ndarray, Any], float] | None = None,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float | None = None,
) -> OneRunResult:
    """One run of ``release`` on ``dataset`` plus each canary with probability ½, judged against ``claim``.

    Args:
        release: The release function ``release(dataset, rng, n)``, called once with n = 1.
        canaries: The canary records (at least 2, at most :data:`MAX_CANARIES`).
        claim: The privacy claim tested (:func:`judge_one_run`).
        dataset: The records always in the dataset.
        score: ``score(output, canary)`` reads one canary's score from the run's output (a vector); by default
            their inner product (canaries of the output's size: orthogonal directions do not interfere).
        seed: The seed of the coins and of the release's generator.
        alpha: The test's level.
        delta: Where ε is read (default as in :func:`judge_one_run`).

    Returns:
        The one-run audit's result.

    Raises:
        TypeError: If ``release`` or ``score`` is not callable, or ``canaries`` or ``dataset`` is not a sequence.
        ValueError: If there are fewer than 2 or too many canaries, ``seed`` is negative, or the release's output
            is not one finite run (shape (1, …)) or not of a canary's size for the default score.
    """
    if not callable(release):
        raise TypeError(f"release must be callable, got {type(release).__name__}")
    if score is not None and not callable(score):
        raise TypeError(f"score must be callable, got {type(score).__name__}")
    for name, value in (("canaries", canaries), ("dataset", dataset)):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"{name} must be a sequence of records, got {type(value).__name__}")
    records = list(canaries)
    m = check_count("canaries", len(records)) if records else 0
    if m < 2:
        raise ValueError(f"a one-run audit needs at least 2 canaries, got {m}")
    if m > MAX_CANARIES:
        raise ValueError(f"canaries must be <= {MAX_CANARIES:,}, got {shown_int(m)}")
    seed = check_index("seed", seed)
    started = time.perf_counter()
    coin_rng, release_rng = np.random.default_rng(seed).spawn(2)
    coins = coin_rng.integers(0, 2, m)
    data = list(dataset) + [records[j] for j in np.flatnonzero(coins)]
    output = np.asarray(release(data, release_rng, 1), dtype=float)
    if output.ndim < 1 or output.shape[0] != 1:
        raise ValueError(f"release(dataset, rng, 1) must return an array of 1 run (shape (1, …)), got {output.shape}")
    out = output.reshape(-1)
    if not np.isfinite(out).all():
        raise ValueError("release returned a non-finite output")
    read = _inner_product if score is None else score
    scores = np.array([float(read(out, rec)) for rec in records])
    return judge_one_run(
        coins, scores, claim, alpha=alpha, delta=delta, seed=seed, seconds=time.perf_counter() - started
    )
