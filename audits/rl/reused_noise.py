"""Coins read through reused noise: the billboard scores' reading of the released noise itself, in one run and in
many.

Two released coordinates whose whitened noise is the same draw, one holding no canary's difference and the other
exactly one user's, read that user's coin exactly, whatever σ is. :func:`reused_noise_votes` finds such pairs in a
one-run audit, :func:`changed_user_vote` (:func:`changed_user_votes`: R runs) in a many-run audit's row, and
:func:`with_votes` puts the users a vote reads first. The votes never see the coins: a wrong one costs power, never
validity (docs/explanation/observers.md says why, and how often chance votes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["CounterNodes", "changed_user_vote", "changed_user_votes", "reused_noise_votes", "with_votes"]

#: Rounding allowed per unit of the magnitudes a whitened residual is computed from (the prefixes it is recovered
#: from, the items’ running sums): 16 ulps — a prefix sums at most ⌊log2 K⌋ + 1 p-sums, 16 up to K = 65,535 (a
#: larger run's rounding may exceed it: a missed match, power only).
_ULPS = 16 * np.finfo(float).eps


@dataclass(frozen=True)
class CounterNodes:
    """One counter's p-sums as a scorer holds them, flattened (:func:`~dpkit.audits.rl.observers.flat`).

    Arrays are (R, m), or (R, B, m) for a batch of B counters (one per step) with one σ each; in a batch of runs
    (:func:`changed_user_votes`) every array but ``starts`` and ``sigma`` has a leading run axis too.

    Attributes:
        nodes: (R, m) the released p-sums, node t holding users ``starts[t]`` … t.
        starts: (R,) the first user of each node.
        magnitude: (R, m) |P_t| + |P_start|: the prefixes each node is recovered from (their rounding).
        items0: (≥ R, m) every user's item as canary 0.
        delta: (≥ R, m) canary 1's item minus canary 0's, for every user.
        sigma: The σ the counter is said to use (a scale only: copies drawn for counters of different σ still match;
            0 → 1), or a batch's, one per counter as a (B, 1) array.
    """

    #: (R, m) the released p-sums, node t holding users ``starts[t]`` … t
    nodes: np.ndarray
    #: (R,) the first user of each node
    starts: np.ndarray
    #: (R, m) |P_t| + |P_start|: the prefixes each node is recovered from (their rounding)
    magnitude: np.ndarray
    #: (≥ R, m) every user's item as canary 0, and canary 1's minus it
    items0: np.ndarray
    delta: np.ndarray
    #: the σ the counter is said to use (a scale only: copies drawn for counters of different σ still match; 0 → 1),
    #: or a batch's, one per counter as a (B, 1) array
    sigma: float | np.ndarray


@dataclass(frozen=True)
class _Whitened:
    """One counter's nodes whitened (over its σ) less their items under canary 0, with what each coordinate holds;
    every array shaped as the nodes."""

    #: the residuals: the noise plus the canaries' coins times their differences
    residual: np.ndarray
    #: the rounding a residual may carry
    rounding: np.ndarray
    #: how many users' differences a coordinate holds
    count: np.ndarray
    #: the sum of the differences it holds, over σ
    difference: np.ndarray


def _whiten(c: CounterNodes) -> _Whitened:
    """The residuals of ``c`` (:class:`_Whitened`): its nodes less the items they hold under canary 0, over σ, with
    the rounding :data:`_ULPS` allows for the magnitudes each is computed from."""
    released = c.nodes.shape[0]
    starts, stops = c.starts, np.arange(1, released + 1)
    x0, d = c.items0[:released], c.delta[:released]
    sigma = np.asarray(c.sigma, dtype=float)
    scale = np.where(sigma > 0.0, sigma, 1.0)
    sums = _running(np.abs(x0))
    return _Whitened(
        residual=(c.nodes - _block(x0, starts, stops)) / scale,
        rounding=_ULPS * (1.0 + c.magnitude + sums[stops] + sums[starts]) / scale,
        count=np.rint(_block((d != 0.0).astype(float), starts, stops)).astype(np.int64),
        difference=_block(d, starts, stops) / scale,
    )


def _whiten_runs(c: CounterNodes) -> _Whitened:
    """:func:`_whiten` of R runs: every array of ``c`` (but ``starts`` and ``sigma``) with a leading run axis.

    Nodes of one user each (``starts`` t at node t: a local-DP agent's messages) are their own blocks, and items
    that are all 0 (the messages observer's: each message less its own statistic) add no rounding: neither is summed.
    """
    released = c.nodes.shape[1]
    starts, stops = c.starts, np.arange(1, released + 1)
    x0, d = c.items0[:, :released], c.delta[:, :released]
    sigma = np.asarray(c.sigma, dtype=float)
    scale = np.where(sigma > 0.0, sigma, 1.0)
    if not np.array_equal(starts, stops - 1):
        sums = _running(np.abs(x0), axis=1)
        return _Whitened(
            residual=(c.nodes - _block(x0, starts, stops, axis=1)) / scale,
            rounding=_ULPS * (1.0 + c.magnitude + sums[:, stops] + sums[:, starts]) / scale,
            count=np.rint(_block((d != 0.0).astype(float), starts, stops, axis=1)).astype(np.int64),
            difference=_block(d, starts, stops, axis=1) / scale,
        )
    known = 1.0 + c.magnitude
    if np.any(x0):
        sums = _running(np.abs(x0), axis=1)
        known = known + sums[:, stops] + sums[:, starts]
    return _Whitened(
        residual=(c.nodes - x0) / scale,
        rounding=_ULPS * known / scale,
        count=(d != 0.0).astype(np.int64),
        difference=d / scale,
    )


def _running(x: np.ndarray, axis: int = 0) -> np.ndarray:
    """The running sums of ``x`` along ``axis`` (the first, or the one after a run axis), from 0."""
    zeros = np.zeros(x.shape[:axis] + (1,) + x.shape[axis + 1 :])
    return np.concatenate([zeros, np.cumsum(x, axis=axis)], axis=axis)


def _block(x: np.ndarray, starts: np.ndarray, stops: np.ndarray, axis: int = 0) -> np.ndarray:
    """The sums of ``x`` over rows ``starts[t]`` … ``stops[t]`` − 1 (along ``axis``: 0, or 1 after a run axis)."""
    r = _running(x, axis)
    out: np.ndarray = r[stops] - r[starts] if axis == 0 else r[:, stops] - r[:, starts]
    return out


def reused_noise_votes(counters: Sequence[CounterNodes], users: int) -> np.ndarray:
    """Every user's votes from noise values the billboard repeats, over ``counters``.

    Every pure coordinate (one that holds no difference), whitened, goes into one sorted table with its negative; every
    coordinate that holds one user's difference looks up the two values its noise would have under her two coins, and a
    lookup that finds exactly one is a vote for that coin. A value matches a table entry within the rounding both may
    carry (:data:`_ULPS` times the magnitudes each was computed from, over σ).

    Args:
        counters: Every counter of the run, every user's difference in each.
        users: How many users.

    Returns:
        One summed vote per user: +1 per vote for canary 1, −1 per vote for canary 0.
    """
    pure: list[tuple[np.ndarray, np.ndarray]] = []  # (residual/σ, its rounding)
    singles: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # (user, residual/σ, d/σ, rounding)
    for c in counters:
        w = _whiten(c)
        released = c.nodes.shape[0]
        held = c.delta[:released] != 0.0
        who = _block(held * np.arange(released, dtype=float)[:, None], c.starts, np.arange(1, released + 1))
        pure.append((w.residual[w.count == 0], w.rounding[w.count == 0]))
        node, coordinate = np.nonzero(w.count == 1)
        user = np.rint(who[node, coordinate]).astype(np.int64)
        scale = float(c.sigma) or 1.0
        singles.append(
            (user, w.residual[node, coordinate], c.delta[user, coordinate] / scale, w.rounding[node, coordinate])
        )
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


def changed_user_vote(counters: Sequence[CounterNodes]) -> float:
    """The votes of a many-run audit's changed user from the noise values ``counters`` repeat.

    She is the only user whose difference is not 0 (every other item is the auditor's to know). A coordinate's noise is
    its residual under D (canary 0), or that less her difference under D′. Each coordinate that holds her difference
    looks its value up under each hypothesis among the *pure* coordinates' (those that hold no difference: their
    residual is their noise under both) and among the other coordinates that hold her difference, each value under the
    same hypothesis (two such coordinates may repeat one draw: only the right coin makes both values noise), negatives
    included. A match under exactly one hypothesis is a vote for it, in each table (differences of equal size repeat
    under the wrong coin where the noise is missing: the pure table tells those apart). Fresh noise matches by chance
    only, within the rounding.

    Args:
        counters: Every counter of the run, her difference in each (every other user's 0).

    Returns:
        Her summed votes: > 0 reads canary 1 (D′), < 0 canary 0 (D), 0 nothing (no node holds her, or no value
        repeats under one hypothesis only).
    """
    return float(changed_user_votes([_one_run(c) for c in counters])[0])


def changed_user_votes(counters: Sequence[CounterNodes]) -> np.ndarray:
    """:func:`changed_user_vote` of R runs at once.

    Args:
        counters: Every counter's :class:`CounterNodes`, every array (but ``starts`` and ``sigma``, shared) with a
            leading run axis.

    Returns:
        The R runs' summed votes, (R,).
    """
    if not counters:
        return np.zeros(1)
    runs = counters[0].nodes.shape[0]
    parts = [_whiten_runs(c) for c in counters if c.nodes.size]
    if not parts:
        return np.zeros(runs)
    residual = np.concatenate([w.residual.reshape(runs, -1) for w in parts], axis=1)
    difference = np.concatenate([w.difference.reshape(runs, -1) for w in parts], axis=1)
    rounding = np.concatenate([w.rounding.reshape(runs, -1) for w in parts], axis=1) + _ULPS * np.abs(difference)
    held = np.concatenate([w.count.reshape(runs, -1) for w in parts], axis=1) > 0
    votes = np.zeros(runs)
    for i in np.flatnonzero(_may_repeat(residual, difference, rounding, held)):
        votes[i] = _vote(residual[i], difference[i], rounding[i], held[i])
    return votes


def _may_repeat(residual: np.ndarray, difference: np.ndarray, rounding: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Which runs (rows) may hold a vote: under either coin, some held value lies within the widest tolerance of the
    run (twice its largest rounding) of a pure coordinate's residual or of another held value, signs ignored — the
    only pairs :func:`_vote` compares (two pure values never vote). Where none does, every lookup of :func:`_vote`
    finds only the value itself, and the run's vote is 0: the exact reading is needed only for the runs this
    returns. Magnitudes suffice (two values within w have magnitudes within w), so the pure ones are sorted once per
    run, and both coins' few held values looked up in them (runs of one held count together)."""
    runs = residual.shape[0]
    widest = 2.0 * np.max(rounding, axis=1, initial=0.0)
    counts = held.sum(axis=1)
    maybe = np.zeros(runs, dtype=bool)
    if not counts.any():
        return maybe
    pure = np.sort(np.where(held, np.inf, np.abs(residual)), axis=1)  # held ones (absent here) sort last
    ends = np.full((runs, 1), np.inf)
    table = np.concatenate([-ends, pure, ends], axis=1)
    for count in np.unique(counts[counts > 0]):
        group = np.flatnonzero(counts == count)
        mine = held[group]
        value = residual[group][mine].reshape(group.size, count)
        magnitude = np.abs(np.stack([value, value - difference[group][mine].reshape(group.size, count)], axis=1))
        width = widest[group][:, None, None]
        with np.errstate(invalid="ignore"):
            close = np.any(np.diff(np.sort(magnitude, axis=2), axis=2) <= width, axis=(1, 2))
            flat = magnitude.reshape(group.size, 2 * count)
            rows = table[group]
            after = np.clip(np.stack([np.searchsorted(row, q) for row, q in zip(rows, flat)]), 1, rows.shape[1] - 1)
            upper = np.take_along_axis(rows, after, axis=1) - flat
            lower = flat - np.take_along_axis(rows, after - 1, axis=1)
            near = np.any(np.minimum(upper, lower) <= widest[group][:, None], axis=1)
        maybe[group] = close | near
    return maybe


def _one_run(c: CounterNodes) -> CounterNodes:
    """``c`` as a batch of one run."""
    return CounterNodes(c.nodes[None], c.starts, c.magnitude[None], c.items0[None], c.delta[None], c.sigma)


def _vote(residual: np.ndarray, difference: np.ndarray, rounding: np.ndarray, held: np.ndarray) -> float:
    """One run's summed votes from its whitened coordinates (flat) and which of them hold her difference."""
    if not held.any():
        return 0.0
    width = (rounding + float(rounding.max()))[held]  # the rounding of the value looked up and of any entry it meets
    pure = np.sort(np.concatenate([residual[~held], -residual[~held]]))
    votes = 0.0
    for sign, values in ((-1.0, residual[held]), (1.0, (residual - difference)[held])):
        others = np.sort(np.concatenate([values, -values]))
        own = 1 + (np.abs(2.0 * values) <= width)  # the value itself, and its negative when it is near 0
        found = (_inside(pure, values, width) > 0).astype(float) + (_inside(others, values, width) > own)
        votes += sign * float(found.sum())
    return votes


def _inside(table: np.ndarray, values: np.ndarray, width: np.ndarray) -> np.ndarray:
    """How many entries of the sorted ``table`` lie within ``width`` of each value."""
    out: np.ndarray = np.searchsorted(table, values + width, "right") - np.searchsorted(table, values - width, "left")
    return out


def _found(table: np.ndarray, values: np.ndarray, tolerance: np.ndarray) -> np.ndarray:
    """Whether each value lies within ``tolerance`` of an entry of the sorted ``table`` (±∞ at its ends)."""
    i = np.clip(np.searchsorted(table, values), 1, table.size - 1)
    out: np.ndarray = np.minimum(np.abs(table[i] - values), np.abs(table[i - 1] - values)) <= tolerance
    return out


def with_votes(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    """The scores with every user whose coin the votes read put first on her side.

    Such a user scores sign(v)·(M + |v|), M above every other score's magnitude; the others are unchanged.

    Args:
        scores: One score per user.
        votes: One summed vote per user (:func:`reused_noise_votes`).

    Returns:
        The scores, as floats.

    Examples:
        >>> import numpy as np
        >>> with_votes(np.array([0.5, -2.0, 1.0]), np.array([0.0, 1.0, -2.0])).tolist()
        [0.5, 4.0, -5.0]
    """
    scores = np.asarray(scores, dtype=float)
    top = 1.0 + float(np.max(np.abs(scores), initial=0.0))
    return np.where(votes != 0, np.sign(votes) * (top + np.abs(votes)), scores)
