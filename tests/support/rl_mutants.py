"""Wrong implementations of the seed algorithms, for the RL audits' mutant zoo.

Each factory has :func:`dpkit.algorithms.simulation.make_agent`'s signature and is passed to an audit as
``RlSetting(implementation=...)``; the audit's claim (σ and Δ) still comes from the registered
algorithm's declaration, so each mutant is judged against what the algorithm declares.
Module level, so that process pools can pickle them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpkit.algorithms.ldp_ucrl_vtr import GRAM, TARGET, LdpUcrlVtr
from dpkit.algorithms.linopt import PrivateLinOpt
from dpkit.algorithms.rlsvi import Rlsvi
from dpkit.algorithms.simulation import make_agent
from dpkit.algorithms.ucrl_vtr import return_caps


class _LdpNoClip(LdpUcrlVtr):
    """The user's randomiser without its clipping: V (and the targets) are not clipped to [0, b_V],
    φ not to its ℓ2 bound — optimistic values above b_V go into her messages as they are."""

    def statistics(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
        h_, sa, s_ = self.horizon, self.states * self.actions, self.states
        phi = np.zeros((h_, sa, s_))
        phi[self._steps, np.asarray(blocks)] = np.asarray(values, dtype=float)
        phi = phi.reshape(h_, self.dim)
        return {GRAM: phi[:, :, None] * phi[:, None, :], TARGET: phi * np.asarray(targets, dtype=float)[:, None]}


def ldp_no_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """LDP-UCRL-VTR whose randomiser forgets to clip, under a planner that caps Q at the largest return-to-go (as
    the ``min{H, …}`` display of seed 000's Algorithm 1 reads) rather than at H − h + 1: its optimistic values then
    exceed the per-step bounds the declaration assumes, and go into the messages as they are."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _LdpNoClip
    agent.caps = return_caps(agent._rewards)
    return agent


def ldp_sigma_halved(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """σ from a wrong formula: half of what the declaration needs, on both messages (and declared as such)."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.sigma_gram, agent.sigma_target = agent.sigma_gram / 2, agent.sigma_target / 2
    agent.sigmas = {GRAM: agent.sigma_gram, TARGET: agent.sigma_target}
    return agent


def ldp_target_unnoised(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """A statistic released un-noised: Δu_h without its noise, while the declaration says σ_u."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.sigma_target = 0.0
    return agent


def ldp_add_remove(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> LdpUcrlVtr:
    """Replace-one neighbours accounted as add/remove: σ calibrated for the smaller add/remove
    sensitivity (here: half of replace-one's), while a user may be replaced."""
    return ldp_sigma_halved(name, env, episodes, rng, **kw)


class _RlsviNoClip(Rlsvi):
    """RLSVI that forgets to clip the observed rewards to [0, 1]."""

    def update(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> Any:
        out = super().update(k, states, actions, rewards)
        r = np.asarray(rewards, dtype=float)
        cell = self._cell_base + np.asarray(states)[:-1] * self.actions + np.asarray(actions)
        self._reward_sum_flat[cell] += r - np.clip(r, 0.0, 1.0)
        self._r_hat_flat[cell] = self._reward_sum_flat[cell] / self._n_flat[cell]
        return out


def rlsvi_no_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Rlsvi:
    """RLSVI whose reward clipping is removed."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _RlsviNoClip
    return agent


# -- the counter algorithms (Private-LinOpt-VI/-PO, Private-OFU-RL) ---------------------------------


def _counters(agent: Any) -> dict[str, Any]:
    """The binary-tree counters of a counter algorithm's agent, by release name."""
    if hasattr(agent, "privatizer"):
        return dict(agent.privatizer.counters)
    return {"B1": agent._b1, "B2": agent._b2}


def counters_sigma_halved(name: str, env: Any, episodes: int, rng: Any, *, sigma: Any = "tight", **kw: Any) -> Any:
    """σ from a wrong formula: every counter at half the σ the declaration needs (and declared as such)."""
    tight = make_agent(name, env, episodes, 0, sigma="tight", **kw).sigmas
    return make_agent(name, env, episodes, rng, sigma={k: v / 2 for k, v in tight.items()}, **kw)


def counters_unnoised(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Statistics released un-noised: the counters add no noise, while their declared σ is unchanged.

    (Un-noising LinOpt's first counter alone, B_{h,p,1}, is not seen at 1,000 runs: at the audit's canaries
    its p-sums carry little of the pair's μ. OFU-RL's first counter alone is; this mutant turns all off.)"""
    agent = make_agent(name, env, episodes, rng, **kw)
    for counter in _counters(agent).values():
        counter.sigma = 0.0
    return agent


def counters_tree_one_level_short(
    name: str, env: Any, episodes: int, rng: Any, *, sigma: Any = "tight", **kw: Any
) -> Any:
    """A tree counter accounted one level short: σ calibrated as if each item entered one p-sum fewer
    (σ scaled by sqrt((m − 1)/m), m the p-sums per item; with m = 2 at the audit's sizes, σ/√2)."""
    from dpkit.accountant.tree import max_psums_per_item

    tight = make_agent(name, env, episodes, 0, sigma="tight", **kw).sigmas
    m = max_psums_per_item(episodes, schedule="after-each")
    factor = ((m - 1) / m) ** 0.5 if m > 1 else 0.5
    return make_agent(name, env, episodes, rng, sigma={k: v * factor for k, v in tight.items()}, **kw)


class _LinOptNoRewardClip:
    """Mixin: LinOpt's items without the clip of the observed rewards to [0, 1] (its reward counters'
    declared sensitivity assumes r ∈ [0, 1])."""

    def _check_trajectory(self, k: int, states: Any, actions: Any, rewards: Any) -> tuple[np.ndarray, ...]:
        s, a, _ = super()._check_trajectory(k, states, actions, rewards)  # type: ignore[misc]
        return s, a, np.asarray(rewards, dtype=float)


class _PrivateLinOptNoRewardClip(_LinOptNoRewardClip, PrivateLinOpt):
    """Private-LinOpt-VI/-PO without reward clipping."""


def linopt_no_reward_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-LinOpt-VI/-PO whose reward clipping is removed."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _PrivateLinOptNoRewardClip
    return agent


def add_remove_accounting(name: str, env: Any, episodes: int, rng: Any, *, sigma: Any = "tight", **kw: Any) -> Any:
    """Replace-one neighbours accounted as add/remove, for any algorithm whose declaration defines both:
    σ calibrated on the ledger of the add/remove sensitivities (the smaller ones: a user's own term, not the
    difference of two users' terms), while the audit replaces a user."""
    from dpkit.accountant.declarations import algorithm_ledger

    declaration = make_agent(name, env, episodes, 0, sigma="tight", **kw).declaration
    ledger = algorithm_ledger(declaration, relation="add_remove")
    sigmas = {r.name: s for r, s in zip(declaration.releases, ledger.sigmas_tight)}
    return make_agent(name, env, episodes, rng, sigma=sigmas, **kw)
