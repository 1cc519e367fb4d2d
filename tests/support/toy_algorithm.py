"""A small private RL algorithm defined outside dpkit: the registration protocol's test case.

``toy-ldp-rewards`` (local DP): after her episode each user sends her H observed rewards, clipped to
[0, 1], plus N(0, σ²I) noise; the server keeps per-(h, s, a) sums of the noisy rewards and plays greedily
on their optimistic means. One Gaussian release per user; replace-one (LDP) sensitivity ‖r − r′‖ <= √H.
Its σ is the classic Gaussian mechanism's, σ = √H · sqrt(2 ln(1.25/δ))/ε (valid for ε < 1, loose above).

Everything dpkit needs is in this file: the agent (which follows the messages protocol: ``update`` returns her
noisy message, ``message_statistics`` the same before its noise), its declaration, its report text and one
:class:`~dpkit.algorithms.spec.AlgorithmSpec` (``SPEC``) whose audit is the messages protocol's
(:func:`~dpkit.audits.rl.observers.local_messages_audit`) — registered with one line, ``registry.register(SPEC)``.
Module level, so that process pools can import it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpkit.accountant.declarations import DeclaredRelease, PrivacyDeclaration
from dpkit.algorithms.episodes import Plan, resolve_sigmas
from dpkit.algorithms.spec import AlgorithmSpec, ReportSpec
from dpkit.audits.rl.observers import local_messages_audit

NAME = "toy-ldp-rewards"
RELEASE = "rewards"


def declare(epsilon: float, delta: float, parameters: Mapping[str, Any]) -> PrivacyDeclaration:
    horizon = int(parameters["horizon"])
    sensitivity = math.sqrt(horizon)
    return PrivacyDeclaration(
        algorithm=NAME,
        privacy_model="LDP",
        paper="a toy algorithm of the registration test",
        paper_relation="replace_one",
        epsilon=epsilon,
        delta=delta,
        releases=(
            DeclaredRelease(
                name=RELEASE,
                statistic="a user's H rewards, clipped to [0, 1]",
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


class ToyAgent:
    """The server and its users (see the module docstring)."""

    def __init__(self, name: str, env: Any, rng: np.random.Generator, declaration: PrivacyDeclaration, sigma: Any):
        self.name, self.env, self.rng = name, env, rng
        self.declaration = declaration
        self.sigmas = resolve_sigmas(declaration, sigma)
        shape = (env.horizon, env.states, env.actions)
        self.sums, self.counts = np.zeros(shape), np.zeros(shape)

    def plan(self, k: int) -> Plan:
        optimistic = (self.sums + 1.0) / (self.counts + 1.0)
        return Plan(np.argmax(optimistic, axis=2))

    def statistic(self, rewards: np.ndarray) -> np.ndarray:
        """What a user's message carries before its noise: her rewards clipped to [0, 1]."""
        return np.clip(np.asarray(rewards, dtype=float), 0.0, 1.0)

    def message_statistics(self, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        """The messages protocol: a user's message before its noise, by release name."""
        return {RELEASE: self.statistic(rewards)}

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        message = self.statistic(rewards) + self.rng.normal(0.0, self.sigmas[RELEASE], self.env.horizon)
        steps = np.arange(self.env.horizon)
        self.sums[steps, states[:-1], actions] += message
        self.counts[steps, states[:-1], actions] += 1.0
        return {RELEASE: message}


def make_agent(
    name: str,
    env: Any,
    episodes: int,
    rng: np.random.Generator | int,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: Any = "paper",
    **options: Any,
) -> ToyAgent:
    if options:
        raise ValueError(f"{name} takes no options, got {sorted(options)}")
    if epsilon is None or delta is None:
        raise ValueError(f"{name} is private: give epsilon and delta")
    return ToyAgent(name, env, np.random.default_rng(rng), declare(epsilon, delta, {"horizon": env.horizon}), sigma)


def ledger_parameters(sizes: Any, env_seed: int) -> dict[str, Any]:
    return {"horizon": sizes.horizon if sizes.horizon is not None else 2 * sizes.states}


SPEC = AlgorithmSpec(
    name=NAME,
    entry_point="toy_algorithm:make_agent",  # a "module:attr" entry point, imported when first used
    summary="local DP; one noisy reward vector per user (a test's toy)",
    declaration=declare,
    required=("horizon",),
    ledger_parameters=ledger_parameters,
    audit=local_messages_audit(defaults={"epsilon": 2.0}),  # canaries with raw rewards beyond [0, 1]
    report=ReportSpec(assumptions=("Rewards are clipped to [0, 1] by each user before her noise is added.",)),
)


class _NoClip(ToyAgent):
    """A wrong implementation: the user forgets to clip her rewards."""

    def statistic(self, rewards: np.ndarray) -> np.ndarray:
        return np.asarray(rewards, dtype=float)


def make_agent_without_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> ToyAgent:
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _NoClip
    return agent
