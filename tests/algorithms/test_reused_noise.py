"""Coins read through reused noise (dpkit.algorithms.reused_noise): two binary-tree counters seeded alike give their
canaries' coins away exactly, whatever σ; fresh noise, and a p-sum published twice on the same data (post-processing),
give no vote; a counter released without noise gives its coins away too (its noise, 0, repeats)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant.binary_counter import BinaryCounter
from dpkit.algorithms.observers import billboard_one_run_features
from dpkit.algorithms.reused_noise import with_votes

USERS = 96


def _run(seeds: dict[str, int], sigmas: dict[str, float], *, copy: bool = False, seed: int = 0):
    """A run of two counters over USERS users whose coins are drawn from ``seed``: "a" holds user k's one-hot item on
    cell k mod 8 (canary 1) or nothing (canary 0); "b" (16 cells: its draws cover a's) holds nothing of anyone
    (every coordinate pure), or with ``copy`` the same items as "a" (a p-sum published twice)."""
    rng = np.random.default_rng(seed)
    coins = rng.integers(0, 2, USERS)
    shapes = {"a": (8,), "b": (8,) if copy else (16,)}
    counters = {n: BinaryCounter(shapes[n], sigmas[n], seeds[n], steps=USERS) for n in shapes}
    items0 = {n: np.zeros((USERS, *shapes[n])) for n in shapes}
    items1 = {n: np.zeros((USERS, *shapes[n])) for n in shapes}
    items1["a"][np.arange(USERS), np.arange(USERS) % 8] = 1.0
    if copy:
        items1["b"] = items1["a"].copy()
    prefixes: dict[str, list[np.ndarray]] = {n: [] for n in shapes}
    for k in range(USERS):
        for n, c in counters.items():
            prefixes[n].append(c.prefix())
            c.add(items1[n][k] if coins[k] else items0[n][k])
    stacked = {n: np.stack(p)[:, None] for n, p in prefixes.items()}  # one leading batch axis, as CounterLog keeps
    batch = lambda x: {n: v[:, None] for n, v in x.items()}  # noqa: E731
    scores, features = billboard_one_run_features(
        stacked, batch(items0), batch(items1), {"a": 1.3, "b": 1.3}, {"a": False, "b": False}
    )
    return coins, scores, features[:, -1]


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sigma=st.floats(0.1, 50.0))
def test_counters_seeded_alike_give_the_coins_away(seed: int, sigma: float) -> None:
    coins, scores, votes = _run({"a": seed, "b": seed}, {"a": sigma, "b": sigma}, seed=seed)
    read = votes != 0
    assert read.sum() >= USERS // 2  # a's level-0 p-sums hold one user each, their noise is b's (wider) somewhere
    assert np.array_equal(votes[read] > 0, coins[read] == 1)
    # the white-box score puts every user read so first on her side
    order = np.argsort(scores)
    assert set(order[-int((votes > 0).sum()) :]) == set(np.flatnonzero(votes > 0))


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_fresh_noise_and_a_p_sum_published_twice_give_no_vote(seed: int) -> None:
    _, _, votes = _run({"a": seed, "b": seed + 1}, {"a": 2.0, "b": 2.0}, seed=seed)
    assert not votes.any()
    _, _, votes = _run({"a": seed, "b": seed}, {"a": 2.0, "b": 2.0}, copy=True, seed=seed)
    assert not votes.any()  # the same noise on the same data: post-processing, nothing to read


def test_a_counter_released_without_noise_gives_its_coins_away() -> None:
    coins, _, votes = _run({"a": 1, "b": 2}, {"a": 0.0, "b": 2.0})
    read = votes != 0
    assert read.sum() >= USERS // 2
    assert np.array_equal(votes[read] > 0, coins[read] == 1)


@pytest.mark.parametrize("scores", [np.array([0.5, -2.0, 3.0, 0.0]), np.zeros(4)])
def test_with_votes_puts_the_users_read_first(scores: np.ndarray) -> None:
    out = with_votes(scores, np.array([0.0, 2.0, 0.0, -1.0]))
    assert out[0] == scores[0] and out[2] == scores[2]
    assert out[1] > np.abs(scores).max() and out[3] < -np.abs(scores).max()
