"""Each single-run function is the batch of one of its batched twin, with the output it gave before it became one.

A reference copy of the single-run code as it stood before (a peer, kept here verbatim) pins the output: the
batch of one must give the same values, bit for bit, for the same inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.algorithms.envs.tabular import TabularMDP, User, random_tabular


def step_before(env: TabularMDP, h: int, s: int, a: int, user: User) -> tuple[int, float]:
    """``TabularMDP.step`` as it was written for one run (binary search on the step's CDF), before it was
    ``step_runs`` of one run."""
    if user.path is not None:
        s_next = int(user.path[h])
        if s_next >= env.states:
            raise ValueError(f"the user's path leads to state {s_next}, beyond the {env.states} states")
    else:
        u = user.transition_uniforms[h]
        cdf: np.ndarray = env._cdf  # type: ignore[attr-defined]
        s_next = int(np.searchsorted(cdf[h, s, a], u, side="right"))
        s_next = min(s_next, env.states - 1)
    if user.rewards is not None and not np.isnan(user.rewards[h]):
        return s_next, float(user.rewards[h])
    if env.transition_rewards is not None:
        return s_next, float(env.transition_rewards[h, s, a, s_next])
    mean = env.rewards[h, s, a]
    if env.reward_model == "bernoulli":
        return s_next, float(user.reward_uniforms[h] < mean)
    return s_next, float(mean)


def _with_transition_rewards(env: TabularMDP, seed: int) -> TabularMDP:
    """``env`` with a reward per transition whose means are its rewards (reward_model="transition")."""
    scale = np.random.default_rng(seed).uniform(0.5, 1.5, env.transitions.shape)
    tr = np.clip(scale * env.rewards[..., None], 0.0, 1.0)
    mean = np.einsum("hsat,hsat->hsa", env.transitions, tr)
    return TabularMDP(env.transitions, mean, reward_model="transition", transition_rewards=tr)


@settings(max_examples=examples(60), deadline=None)
@given(
    seed=st.integers(0, 2**16),
    states=st.integers(1, 5),
    actions=st.integers(1, 3),
    horizon=st.integers(1, 4),
    model=st.sampled_from(["bernoulli", "mean", "transition"]),
    kind=st.sampled_from(["drawn", "canary", "path"]),
)
def test_step_is_step_runs_of_one_run_and_gives_what_it_gave(
    seed: int, states: int, actions: int, horizon: int, model: str, kind: str
) -> None:
    env = random_tabular(states, actions, horizon, seed, reward_model="mean" if model == "mean" else "bernoulli")
    if model == "transition":
        env = _with_transition_rewards(env, seed)
    rng = np.random.default_rng(seed)
    if kind == "drawn":
        user = User.from_seed(seed, horizon)
    else:
        rewards = np.where(rng.random(horizon) < 0.5, rng.random(horizon), np.nan)  # some steps the model's
        path = rng.integers(0, states, horizon) if kind == "path" else None
        user = User(rng.random(horizon), rng.random(horizon), rewards, path=path)
    for h in range(horizon):
        for s in range(states):
            for a in range(actions):
                got = env.step(h, s, a, user)
                before = step_before(env, h, s, a, user)
                assert got == before
                assert type(got[0]) is int and type(got[1]) is float
                runs = env.step_runs(h, np.array([s]), np.array([a]), user)
                assert (int(runs[0][0]), float(runs[1][0])) == got


def test_a_path_beyond_the_states_is_refused_as_before() -> None:
    env = random_tabular(2, 2, 2, 0)
    user = User(np.array([0.5, 0.5]), np.array([0.5, 0.5]), path=np.array([3, 0]))
    with pytest.raises(ValueError) as before:
        step_before(env, 0, 0, 0, user)
    with pytest.raises(ValueError, match="beyond the 2 states") as now:
        env.step(0, 0, 0, user)
    assert str(now.value) == str(before.value)
