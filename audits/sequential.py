"""Sequential, anytime-valid audits: runs arrive in batches and the audit stops as soon as the answer is known.

The derivation is in docs/sequential.md; in short:

* **The test (testing by betting).** A claim with trade-off curve f implies, for every ε >= 0, the guarantee
  (ε, δ(ε)) of its privacy profile (:meth:`~dpkit.audits.claims.Claim.profile`): for every event A of the
  output and either direction, P_D′[A] <= e^ε P_D[A] + δ(ε). For a pair of runs (Y on D, Y′ on D′) and an event
  A fixed before the pair is drawn, Z = 1{Y′ ∈ A} − e^ε 1{Y ∈ A} − δ(ε) has E[Z] <= 0 under the claim, and
  Z >= −(e^ε + δ). The wealth K_t = Π (1 + λ_i Z_i), with stakes 0 <= λ_i < 1/(e^ε + δ) and A, ε, λ_i chosen from
  the earlier pairs only, is then a nonnegative supermartingale with K_0 = 1 under the claim, and Ville's
  inequality gives P[∃t: K_t >= 1/α'] <= α': the audit may look after every pair and stop at the first
  crossing — at any stopping time, the false-alarm rate stays <= α'.
* **Learning while it runs.** Before each batch, the attacks are refitted on the earlier batches but the
  last, the attack, the event (a threshold on its score and a direction) and the tangent ε are chosen on the
  last batch (the largest expected log-growth), and the stake is re-estimated inside the batch from the pairs
  already seen (Kelly's stake on the plug-in rates). All of it is predictable, so validity holds whatever
  is learned.
* **α is split in two.** The e-process runs at α/2 (:data:`SEQUENTIAL_SHARE`): the audit stops with
  ``violation`` as soon as K_t >= 2/α. Otherwise it ends at the budget with the fixed audit's own test at
  the other α/2 — the engine's attack, its three thresholds chosen on the last learning batch and
  Clopper–Pearson bounds on a final evaluation split judged by :func:`~dpkit.audits.verdicts.judge` —, so the
  verdicts are the fixed audit's three, and the power is that of this final test at its α/2. The final
  split is made large enough for that power to match the fixed audit's at ``runs`` (:func:`plan_sequential`;
  the budget is at most ~1.2× ``runs``).
* **Certified bounds when it stops.** Beside the claim's own e-process, e-processes for weaker claims — the
  claim's ε (or μ) scaled by :data:`CHAIN` — run at the same α/2; the reported bound is the largest scale
  whose claim, and every smaller one, has been rejected (a step-down over nested claims: wrong only if the
  first true claim is rejected, probability <= α/2). At the budget the larger of that bound and the final
  test's Clopper–Pearson bound (α/2) is reported (a union bound: confidence 1 − α).

:func:`audit_sequential_batches` is generic over how batches are produced (a :data:`BatchSource`);
:func:`audit_sequential` audits a release function on the executors of :mod:`dpkit.algorithms.executors`.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.validation import check_count, check_probability
from dpkit.algorithms.executors import AutoExecutor, Executor, describe_executor, run_pair, spawn_seeds

from .attacks import Attack
from .claims import Claim
from .engine import AUTO, TRAIN_CAP, AuditResult, _candidates, _check_common, _choose, _fit, _result, _ScoreAll
from .estimators import _rates_at_all_thresholds, mu_from_rates, select_threshold
from .verdicts import power_bound

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

#: The share of α the e-process gets (it stops at K >= 1/(share·α)); the final fixed-size test gets the rest.
SEQUENTIAL_SHARE = 0.5
#: Runs per dataset of the first batch (it only trains; batches then double).
FIRST_BATCH = 100
#: The factor by which each learning batch outgrows the one before.
GROWTH = 2.0
#: The fewest runs per dataset of a sequential audit.
MIN_RUNS = 200
#: The scales of the claim's ε (or μ) whose e-processes certify a bound when the audit stops early.
CHAIN: tuple[float, ...] = (1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0)
#: The stakes tried, as fractions of the largest safe stake 1/(e^ε + δ) (0: no bet).
_FRACTIONS = np.array([0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9])
#: Candidate thresholds per attack and look (quantiles and the extremes of each side).
_THRESHOLDS = 128
#: Tangent points per GDP claim.
_TANGENTS = 24
#: A bet is placed only when its expected log-growth per pair is above this.
_MIN_GROWTH = 1e-7
#: Pairs of the first block of a batch; later blocks hold a quarter of the pairs seen so far.
_BLOCK = 16
#: Standard errors by which the estimated drift of a bet is lowered before it is ranked and staked.
_CAUTION = 2.0

#: ``source(n, index, transform) -> (rows0, rows1)``: ``n`` fresh, independent runs on D and on D′ (the batch
#: ``index``; its randomness must never have been used before), one row each, transformed by ``transform`` where
#: they are produced when it is given (e.g. scored in the workers, so that outputs never accumulate).
BatchSource = Callable[[int, int, Callable[[np.ndarray], np.ndarray] | None], tuple[np.ndarray, np.ndarray]]


# -- the plan ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SequentialPlan:
    """The batches of a sequential audit: ``learning`` (fit, choose, bet) then ``final`` (bet, and the final
    fixed-size test on all of them); ``budget`` = their total per dataset, against ``runs`` of the fixed audit."""

    runs: int
    learning: tuple[int, ...]
    final: tuple[int, ...]
    fixed_evaluation: int

    @property
    def budget(self) -> int:
        return sum(self.learning) + sum(self.final)

    @property
    def evaluation(self) -> int:
        return sum(self.final)

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "budget": self.budget,
            "learning": list(self.learning),
            "final": list(self.final),
            "fixed_evaluation": self.fixed_evaluation,
        }


def _doubling(total: int, first: int) -> list[int]:
    """Sizes first, first, then growing by :data:`GROWTH` a batch, summing to ``total`` (the last one cut; a small
    rest merged)."""
    sizes: list[int] = []
    size = float(first)
    while sum(sizes) < total:
        sizes.append(min(round(size), total - sum(sizes)))
        if len(sizes) > 1:
            size *= GROWTH
    if len(sizes) > 2 and sizes[-1] < sizes[-2] // 4:
        rest = sizes.pop()
        sizes[-1] += rest
    return sizes


@functools.lru_cache(maxsize=256)
def _final_size(claim: Claim, n_eval: int, alpha: float, delta: float) -> int:
    """The smallest n (up to 1.3·``n_eval``) whose final test at α·(1 − :data:`SEQUENTIAL_SHARE`) has the power
    of the fixed audit's ``n_eval`` evaluation runs at α (bisection; the power grows with n)."""
    target = power_bound(claim, n0=n_eval, n1=n_eval, alpha=alpha, delta=delta)
    final_alpha = alpha * (1.0 - SEQUENTIAL_SHARE)

    def enough(n: int) -> bool:
        return power_bound(claim, n0=n, n1=n, alpha=final_alpha, delta=delta) >= target

    lo, hi = n_eval, math.ceil(1.3 * n_eval)
    if enough(lo) or not enough(hi):
        return lo if enough(lo) else hi
    while hi - lo > max(1, n_eval // 500):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def plan_sequential(
    claim: Claim, *, runs: int, alpha: float = 0.05, delta: float | None = None, needs_fit: bool = True
) -> SequentialPlan:
    """The batches of a sequential audit standing in for a fixed audit of ``runs`` runs per dataset.

    The learning batches double from :data:`FIRST_BATCH` up to the fixed audit's training and selection splits
    (``needs_fit``: min(runs/3, TRAIN_CAP) + a quarter of the rest; else a fifth). The final evaluation split is
    the fixed audit's, grown until the power of the final test at its α share (1 − :data:`SEQUENTIAL_SHARE`)
    reaches the fixed audit's at α (:func:`~dpkit.audits.verdicts.power_bound`), so that a correct target gets
    the fixed audit's verdict; it is cut in up to four batches so that the e-process may still stop early.
    """
    if not isinstance(claim, Claim):
        raise TypeError(f"claim must be an audits.Claim, got {type(claim).__name__}")
    runs = check_count("runs", runs)
    if runs < MIN_RUNS:
        raise ValueError(f"a sequential audit needs runs >= {MIN_RUNS}, got {runs}")
    alpha = check_probability("alpha", alpha)
    delta = claim.default_delta() if delta is None else float(delta)
    if needs_fit:
        n_train = min(runs // 3, TRAIN_CAP)
        learn = n_train + (runs - n_train) // 4
    else:
        learn = max(1, runs // 5)
    n_eval = runs - learn
    n_final = _final_size(claim, n_eval, alpha, delta)
    first = max(10, min(FIRST_BATCH, learn // 8))
    learning = _doubling(learn, first)
    parts = max(1, min(4, n_final // max(learning[-1], 1)))
    final = [n_final // parts] * parts
    final[-1] += n_final - sum(final)
    return SequentialPlan(runs=runs, learning=tuple(learning), final=tuple(final), fixed_evaluation=n_eval)


# -- the bets ---------------------------------------------------------------------------------------------------


def _tangents(claim: Claim) -> tuple[np.ndarray, np.ndarray]:
    """Tangent points (ε, δ(ε)) of the claim's curve to bet on (δ(ε) < 1; ε not above 50)."""
    if claim.kind == "dp":
        e0 = float(claim.epsilon)  # type: ignore[arg-type]
        eps = np.linspace(0.0, min(e0, 50.0), 9) if math.isfinite(e0) else np.array([])
    elif claim.mu is not None:
        mu = float(claim.mu)
        z = mu / 2.0 + np.linspace(0.0, 7.0, _TANGENTS)  # the curve's points from the middle to FPR ~ 1e-12
        eps = np.unique(np.clip(z * mu - mu * mu / 2.0, 0.0, 50.0))
    else:
        eps = np.unique([e for e, _ in claim._envelope if math.isfinite(e) and e <= 50.0])
        if eps.size > 32:
            eps = eps[np.linspace(0, eps.size - 1, 32).astype(int)]
    deltas = claim.profile(eps) if eps.size else np.array([])
    keep = deltas < 1.0
    return np.asarray(eps, dtype=float)[keep], np.asarray(deltas, dtype=float)[keep]


def _log_stakes(e: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, ...]:
    """log(1 + λZ) for the four values of Z = A − e·B − d, at every tangent (rows) and stake (columns)."""
    lam = _FRACTIONS[None, :] / (e + d)[:, None]
    return (
        np.log1p(lam * (1.0 - d)[:, None]),  # A = 1, B = 0
        np.log1p(lam * (1.0 - e - d)[:, None]),  # A = 1, B = 1
        np.log1p(-lam * d[:, None]),  # A = 0, B = 0
        np.log1p(-lam * (e + d)[:, None]),  # A = 0, B = 1
    )


def _growth(q: np.ndarray, r: np.ndarray, logs: tuple[np.ndarray, ...]) -> np.ndarray:
    """E log(1 + λZ) with A ~ Bern(r), B ~ Bern(q) independent; q and r broadcast against (tangent, stake)."""
    l10, l11, l00, l01 = logs
    return r * (1 - q) * l10 + r * q * l11 + (1 - r) * (1 - q) * l00 + (1 - r) * q * l01


def _rate(k: np.ndarray | float, n: np.ndarray | float) -> np.ndarray:
    return (np.asarray(k, dtype=float) + 0.5) / (np.asarray(n, dtype=float) + 1.0)


def _cautious(hits_a: Any, n_a: Any, hits_b: Any, n_b: Any, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rates (q of B, r of A) to bet on: the plug-in rates with r lowered by :data:`_CAUTION` standard errors of
    the mean of Z = A − e·B − d (so that a drift within the noise gets a small stake or none); ``e`` broadcasts."""
    q, r = _rate(hits_b, n_b)[..., None], _rate(hits_a, n_a)[..., None]
    n_a_, n_b_ = np.asarray(n_a, dtype=float)[..., None], np.asarray(n_b, dtype=float)[..., None]
    se = np.sqrt(r * (1 - r) / n_a_ + e * e * q * (1 - q) / n_b_)
    return q, np.maximum(r - _CAUTION * se, 0.0)


@dataclass(frozen=True)
class Bet:
    """The test one e-process bets on over a batch: the event {score > t} (``direction`` +1: B from D, A from
    D′) or {score <= t} (−1: B from D′, A from D), the tangent (ε, δ) and the counts seen for it so far."""

    threshold: float
    direction: int
    epsilon: float
    delta: float
    hits_a: int
    n_a: int
    hits_b: int
    n_b: int
    growth: float

    def events(self, s0: np.ndarray, s1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A (the side the claim bounds from above) and B, pair by pair."""
        if self.direction > 0:
            return s1 > self.threshold, s0 > self.threshold
        return s0 <= self.threshold, s1 <= self.threshold

    def stake(self, hits_a: float, n_a: float, hits_b: float, n_b: float) -> float:
        """Kelly's stake λ on the plug-in rates (the best of :data:`_FRACTIONS` of 1/(e^ε + δ))."""
        e, d = np.array([math.exp(self.epsilon)]), np.array([self.delta])
        q, r = _cautious(hits_a, n_a, hits_b, n_b, e)
        g = _growth(q[..., None], r[..., None], _log_stakes(e, d))[0]
        best = int(np.argmax(g))
        return float(_FRACTIONS[best] / (e[0] + d[0])) if g[best] > _MIN_GROWTH else 0.0


def choose_bet(s0: np.ndarray, s1: np.ndarray, tangents: tuple[np.ndarray, np.ndarray]) -> Bet | None:
    """The event and tangent with the largest expected log-growth per pair on the scores ``s0`` (D) and ``s1``
    (D′) of past runs, with plug-in rates; ``None`` when no bet is expected to grow."""
    eps, deltas = tangents
    if eps.size == 0 or s0.size == 0 or s1.size == 0:
        return None
    t, fp, fn = _rates_at_all_thresholds(s0, s1, _THRESHOLDS)
    t, fp, fn = t[1:], fp[1:], fn[1:]  # not the trivial test at −∞
    if t.size == 0:
        return None
    n0, n1 = s0.size, s1.size
    hits_b = np.stack([fp, fn], axis=1)  # direction +1: B = {s0 > t}; −1: B = {s1 <= t}
    hits_a = np.stack([n1 - fn, n0 - fp], axis=1)
    n_b, n_a = np.array([n0, n1]), np.array([n1, n0])
    e = np.exp(eps)
    q, r = _cautious(hits_a, n_a, hits_b, n_b, e)  # (threshold, direction, tangent)
    g = _growth(q[..., None], r[..., None], _log_stakes(e, deltas)).max(axis=3)
    i, o, j = np.unravel_index(int(np.argmax(g)), g.shape)
    if not g[i, o, j] > _MIN_GROWTH:
        return None
    return Bet(
        threshold=float(t[i]),
        direction=1 if o == 0 else -1,
        epsilon=float(eps[j]),
        delta=float(deltas[j]),
        hits_a=int(hits_a[i, o]),
        n_a=int(n_a[o]),
        hits_b=int(hits_b[i, o]),
        n_b=int(n_b[o]),
        growth=float(g[i, o, j]),
    )


@dataclass
class EProcess:
    """The wealth of one e-process (log K, starting at 0) against one claim, and when it crossed 1/α'."""

    claim: Claim
    value: float | None
    log_wealth: float = 0.0
    log_max: float = 0.0
    crossed_at: int | None = None
    bet: Bet | None = None
    _counts: list[float] = field(default_factory=list)

    def start(self, bet: Bet | None) -> None:
        """A new bet for the next pairs: its stake starts from the bet's counts on the selection split."""
        self.bet = bet
        if bet is not None:
            self._counts = [float(bet.hits_a), float(bet.n_a), float(bet.hits_b), float(bet.n_b)]

    def play(self, s0: np.ndarray, s1: np.ndarray, *, start: int, log_level: float) -> None:
        """Bet on the pairs (s0[i], s1[i]) in order, the stake of each block from the counts of every pair
        before it (the selection split's, then those played since :meth:`start`); ``start`` numbers the first
        pair (for :attr:`crossed_at`)."""
        bet = self.bet
        if bet is None:
            return
        a, b = bet.events(s0, s1)
        n = min(a.size, b.size)
        e = math.exp(bet.epsilon)
        z = a[:n] - e * b[:n] - bet.delta
        ka, na, kb, nb = self._counts
        i = 0
        while i < n:
            j = min(n, i + max(_BLOCK, int(na) // 4))
            lam = bet.stake(ka, na, kb, nb)
            if lam > 0.0:
                path = self.log_wealth + np.cumsum(np.log1p(lam * z[i:j]))
                self.log_max = max(self.log_max, float(path.max()))
                if self.crossed_at is None and path.max() >= log_level:
                    self.crossed_at = start + i + int(np.argmax(path >= log_level))
                self.log_wealth = float(path[-1])
            ka, kb = ka + float(a[i:j].sum()), kb + float(b[i:j].sum())
            na, nb = na + (j - i), nb + (j - i)
            i = j
        self._counts = [ka, na, kb, nb]

    @property
    def e_value(self) -> float:
        return math.exp(min(self.log_wealth, 700.0))


def _chain(claim: Claim, delta: float) -> list[EProcess]:
    """The claim's e-process first, then nested weaker claims (:data:`CHAIN` × its ε at ``delta``, or × its μ),
    each with the value it certifies in the claim's unit when rejected (``None``: nothing in that unit)."""
    if claim.unit == "mu":
        mu = float(claim.mu)  # type: ignore[arg-type]
        return [EProcess(claim, mu)] + [EProcess(Claim.gdp(c * mu), c * mu) for c in CHAIN[1:]]
    eps = claim.epsilon_at(delta)
    own = eps if claim.kind == "dp" and claim.delta == delta else None
    chain = [EProcess(claim, own)]
    if math.isinf(eps):
        return chain
    scales = CHAIN[1:] if own is not None else CHAIN
    values = [c * eps for c in scales] if eps > 0 else [0.125 * 2**k for k in range(8)]
    return chain + [EProcess(Claim.dp(v, delta), v) for v in values]


# -- the result -------------------------------------------------------------------------------------------------


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
        return {
            "batch": self.batch,
            "phase": self.phase,
            "runs_used": self.runs_used,
            "e_value": self.e_value,
            "bound": self.bound,
            "attack": self.attack,
        }


@dataclass(frozen=True)
class SequentialResult:
    """A sequential audit of one neighbouring pair: the verdict, the runs it used of its budget, the evidence.

    ``final`` is the fixed audit's result on the final evaluation split when the audit reached its budget
    (``None`` when it stopped early with a violation). ``bound`` is the step-down bound of the e-processes in the
    claim's unit (0 when nothing was certified).
    """

    claim: Claim
    verdict: str
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

    @property
    def runs(self) -> int:
        """The budget: the most runs per dataset this audit could have used."""
        return self.plan.budget

    @property
    def alpha_sequential(self) -> float:
        return self.alpha * SEQUENTIAL_SHARE

    @property
    def threshold(self) -> float:
        """The e-value at which the audit stops: 1/(α·:data:`SEQUENTIAL_SHARE`)."""
        return 1.0 / self.alpha_sequential

    def _unit_bound(self, unit: str, final: float | None) -> float:
        mine = self.bound if self.claim.unit == unit else 0.0
        return max(mine, final if final is not None else 0.0)

    @property
    def epsilon_lower(self) -> float:
        """The ε lower bound at :attr:`delta` (confidence 1 − α; 0 when none was certified)."""
        return self._unit_bound("epsilon", None if self.final is None else self.final.epsilon_lower)

    @property
    def mu_lower(self) -> float:
        """The μ lower bound (confidence 1 − α; 0 when none was certified)."""
        return self._unit_bound("mu", None if self.final is None else self.final.mu_lower)

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
        """The keys of :meth:`AuditResult.to_dict` (``runs``: the budget) and the sequential ones: ``runs_used``,
        ``stopped_early``, ``fixed_runs`` and ``evidence`` (e-values, α shares, the looks). Deterministic."""
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
                "epsilon_gdp_reading": _gdp_reading(self.mu_lower, self.delta),
                "epsilon_estimate": None if est is None else _gdp_reading(est, self.delta),
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


def _gdp_reading(mu: float, delta: float) -> float:
    if not math.isfinite(mu):
        return math.inf
    return 0.0 if mu <= 0.0 else gdp_epsilon(min(mu, 1e3), delta if delta > 0 else 1e-5)


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
        self.chain = _chain(claim, delta)
        self.tangents = [_tangents(p.claim) for p in self.chain]
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
        if not self.pool0:
            return None
        if self.fitted_on == self.pooled:  # nothing new to learn from (the pool is full)
            return self.current
        self.fitted_on = self.pooled
        out0, out1 = np.concatenate(self.pool0), np.concatenate(self.pool1)
        fitted, notes = _fit(_fresh(self.spec), out0, out1)
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
            fpr, fnr = float(_rate(fp, s0.size)), float(_rate(fn, s1.size))
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
                    s0, s1 = self._request(piece, _ScoreAll(head + tuple(nxt)))
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
                self.sel = None if nxt is None else (_ScoreAll(tuple(nxt))(both0), _ScoreAll(tuple(nxt))(both1))
            else:
                self.sel = (both0, both1)
            self.current = nxt

    def _finish(self) -> Iterator[None]:
        """The final batches: the engine's final test fixed on the last learning batch, bets continued; at the last
        one, :attr:`final` is the final test's result."""
        assert self.current is not None and self.sel is not None
        share = self.alpha * (1.0 - SEQUENTIAL_SHARE) / len(self.objectives)
        sel0, sel1 = self.sel
        chosen, thresholds, rows = _choose(self.current, sel0, sel1, self.claim, self.delta, share, self.objectives)
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
            s0, s1 = self._request(size, _ScoreAll((attack,)))
            s0, s1 = s0[:, 0], s1[:, 0]
            ev0.append(s0)
            ev1.append(s1)
            self._play(s0, s1)
            prev = (s0, s1)
            self._record(k, "final")
            if k == last:
                self.final = _result(
                    self.claim,
                    attack,
                    thresholds,
                    np.concatenate(ev0),
                    np.concatenate(ev1),
                    share=share,
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
            verdict="violation" if violated else self.final.verdict,  # type: ignore[union-attr]
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
    objective: str | None,
    seed: int,
    executor: str,
    on_look: Callable[[Look], None] | None,
) -> _Audit:
    """A sequential audit ready to step: the inputs checked, the plan made."""
    if not callable(source):
        raise TypeError(f"source must be callable (n, index, transform) -> (rows0, rows1), got {source!r}")
    alpha, objectives, delta = _check_common(claim, alpha, objective, delta)
    spec = _candidates(attack)
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
    runs: int = 20_000,
    attack: Attack | str = AUTO,
    alpha: float = 0.05,
    delta: float | None = None,
    objective: str | None = None,
    seed: int = 0,
    executor: str = "in-process",
    on_look: Callable[[Look], None] | None = None,
) -> SequentialResult:
    """A sequential, anytime-valid audit of the runs ``source`` produces, against ``claim`` (module docstring).

    Generic over how batches are produced: ``source(n, index, transform)`` returns ``n`` fresh runs on D and on D′
    (a :data:`BatchSource`; :func:`release_source` builds one from a release function and an executor). ``runs``
    is the fixed audit's number of runs per dataset that this audit stands in for; the batches and the budget
    (at most 1.3× ``runs``) are :func:`plan_sequential`'s. ``attack``, ``alpha``, ``delta`` and ``objective``
    are those of :func:`~dpkit.audits.engine.audit`. ``on_look(look)`` is called after every piece of a batch
    with the evidence so far (:class:`Look`). ``seed`` and ``executor`` are only recorded in the result.

    **For the RL audits** (``dpkit.audits.rl``): the source runs ``rl_release`` on the two neighbouring
    datasets, e.g. ``release_source(rl_release, d0, d1, seed=seed, executor=executor, chunk_size=250)``, and the
    claim must be fixed before the first batch (a claim read from the runs would be graded against itself);
    a source wrapping another one may keep the rows' extra columns (μ of the run's releases) as they pass.
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
    seed: int = 0,
    executor: Executor | None = None,
    chunk_size: int = 10_000,
    progress: Callable[[int], None] | None = None,
) -> BatchSource:
    """A :data:`BatchSource` running ``release`` on ``dataset0`` and ``dataset1`` with :func:`run_pair` on
    ``executor``: batch ``i`` uses the ``i``-th child of child 3 of ``SeedSequence(seed)`` (children 0–2 are the
    fixed audit's splits), so the runs depend on the seed and the batch sizes only, never on the executor."""
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
    attack: Attack | str = AUTO,
    runs: int = 20_000,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float | None = None,
    objective: str | None = None,
    executor: Executor | None = None,
    chunk_size: int = 10_000,
    progress: Callable[[int], None] | None = None,
    on_look: Callable[[Look], None] | None = None,
) -> SequentialResult:
    """The sequential, anytime-valid audit of ``release`` on one neighbouring pair (module docstring): the
    options of :func:`~dpkit.audits.engine.audit`, ``runs`` the fixed audit's runs per dataset it stands in for
    (the budget is :func:`plan_sequential`'s), ``on_look`` as in :func:`audit_sequential_batches`.

    ``executor=None`` is an :class:`~dpkit.algorithms.executors.AutoExecutor` of this call: in-process while the
    target is fast, every core once a batch is projected at 2 s or more in-process.
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
    runs: int = 20_000,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float | None = None,
    objective: str | None = None,
    executor: Executor | None = None,
    chunk_size: int = 10_000,
    progress: Callable[[int], None] | None = None,
    on_look: Callable[[Look], None] | None = None,
) -> tuple[list[SequentialResult], int]:
    """Sequential audits of every pair (pair i with ``attacks[i]``, seed ``seed + i``, at α/len(pairs): a union
    bound), taking turns a piece of a batch at a time, so that a violation of any pair stops them all: the results
    of the audits that concluded (every one, or those that finished before the violation, and the violation), and
    the runs per dataset used over all pairs (unfinished ones included)."""
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
    results = [_with_executor(states[i].result(), ran) for i in concluded]
    return results, sum(state.runs_used for state in states)


def take_turns(states: Sequence[_Audit]) -> list[int]:
    """Step several sequential audits a piece of a batch at a time each, in turns, until every one ran to its
    budget or one of them crossed its threshold (the verdict of all together is then known): the indices of the
    audits that concluded, in order."""
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
    alpha: float = 0.05,
    delta: float | None = None,
    objective: str | None = None,
    executor: str = "in-process",
    on_look: Callable[[Look], None] | None = None,
) -> tuple[list[SequentialResult | None], list[int], list[int]]:
    """Sequential audits of several sources (source i against ``claims[i]`` with ``attacks[i]``, at α/len(sources):
    a union bound), taking turns as :func:`audit_pairs_sequential`'s pairs do — the generic form, for sources
    that are not a release function's pairs (the RL audits' positions, each with its own allowance). Returns, for
    each source, its result (``None`` when another source's violation stopped it before it concluded), the runs
    per dataset it used and its budget."""
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
    )


def _with_executor(result: SequentialResult, executor: str) -> SequentialResult:
    return dataclasses.replace(result, executor=executor)
