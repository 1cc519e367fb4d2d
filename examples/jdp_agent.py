"""A jointly private tabular agent, written as a user writes one: noisy visit and reward counters through binary
trees, greedy planning on the noisy model (``dpkit audit --agent examples/jdp_agent.py:CountingAgent``).

It follows dpkit's billboard protocol: ``plan(k)`` publishes the counters' noisy prefixes over users 0 … k − 1,
``billboard_items`` gives one user's items before their noise, ``update`` adds them; ``declaration`` and ``sigmas``
say what it releases. Its twins below each carry one bug an audit must catch.
"""

import math

import numpy as np

from dpkit.accountant import calibrate_sigma
from dpkit.accountant.declarations import DeclaredRelease, PrivacyDeclaration
from dpkit.accountant.tree import BinaryCounter, max_psums_per_item
from dpkit.algorithms.episodes import Plan, resolve_sigmas


class CountingAgent:
    """Counts each (h, s, a, s′) visit and each (h, s, a) reward (clipped to [0, 1]) in two binary-tree counters."""

    name = "counting-agent"
    shares_noise = False  # the twins switch these
    unnoised: tuple[str, ...] = ()

    def __init__(self, name, env, episodes, rng, *, epsilon, delta, sigma="paper"):
        self.env, h, s, a = env, env.horizon, env.states, env.actions
        m = self.psums_per_user(episodes)
        delta_one = math.sqrt(2 * h)  # replace-one: two users' one-hot items on disjoint cells (rewards alike)
        paper = self.paper_sigma(epsilon, delta, delta_one, m)
        releases = tuple(
            DeclaredRelease(n, f"{n} counts", m, math.sqrt(h), delta_one, delta_one, paper)
            for n in ("visits", "rewards")
        )
        self.declaration = PrivacyDeclaration(
            name, "JDP", "a user's agent", "replace_one", epsilon, delta, releases, {"episodes": episodes}
        )
        self.sigmas = resolve_sigmas(self.declaration, sigma)
        seeds = np.random.default_rng(rng).integers(0, 2**63, 2)
        if self.shares_noise:
            seeds[1] = seeds[0]  # one noise draw for both counters
        shapes = {"visits": (h, s, a, s), "rewards": (h, s, a)}
        self.counters = {
            n: self.make_counter(shapes[n], 0.0 if n in self.unnoised else self.sigmas[n], int(seed), episodes)
            for n, seed in zip(shapes, seeds)
        }

    def psums_per_user(self, episodes):
        return max_psums_per_item(episodes, schedule="before-episode")  # the tree's p-sums that hold one user

    def make_counter(self, shape, sigma, seed, episodes):
        return BinaryCounter(shape, sigma, seed, steps=episodes)

    def paper_sigma(self, epsilon, delta, delta_one, m):
        return calibrate_sigma(epsilon, delta, sensitivity=delta_one, compositions=2 * m).sigma

    def plan(self, k):
        released = {n: c.prefix() for n, c in self.counters.items()}
        return Plan(self.greedy(released["visits"], released["rewards"]), released)

    def greedy(self, visits, rewards):
        """The greedy policy (H, S) on the model of these visit counts and reward sums."""
        visits = np.maximum(visits, 0.0)
        n = visits.sum(axis=3)
        p = np.where(n[..., None] > 0, visits / np.maximum(n, 1e-9)[..., None], 1.0 / self.env.states)
        r = np.clip(rewards / np.maximum(n, 1.0), 0.0, 1.0)
        v, policy = np.zeros(self.env.states), np.zeros((self.env.horizon, self.env.states), dtype=int)
        for h in range(self.env.horizon - 1, -1, -1):
            q = r[h] + p[h] @ v
            policy[h], v = q.argmax(axis=1), q.max(axis=1)
        return policy

    def billboard_items(self, states, actions, rewards):
        h = np.arange(self.env.horizon)
        visits, gains = np.zeros(self.counters["visits"].shape), np.zeros(self.counters["rewards"].shape)
        visits[h, states[:-1], actions, states[1:]] = 1.0
        gains[h, states[:-1], actions] = np.clip(rewards, 0.0, 1.0)
        return {"visits": visits, "rewards": gains}

    def update(self, k, states, actions, rewards):
        for n, item in self.billboard_items(states, actions, rewards).items():
            self.counters[n].add(item)
        return {}


class Unnoised(CountingAgent):
    """Twin: the reward counter publishes its sums without noise (its declared σ unchanged)."""

    unnoised = ("rewards",)


class WrongFormula(CountingAgent):
    """Twin: σ from a wrong formula — the add/remove sensitivity sqrt(H) where users are replaced (σ/√2)."""

    def paper_sigma(self, epsilon, delta, delta_one, m):
        return super().paper_sigma(epsilon, delta, delta_one / math.sqrt(2), m)


class OneLevelShort(CountingAgent):
    """Twin: the tree accounted one level short: m − 1 p-sums per user where the schedule makes m."""

    def paper_sigma(self, epsilon, delta, delta_one, m):
        return calibrate_sigma(epsilon, delta, sensitivity=delta_one, compositions=2 * max(m - 1, 1)).sigma


class SharedNoise(CountingAgent):
    """Twin: the two counters draw their noise from one stream (the same draw in both)."""

    shares_noise = True


class ExactPlanner(CountingAgent):
    """Twin: publishes its noisy counters but plans on exact ones (its billboard is right, its plans are not)."""

    def plan(self, k):
        exact = getattr(self, "exact", {n: np.zeros(c.shape) for n, c in self.counters.items()})
        return Plan(self.greedy(exact["visits"], exact["rewards"]), super().plan(k).released)

    def update(self, k, states, actions, rewards):
        self.exact = getattr(self, "exact", {n: np.zeros(c.shape) for n, c in self.counters.items()})
        for n, item in self.billboard_items(states, actions, rewards).items():
            self.exact[n] = self.exact[n] + item
        return super().update(k, states, actions, rewards)
