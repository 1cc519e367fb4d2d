"""The bets of a sequential audit: e-processes (Kelly betting on the error rates of a threshold test) against a
claim and the chain of weaker claims that certify a bound when an audit stops early.

An e-process bets on Z = A − e^ε·B − δ for the events A and B of a threshold test at a tangent (ε, δ) of the claim's
curve: under the claim E[Z] <= 0, so its wealth is a supermartingale and crosses 1/α with probability at most α
(Ville's inequality). :func:`choose_bet` picks the event and tangent with the largest expected log-growth on past
runs; :class:`EProcess` plays it pair by pair, the stake of each block from the counts of every pair before it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .claims import Claim, ClaimKind, ClaimUnit
from .estimators import rates_at_all_thresholds

__all__ = ["CHAIN", "Bet", "EProcess", "choose_bet", "claim_tangents", "eprocess_chain", "smoothed_rate"]

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


def claim_tangents(claim: Claim) -> tuple[np.ndarray, np.ndarray]:
    """Tangent points (ε, δ(ε)) of the claim's curve to bet on (δ(ε) < 1; ε not above 50).

    Args:
        claim: The claim.

    Returns:
        The ε values and δ(ε) at each.
    """
    if claim.kind == ClaimKind.DP:
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


def smoothed_rate(k: np.ndarray | float, n: np.ndarray | float) -> np.ndarray:
    """(k + ½)/(n + 1): the rate of k hits in n trials, never 0 or 1 (so a log of it stays finite).

    Args:
        k: The hits.
        n: The trials.

    Returns:
        The smoothed rate.
    """
    return (np.asarray(k, dtype=float) + 0.5) / (np.asarray(n, dtype=float) + 1.0)


def _cautious(hits_a: Any, n_a: Any, hits_b: Any, n_b: Any, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rates (q of B, r of A) to bet on: the plug-in rates with r lowered by :data:`_CAUTION` standard errors of
    the mean of Z = A − e·B − d (so that a drift within the noise gets a small stake or none); ``e`` broadcasts."""
    q, r = smoothed_rate(hits_b, n_b)[..., None], smoothed_rate(hits_a, n_a)[..., None]
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
        """A (the side the claim bounds from above) and B, pair by pair.

        Args:
            s0: The scores of the runs on D.
            s1: The scores of the runs on D′, as many.

        Returns:
            The indicators of A and of B for each pair.
        """
        if self.direction > 0:
            return s1 > self.threshold, s0 > self.threshold
        return s0 <= self.threshold, s1 <= self.threshold

    def stake(self, hits_a: float, n_a: float, hits_b: float, n_b: float) -> float:
        """Kelly's stake λ on the plug-in rates (the best of :data:`_FRACTIONS` of 1/(e^ε + δ)).

        Args:
            hits_a: The pairs seen in A.
            n_a: The pairs seen, for A.
            hits_b: The pairs seen in B.
            n_b: The pairs seen, for B.

        Returns:
            The stake.
        """
        e, d = np.array([math.exp(self.epsilon)]), np.array([self.delta])
        q, r = _cautious(hits_a, n_a, hits_b, n_b, e)
        g = _growth(q[..., None], r[..., None], _log_stakes(e, d))[0]
        best = int(np.argmax(g))
        return float(_FRACTIONS[best] / (e[0] + d[0])) if g[best] > _MIN_GROWTH else 0.0


def choose_bet(s0: np.ndarray, s1: np.ndarray, tangents: tuple[np.ndarray, np.ndarray]) -> Bet | None:
    """The event and tangent with the largest expected log-growth per pair on past runs, with plug-in rates.

    Args:
        s0: The scores of past runs on D.
        s1: The scores of past runs on D′.
        tangents: The claim's tangent points (:func:`claim_tangents`).

    Returns:
        The bet, or None when no bet is expected to grow.
    """
    eps, deltas = tangents
    if eps.size == 0 or s0.size == 0 or s1.size == 0:
        return None
    t, fp, fn = rates_at_all_thresholds(s0, s1, _THRESHOLDS)
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
        """A new bet for the next pairs: its stake starts from the bet's counts on the selection split.

        Args:
            bet: The bet, or None (no bet: the wealth stays).
        """
        self.bet = bet
        if bet is not None:
            self._counts = [float(bet.hits_a), float(bet.n_a), float(bet.hits_b), float(bet.n_b)]

    def play(self, s0: np.ndarray, s1: np.ndarray, *, start: int, log_level: float) -> None:
        """Bet on the pairs (s0[i], s1[i]) in order.

        The stake of each block comes from the counts of every pair before it (the selection split's, then those played
        since :meth:`start`).

        Args:
            s0: The scores of the runs on D.
            s1: The scores of the runs on D′.
            start: The number of the first pair (for :attr:`crossed_at`).
            log_level: log(1/α′), the wealth's threshold.
        """
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


def eprocess_chain(claim: Claim, delta: float) -> list[EProcess]:
    """The claim's e-process first, then nested weaker claims (:data:`CHAIN` × its ε at ``delta``, or × its μ).

    Args:
        claim: The claim.
        delta: Where ε is read.

    Returns:
        The e-processes, each with the value it certifies in the claim's unit when rejected (None: nothing).
    """
    if claim.unit == ClaimUnit.MU:
        mu = float(claim.mu)  # type: ignore[arg-type]
        return [EProcess(claim, mu)] + [EProcess(Claim.gdp(c * mu), c * mu) for c in CHAIN[1:]]
    eps = claim.epsilon_at(delta)
    own = eps if claim.kind == ClaimKind.DP and claim.delta == delta else None
    chain = [EProcess(claim, own)]
    if math.isinf(eps):
        return chain
    scales = CHAIN[1:] if own is not None else CHAIN
    values = [c * eps for c in scales] if eps > 0 else [0.125 * 2**k for k in range(8)]
    return chain + [EProcess(Claim.dp(v, delta), v) for v in values]
