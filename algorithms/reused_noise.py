"""Coins read through reused noise: the one-run billboard scores' reading of the released noise itself.

Gaussian noise never repeats: two released coordinates whose noise is the same draw (after whitening each by its
counter's σ, up to sign) are noise reused — two counters seeded alike, one stream drawn twice, a step's noise used
again, or no noise at all (a draw of 0, repeated). Where one copy holds no canary's difference (a *pure*
coordinate: its residual, once the known items are taken out, is the noise itself) and the other holds exactly one
user's difference d, the second's residual is that noise plus coin·d: subtracting the copy leaves 0 or d, and the
user's coin is read exactly, whatever σ is.

:func:`reused_noise_votes` finds such pairs without knowing how the noise was reused: every pure coordinate of every
counter's p-sums, whitened, goes into one sorted table (with its negative), and every coordinate that holds one
user's difference looks up the two values its noise would have under her two coins. A lookup that finds exactly one
of them is a vote for that coin. An implementation with fresh noise everywhere finds a value within the tolerance by
chance only — but chance grows with the run (the table, the lookups and the rounding all grow with K): the example
agent's correct runs of 20,000 users get a vote on 3 to 7 of them, a synthetic counter with fresh noise 0 at 2,000
users and 7 at 32,000. Identical copies of one p-sum (a release published twice) hold the same data, so they are
never one pure and one not; post-processing that repeats values (clipped or rounded counts) can give votes that mean
nothing. None of this touches validity: the votes are a function of the release and of what the auditor knows (the
items both canaries would have had), never of the coins, so a one-run audit may guess from them whatever they say
(:mod:`dpkit.audits.rl_one_run`) — a wrong vote costs power only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CounterNodes", "reused_noise_votes", "with_votes"]

#: Rounding allowed per unit of the magnitudes a whitened residual is computed from (the prefixes it is recovered
#: from, the items’ running sums): 16 ulps — a prefix sums at most ⌊log2 K⌋ + 1 p-sums, 16 up to K = 65,535 (a
#: larger run's rounding may exceed it: a missed match, power only).
_ULPS = 16 * np.finfo(float).eps


@dataclass(frozen=True)
class CounterNodes:
    """One counter's p-sums as a one-run scorer holds them, flattened (:func:`~dpkit.algorithms.observers.flat`)."""

    #: (R, m) the released p-sums, node t holding users ``starts[t]`` … t
    nodes: np.ndarray
    #: (R,) the first user of each node
    starts: np.ndarray
    #: (R, m) |P_t| + |P_start|: the prefixes each node is recovered from (their rounding)
    magnitude: np.ndarray
    #: (≥ R, m) every user's item as canary 0, and canary 1's minus it
    items0: np.ndarray
    delta: np.ndarray
    #: the σ the counter is said to use (a scale only: copies drawn for counters of different σ still match; 0 → 1)
    sigma: float


def reused_noise_votes(counters: Sequence[CounterNodes], users: int) -> np.ndarray:
    """Every user's votes (+1: canary 1, −1: canary 0, summed over her coordinates) from noise values the billboard
    repeats, over ``counters``. A value matches a table entry within the rounding both may carry (:data:`_ULPS`
    times the magnitudes each was computed from, over σ)."""
    pure: list[tuple[np.ndarray, np.ndarray]] = []  # (residual/σ, its rounding)
    singles: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # (user, residual/σ, d/σ, rounding)
    for c in counters:
        released = c.nodes.shape[0]
        starts, stops = c.starts, np.arange(1, released + 1)
        x0, d = c.items0[:released], c.delta[:released]
        scale = float(c.sigma) or 1.0

        def running(x: np.ndarray) -> np.ndarray:
            return np.concatenate([np.zeros((1,) + x.shape[1:]), np.cumsum(x, axis=0)])

        def block(x: np.ndarray, starts: np.ndarray = starts, stops: np.ndarray = stops) -> np.ndarray:
            r = running(x)
            return r[stops] - r[starts]

        sums = running(np.abs(x0))
        rounding = _ULPS * (1.0 + c.magnitude + sums[stops] + sums[starts]) / scale
        residual = (c.nodes - block(x0)) / scale
        held = d != 0.0
        count = np.rint(block(held.astype(float))).astype(np.int64)
        who = np.rint(block(held * np.arange(released, dtype=float)[:, None])).astype(np.int64)
        pure.append((residual[count == 0], rounding[count == 0]))
        node, coordinate = np.nonzero(count == 1)
        user = who[node, coordinate]
        singles.append((user, residual[node, coordinate], d[user, coordinate] / scale, rounding[node, coordinate]))
    votes = np.zeros(users)
    values = np.concatenate([v for v, _ in pure] + [-v for v, _ in pure])
    if values.size == 0:
        return votes
    table = np.concatenate([[-np.inf], np.sort(values), [np.inf]])
    slack = float(max(np.max(r, initial=0.0) for _, r in pure))
    for user, residual, difference, rounding in singles:
        as0, as1 = (_found(table, v, rounding + slack) for v in (residual, residual - difference))
        np.add.at(votes, user, as1.astype(float) - as0.astype(float))
    return votes


def _found(table: np.ndarray, values: np.ndarray, tolerance: np.ndarray) -> np.ndarray:
    """Whether each value lies within ``tolerance`` of an entry of the sorted ``table`` (±∞ at its ends)."""
    i = np.clip(np.searchsorted(table, values), 1, table.size - 1)
    return np.minimum(np.abs(table[i] - values), np.abs(table[i - 1] - values)) <= tolerance


def with_votes(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    """The scores with every user whose coin the votes read put first on her side: sign(v)·(M + |v|), M above every
    other score's magnitude; the others unchanged."""
    scores = np.asarray(scores, dtype=float)
    top = 1.0 + float(np.max(np.abs(scores), initial=0.0))
    return np.where(votes != 0, np.sign(votes) * (top + np.abs(votes)), scores)
