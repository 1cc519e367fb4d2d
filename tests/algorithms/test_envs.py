"""Tabular environments: users, RiverSwim, backward induction against brute force, the linear-mixture view."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.algorithms.envs.features import LinearMixture
from dpkit.algorithms.envs.tabular import TabularMDP, User, Users, make_tabular, random_tabular, riverswim


def _brute_force_optimal(env: TabularMDP) -> float:
    """Best expected return over every deterministic Markov policy, by enumeration."""
    h_, s_, a_ = env.rewards.shape
    best = -np.inf
    for flat in itertools.product(range(a_), repeat=h_ * s_):
        pi = np.array(flat).reshape(h_, s_)
        dist = np.zeros(s_)
        dist[env.initial_state] = 1.0
        total = 0.0
        for h in range(h_):
            total += float(dist @ env.rewards[h, np.arange(s_), pi[h]])
            dist = dist @ env.transitions[h, np.arange(s_), pi[h]]
        best = max(best, total)
    return best


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**31), s=st.integers(1, 2), a=st.integers(1, 2), h=st.integers(1, 3))
def test_optimal_value_matches_enumeration(seed: int, s: int, a: int, h: int) -> None:
    env = random_tabular(s, a, h, seed)
    _, v = env.optimal_values()
    assert v[0, 0] == pytest.approx(_brute_force_optimal(env), abs=1e-12)


@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**31))
def test_policy_value_matches_monte_carlo_free_forward_pass(seed: int) -> None:
    """V^π from backward induction equals the forward state-distribution computation, batched or not."""
    env = random_tabular(3, 2, 4, seed)
    rng = np.random.default_rng(seed)
    pis = rng.dirichlet(np.ones(2), size=(5, 4, 3))
    v = env.policy_values(pis)
    for i in range(5):
        dist = np.eye(3)[0]
        total = 0.0
        for h in range(4):
            total += float(np.einsum("s,sa,sa->", dist, pis[i, h], env.rewards[h]))
            dist = np.einsum("s,sa,sat->t", dist, pis[i, h], env.transitions[h])
        assert v[i, 0, 0] == pytest.approx(total, abs=1e-12)
        assert env.policy_values(pis[i])[0, 0] == pytest.approx(total, abs=1e-12)


def test_regret_is_zero_for_the_optimal_policy_and_positive_otherwise() -> None:
    env = riverswim(4)
    q, _ = env.optimal_values()
    assert env.regret(q.argmax(axis=2)) == pytest.approx(0.0, abs=1e-15)
    assert env.regret(np.zeros((env.horizon, 4), dtype=int)) > 0.1


def test_riverswim_structure() -> None:
    env = riverswim(5)
    assert (env.horizon, env.states, env.actions) == (10, 5, 2)
    assert env.rewards[:, 0, 0] == pytest.approx(5 / (1000 * 10))
    assert env.rewards[:, 4, 1] == pytest.approx(1 / 10)
    assert env.rewards.max(axis=(1, 2)).sum() <= 1.0 + 1e-12  # every return lies in [0, 1]
    # left is deterministic; right succeeds with p
    assert np.all(env.transitions[:, 2, 0, 1] == 1.0)
    assert np.allclose(env.transitions[:, 2, 1, 3], 0.9)
    inh = riverswim(5, inhomogeneous=True, rng=3)
    p = inh.transitions[:, 1, 1, 2]
    assert np.all((p >= 0.8) & (p <= 1.0)) and np.unique(p).size == inh.horizon
    with pytest.raises(ValueError, match="rng"):
        riverswim(5, inhomogeneous=True)
    with pytest.raises(ValueError, match="states"):
        riverswim(1)


def test_users_are_reproducible_from_their_own_seeds() -> None:
    users = Users.draw(6, 4, 11)
    again = Users.from_seeds([s for s in users.seeds if s is not None], 4)
    assert np.array_equal(users.transition_uniforms, again.transition_uniforms)
    assert np.array_equal(users.reward_uniforms, again.reward_uniforms)
    one = User.from_seed(users.seeds[2], 4)  # type: ignore[arg-type]
    assert np.array_equal(one.transition_uniforms, users[2].transition_uniforms)


def test_replace_changes_one_user_only() -> None:
    users = Users.draw(5, 3, 0)
    canary = User.canary([1.0, 1.0, 1.0], [0.5, 0.5, 0.5])
    nb = users.replace(2, canary)
    assert len(nb) == 5
    for k in (0, 1, 3, 4):
        assert np.array_equal(nb[k].transition_uniforms, users[k].transition_uniforms)
    assert np.array_equal(nb[2].rewards, [1.0, 1.0, 1.0])
    assert len(users.remove(0)) == 4
    with pytest.raises(ValueError, match="rewards"):
        User.canary([2.0, 0.0, 0.0], [0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match="out of range"):
        users.replace(5, canary)


def test_steps_follow_the_transition_law() -> None:
    env = random_tabular(4, 2, 2, 5)
    users = Users.draw(20_000, 2, 1)
    nexts = np.array([env.step(1, 2, 1, users[k])[0] for k in range(len(users))])
    freq = np.bincount(nexts, minlength=4) / len(users)
    sd = np.sqrt(env.transitions[1, 2, 1] * (1 - env.transitions[1, 2, 1]) / len(users))
    assert np.all(np.abs(freq - env.transitions[1, 2, 1]) <= 5 * sd + 1e-12)


def test_bernoulli_and_canary_rewards() -> None:
    env = random_tabular(2, 2, 3, 2, reward_model="bernoulli")
    users = Users.draw(5000, 3, 4)
    rs = np.array([env.step(0, 0, 1, users[k])[1] for k in range(len(users))])
    assert set(np.unique(rs)) <= {0.0, 1.0}
    mean = env.rewards[0, 0, 1]
    assert abs(rs.mean() - mean) <= 5 * np.sqrt(mean * (1 - mean) / len(rs)) + 1e-9
    canary = User.canary([0.3, 0.2, 0.1], [0.0, 0.0, 0.0])
    assert env.step(1, 0, 0, canary)[1] == 0.2


def test_linear_mixture_view_reproduces_the_kernel() -> None:
    env = random_tabular(3, 2, 2, 9)
    lm = LinearMixture(env)
    assert lm.dim == 18 and lm.reward_dim == 6
    v = np.random.default_rng(0).random(3)
    phi = lm.phi_v(v)
    assert phi.shape == (3, 2, 18)
    for h in range(2):
        assert np.allclose(phi @ lm.theta()[h], env.transitions[h] @ v)
    assert np.allclose(np.linalg.norm(phi, axis=-1), np.linalg.norm(v))
    assert lm.feature_bound(1.0) >= np.sqrt(3)
    for s in range(3):
        for a in range(2):
            assert np.array_equal(lm.phi_v_at(v, s, a), phi[s, a])
            assert np.array_equal(phi[s, a][lm.block(s, a)], v)
    assert np.allclose(lm.reward_features() @ lm.theta_r()[1], env.rewards[1])


def test_bad_inputs_name_the_value() -> None:
    with pytest.raises(ValueError, match="transitions"):
        TabularMDP(np.ones((1, 2, 1, 2)), np.zeros((1, 2, 1)))
    with pytest.raises(ValueError, match="rewards"):
        TabularMDP(np.full((1, 2, 1, 2), 0.5), np.full((1, 2, 1), 2.0))
    with pytest.raises(ValueError, match="env"):
        make_tabular("maze", 3, 0)
    with pytest.raises(ValueError, match="policy"):
        riverswim(3).policy_values(np.zeros((2, 2), dtype=int))
