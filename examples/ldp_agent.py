"""A private RL agent written the way a user writes one, audited by dpkit with no edit to dpkit:

    dpkit audit --agent examples/ldp_agent.py:make_agent --runs 2000

The protocol (see ``dpkit.algorithms.spec``): ``make_agent(name, env, episodes, rng, *, epsilon, delta,
sigma, **options)`` builds the agent for a tabular MDP ``env`` (``env.horizon``, ``env.states``,
``env.actions``) from a seed or ``numpy.random.Generator``; the agent has

* ``plan(k)`` → a ``Plan`` (a policy ``[h, s]`` of actions) for user k;
* ``update(k, states, actions, rewards)`` → what user k sends, ``{release: array}`` (local DP: her messages);
* ``message_statistics(states, actions, rewards)`` → the same messages before their noise;
* ``declaration`` (a ``PrivacyDeclaration``: each release's sensitivity under the neighbouring relation
  and σ) and ``sigmas`` ({release: σ} it really uses).

This agent: every user sends her H rewards clipped to [0, 1] and her visit indicator of the last step,
each with Gaussian noise; the server plays greedily on noisy reward means.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpkit.accountant.declarations import DeclaredRelease, PrivacyDeclaration
from dpkit.algorithms.episodes import Plan, resolve_sigmas


def declare(horizon: int, epsilon: float, delta: float) -> PrivacyDeclaration:
    """One message of H clipped rewards: two users' rewards differ by at most √H in ℓ2 (replace-one)."""
    sensitivity = math.sqrt(horizon)
    return PrivacyDeclaration(
        algorithm="my-ldp-agent",
        privacy_model="LDP",
        paper="examples/ldp_agent.py",
        paper_relation="replace_one",
        epsilon=epsilon,
        delta=delta,
        releases=(
            DeclaredRelease(
                name="rewards",
                statistic="the user's H rewards clipped to [0, 1]",
                count=1,
                sensitivity_add_remove=None,
                sensitivity_replace_one=sensitivity,
                paper_sensitivity=sensitivity,
                sigma_paper=sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon,
            ),
        ),
        parameters={"horizon": horizon},
        relations=("replace_one",),
    )


class NoisyRewardsAgent:
    def __init__(self, env: Any, rng: Any, epsilon: float, delta: float, sigma: Any) -> None:
        self.name = "my-ldp-agent"
        self.env = env
        self.rng = np.random.default_rng(rng)
        self.declaration = declare(env.horizon, epsilon, delta)
        self.sigmas = resolve_sigmas(self.declaration, sigma)
        self.sums = np.zeros((env.horizon, env.states, env.actions))
        self.visits = np.zeros((env.horizon, env.states, env.actions))

    def plan(self, k: int) -> Plan:
        return Plan(np.argmax((self.sums + 1.0) / (self.visits + 1.0), axis=2))

    def message_statistics(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        return {"rewards": np.clip(np.asarray(rewards, dtype=float), 0.0, 1.0)}

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        message = self.message_statistics(states, actions, rewards)["rewards"]
        message = message + self.rng.normal(0.0, self.sigmas["rewards"], message.shape)
        steps = np.arange(self.env.horizon)
        self.sums[steps, states[:-1], actions] += message
        self.visits[steps, states[:-1], actions] += 1.0
        return {"rewards": message}


def make_agent(
    name: str,
    env: Any,
    episodes: int,
    rng: Any,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: Any = "paper",
    **options: Any,
) -> NoisyRewardsAgent:
    if options:
        raise ValueError(f"my-ldp-agent takes no options, got {sorted(options)}")
    if epsilon is None or delta is None:
        raise ValueError("my-ldp-agent is private: give epsilon and delta")
    return NoisyRewardsAgent(env, rng, epsilon, delta, sigma)


class _Forgetful(NoisyRewardsAgent):
    def message_statistics(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        return {"rewards": np.asarray(rewards, dtype=float)}  # the bug: no clipping


def make_agent_without_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> NoisyRewardsAgent:
    """The same agent with its clipping forgotten (what an audit must catch)."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _Forgetful
    return agent
