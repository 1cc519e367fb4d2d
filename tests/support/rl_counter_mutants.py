"""Wrong implementations of the counter algorithms (Private-LinOpt-VI/-PO, Private-OFU-RL), for the
RL audits' mutant zoo (see :mod:`rl_mutants` for the others).

Each factory has :func:`dpkit.algorithms.simulation.make_agent`'s signature and is passed to an audit as
``default_setting(algorithm, implementation=factory)``; the audit's claim (σ and Δ) still comes from the
registered algorithm's declaration, so each mutant is judged against what the algorithm declares.
Module level, so that process pools can pickle them; those marked :func:`~dpkit.algorithms.batches.plays_runs` keep
the agent's run axis and are audited in batches.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpkit.accountant.tree import BinaryCounter
from dpkit.algorithms.batches import plays_runs
from dpkit.algorithms.linopt import RELEASES, PrivateLinOpt
from dpkit.algorithms.ofu_rl import PrivateOfuRl
from dpkit.algorithms.simulation import make_agent


def _counters(agent: Any) -> dict[str, BinaryCounter]:
    """The binary-tree counters of a counter algorithm's agent, by release name."""
    if hasattr(agent, "privatizer"):
        return dict(agent.privatizer.counters)
    return {"B1": agent._b1, "B2": agent._b2}


def _sigma_table(agent: Any) -> dict[str, float]:
    """The σ by release the audit reads as the implementation's own (LinOpt: its privatizer's)."""
    return agent.privatizer.sigmas if hasattr(agent, "privatizer") else agent.sigmas


# -- (1) σ from a wrong formula ---------------------------------------------------------------------


