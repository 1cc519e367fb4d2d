"""R episodes played at once are, run by run, the episodes played one at a time (the scalar is the batch of one)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.algorithms.envs.tabular import TabularMDP, User, random_tabular
from dpkit.algorithms.episodes import play_episodes


def _scalar_episode(env: TabularMDP, policy: np.ndarray, user: User, draws: np.ndarray | None) -> tuple:
    """The reference: the per-step loop of env.step and the inverse CDF, on Python integers."""
    s = env.initial_state if user.initial_state is None else user.initial_state
    states, actions, rewards = [s], [], []
    for h in range(env.horizon):
        if policy.ndim == 3:
            cdf = np.cumsum(policy[h, s])
            a = int(min(np.searchsorted(cdf, draws[h] * cdf[-1], side="right"), policy.shape[-1] - 1))
        else:
            a = int(policy[h, s])
        s, r = env.step(h, s, a, user)
        states.append(s)
        actions.append(a)
        rewards.append(r)
    return np.array(states), np.array(actions), np.array(rewards)


@settings(max_examples=40, deadline=None)
@given(
    runs=st.integers(1, 6),
    stochastic=st.booleans(),
    bernoulli=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_episodes_played_together_are_those_played_alone(
    runs: int, stochastic: bool, bernoulli: bool, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    env = random_tabular(3, 2, 4, seed, reward_model="bernoulli" if bernoulli else "mean")
    user = User(rng.random(4), rng.random(4))
    if stochastic:
        policies = rng.dirichlet(np.ones(2), size=(runs, 4, 3))
        draws = rng.random((runs, 4))
    else:
        policies = rng.integers(0, 2, size=(runs, 4, 3))
        draws = None
    states, actions, rewards = play_episodes(env, policies, user, draws)
    for i in range(runs):
        want = _scalar_episode(env, policies[i], user, None if draws is None else draws[i])
        np.testing.assert_array_equal(states[i], want[0])
        np.testing.assert_array_equal(actions[i], want[1])
        np.testing.assert_array_equal(rewards[i], want[2])
