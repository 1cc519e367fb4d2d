"""Coins read through reused noise (dpkit.audits.rl.reused_noise): two binary-tree counters seeded alike give their
canaries' coins away exactly, whatever σ; fresh noise, and a p-sum published twice on the same data (post-processing),
give no vote; a counter released without noise gives its coins away too (its noise, 0, repeats). The same reading of
a many-run audit's changed user (the billboard observer's last column), and of a local-DP user's messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant.binary_counter import BinaryCounter
from dpkit.audits.rl.observers import SIGNAL_CAP, Trace
from dpkit.audits.rl.psums import CounterReading, billboard, billboard_one_run_features
from dpkit.audits.rl.reused_noise import with_votes

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


# -- the many-run reading: one changed user, every other item known ---------------------------------------------

K, CHANGED = 8, 3  # user 3 is in one p-sum of the tree (users 0 … 3)


def _changed_user(
    seeds: dict[str, int], sigmas: dict[str, float], coin: int, *, b_holds: float = 0.0, seed: int = 0
) -> int:
    """The billboard observer's reading of one run of two counters over K users (the other users' items drawn from
    ``seed``, known to the auditor): the changed user's item in "a" (8 cells) is a one-hot on cell 0 (canary 1) or
    nothing (canary 0); "b" holds no difference of hers (16 cells: its draws cover a's), or with ``b_holds`` her
    one-hot times ``b_holds`` (8 cells: the same draws as a's where seeded alike). Returns +1 (the reading says
    D′), −1 (D) or 0 (no reading)."""
    rng = np.random.default_rng(seed)
    shapes = {"a": (8,), "b": (8,) if b_holds else (16,)}
    one_hot = {"a": np.eye(8)[0], "b": b_holds * np.eye(shapes["b"][0])[0]}
    items = {n: rng.random((K, *shapes[n])) for n in shapes}
    for n in shapes:
        items[n][CHANGED] = 0.0  # canary 0's item
    counters = {n: BinaryCounter(shapes[n], sigmas[n], seeds[n], steps=K) for n in shapes}
    prefixes: dict[str, list[np.ndarray]] = {n: [] for n in shapes}
    for k in range(K):
        for n, c in counters.items():
            prefixes[n].append(c.prefix())
            c.add(one_hot[n] if (k == CHANGED and coin) else items[n][k])
    trace = Trace()
    billboard(
        trace,
        {n: np.stack(p)[:, None] for n, p in prefixes.items()},  # one leading batch axis, as CounterLog keeps
        {n: x[: K - 1, None] for n, x in items.items()},
        {n: d[None] for n, d in one_hot.items()},
        CHANGED,
        CounterReading(sigmas, dict.fromkeys(shapes, 1.0), dict.fromkeys(shapes, False), dict.fromkeys(shapes, 1.0)),
    )
    row = trace.row(True)
    half = (row.size - 2) // 2
    r, a = row[half - 1], row[2 * half - 1]  # the reading: the last white-box column
    assert a in (0.0, SIGNAL_CAP) and r in (0.0, a)
    return 0 if a == 0.0 else (1 if r > 0 else -1)


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sigma=st.floats(0.1, 1e6), coin=st.integers(0, 1))
def test_many_run_counters_seeded_alike_give_the_changed_users_coin_away(seed: int, sigma: float, coin: int) -> None:
    # whatever σ (up to a million times her difference): her noise is b's, pure, and only her coin makes it so
    assert _changed_user({"a": seed, "b": seed}, {"a": sigma, "b": sigma}, coin, seed=seed) == (1 if coin else -1)
    # two copies that both hold her difference (of different sizes): only her coin makes both values noise
    assert _changed_user({"a": seed, "b": seed}, {"a": sigma, "b": sigma}, coin, b_holds=0.5, seed=seed) == (
        1 if coin else -1
    )


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), coin=st.integers(0, 1))
def test_many_run_fresh_noise_and_a_release_published_twice_give_no_reading(seed: int, coin: int) -> None:
    assert _changed_user({"a": seed, "b": seed + 1}, {"a": 2.0, "b": 2.0}, coin, seed=seed) == 0
    assert _changed_user({"a": seed, "b": seed + 1}, {"a": 2.0, "b": 2.0}, coin, b_holds=1.0, seed=seed) == 0
    # the same noise on the same data (a p-sum published twice): post-processing, both coins make both values noise
    assert _changed_user({"a": seed, "b": seed}, {"a": 2.0, "b": 2.0}, coin, b_holds=1.0, seed=seed) == 0


@pytest.mark.parametrize("coin", [0, 1])
def test_many_run_a_counter_without_noise_gives_the_changed_users_coin_away(coin: int) -> None:
    # its zeros repeat; her one-hot shifts her coordinate off them under the wrong coin only
    assert _changed_user({"a": 1, "b": 2}, {"a": 0.0, "b": 2.0}, coin) == (1 if coin else -1)


def test_a_reading_moves_the_white_box_score_by_its_log_likelihood_ratio() -> None:
    # no reading: residual and signal 0, the score Σ a·r − ½Σ a² unchanged; a reading: ±SIGNAL_CAP²/2 (D′ / D)
    for vote, expected in ((0.0, 0.0), (2.0, 0.5 * SIGNAL_CAP**2), (-1.0, -0.5 * SIGNAL_CAP**2)):
        trace = Trace()
        trace.read(vote)
        r, a, plans, mu_used, mu_claim = trace.row(True)  # no plans recorded: their count P is 0
        assert plans == 0.0
        assert a * r - 0.5 * a * a == expected
        assert mu_used == mu_claim == 0.0  # a reading allows nothing