@plays_runs
def counters_sigma_formula_halved(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """σ from a wrong formula: every counter's σ halved after construction, and declared as such
    (the privatizer's / agent's ``sigmas`` and each counter's ``sigma``)."""
    agent = make_agent(name, env, episodes, rng, **kw)
    table = _sigma_table(agent)
    for release, counter in _counters(agent).items():
        counter.sigma = counter.sigma / 2
        table[release] = counter.sigma
    if hasattr(agent, "privatizer"):
        agent.sigmas = dict(table)
    return agent


# -- (2) clipping removed in items ------------------------------------------------------------------


class _LinOptItemsNoClip(PrivateLinOpt):
    """LinOpt's ``items`` without any clipping: V_{h+1} not clipped to [0, H], φ not to sqrt(d1)·H,
    r not to [0, 1].

    The audit's canaries drive the raw *rewards* past the bound (2 against [0, 1]), so the reward target
    counter B_{h,r,2} realises twice its declared Δ. They do not drive V or φ past theirs: the plan's values
    are already in [0, H] and ‖φ_V‖ <= sqrt(S)·H <= sqrt(d1)·H, so those two missing clips are invisible."""

    def items(self, k: int, states: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict[str, np.ndarray]:
        if self._planned is None or self._planned[0] != k:
            raise ValueError(f"items of episode {k} need its plan; the next episode to plan is {self._next}")
        s, a, _ = self._check_trajectory(k, states, actions, rewards)
        r = np.asarray(rewards, dtype=float)
        _, v, _ = self._planned
        h_, s_, a_ = self.env.horizon, self.env.states, self.env.actions
        steps = np.arange(h_)
        v_next = np.asarray(v[1:], dtype=float)
        phi = np.zeros((h_, s_ * a_, s_))
        phi[steps, s[:-1] * a_ + a] = v_next
        phi = phi.reshape(h_, self.d1)
        target = v_next[steps, s[1:]]
        psi = self.features.reward_features()[s[:-1], a]
        return dict(
            zip(
                RELEASES,
                (
                    phi[:, :, None] * phi[:, None, :],
                    phi * target[:, None],
                    psi[:, :, None] * psi[:, None, :],
                    psi * r[:, None],
                ),
            )
        )


def linopt_items_no_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-LinOpt-VI/-PO whose ``items`` clip nothing."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _LinOptItemsNoClip
    return agent


class _OfuItemsNoClip(PrivateOfuRl):
    """OFU-RL's ``items`` without the clip of x to the unit ball and of u to γ. The audit's canaries
    (noise at 2·C_w) drive the state beyond the unit ball, so the missing clip of x is seen; the clip of u
    is not (the system itself clips the controls it plays to γ)."""

    def items(self, states: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        h_ = self.horizon
        x = np.asarray(states, dtype=float)
        u = np.asarray(actions, dtype=float)
        z = np.concatenate([x[..., :h_, :], u], axis=-1)
        zt = np.swapaxes(z, -1, -2)
        return {"B1": zt @ z, "B2": zt @ x[..., 1:, :]}


@plays_runs
def ofu_items_no_clipping(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-OFU-RL whose ``items`` clip neither x nor u."""
    agent = make_agent(name, env, episodes, rng, **kw)
    agent.__class__ = _OfuItemsNoClip
    return agent


# -- (3) one statistic released un-noised -----------------------------------------------------------


def _one_unnoised(release: str):
    def factory(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
        agent = make_agent(name, env, episodes, rng, **kw)
        _counters(agent)[release].sigma = 0.0  # the declared σ (agent/privatizer sigmas) is unchanged
        return agent

    return factory


@plays_runs
def linopt_target_r_unnoised(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-LinOpt-VI/-PO releasing B_{h,r,2} (Σ ϕ·r) without noise, while it declares σ for it.

    (B_{h,p,2} or B_{h,p,1} alone is not seen at the audit's canaries: while the optimistic V_{h+1} is flat
    over the states, the canaries' different next states give the same φ_V·V, so their difference there is
    ~0; B_{h,p,1} alone: mu_lower 0.94 < claimed 1.37 at 400 runs. The reward counters see the states.)"""
    return _one_unnoised("B_{h,r,2}")(name, env, episodes, rng, **kw)


@plays_runs
def ofu_b2_unnoised(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-OFU-RL releasing B2 (Σ z x′ᵀ) without noise, while it declares σ_B2 for it."""
    return _one_unnoised("B2")(name, env, episodes, rng, **kw)


# -- (4) noise reused -------------------------------------------------------------------------------


class _ReusedNoiseCounter(BinaryCounter):
    """A binary counter that draws its noise once and adds the same draw to every later p-sum."""

    def _noise(self) -> np.ndarray:
        cached = getattr(self, "_reused", None)
        if cached is None:
            cached = self._reused = super()._noise()
        return cached


@plays_runs
def counters_noise_reused(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Noise reused across steps of the tree: every p-sum of every counter carries its counter's first draw,
    so the difference of two p-sums is exact (the white-box attack assumes fresh noise: audit it with
    ``attack="learned"``)."""
    agent = make_agent(name, env, episodes, rng, **kw)
    for counter in _counters(agent).values():
        counter.__class__ = _ReusedNoiseCounter
    return agent


# -- (5) two counters drawn from one stream ------------------------------------------------------------------


@plays_runs
def ofu_b2_seeded_as_b1(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
    """Private-OFU-RL whose B2 counter draws its noise from a generator seeded as B1's: each counter's noise is
    N(0, σ²) at its declared σ (each marginal right), but the two draw the same standard normals — B2's whitened
    noise repeats B1's, the pair's μ is unbounded. Only a reading of the noise values themselves sees it
    (:mod:`dpkit.audits.rl.reused_noise`): B1's draws are symmetric, B2's are not, so their correlation is spread
    over coordinates no projection of one counter's difference weighs."""
    import copy

    agent = make_agent(name, env, episodes, rng, **kw)
    agent._b2._rng = copy.deepcopy(agent._b1._rng)  # before any draw: the same stream
    if agent._b1._rngs is not None:  # a batch: every run's B2 stream is a copy of its B1 stream
        agent._b2._rngs = copy.deepcopy(agent._b1._rngs)
        agent._b2._rng = agent._b2._rngs[0]
    return agent
