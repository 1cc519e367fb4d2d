"""A jointly private agent whose counters noise every prefix afresh (the simple counter mechanism), written as a user
writes one: ``dpkit audit --agent examples/jdp_prefix_agent.py:FreshPrefixAgent``.

It is examples/jdp_agent.py's CountingAgent with another counter: before episode k it publishes each counter's exact
sum over users 0 … k − 1 plus fresh N(0, σ²) noise, so the first user is in all K − 1 released prefixes — the count
it declares, which tells dpkit how its prefixes are built (``dpkit.audits.rl.billboard.counter_structure``). Its twin
``HalfNoise`` adds half the noise it declares.
"""

import numpy as np
from jdp_agent import CountingAgent


class FreshPrefixCounter:
    """Each prefix: the exact sum of the items so far plus fresh Gaussian noise; ``prefix`` draws once per item
    count (asked again before the next item, it returns the same release)."""

    def __init__(self, shape, sigma, seed):
        self.shape, self.sigma, self.rng = shape, sigma, np.random.default_rng(seed)
        self.total, self.released = np.zeros(shape), None

    def prefix(self):
        if self.released is None:
            self.released = self.total + self.sigma * self.rng.standard_normal(self.shape)
        return self.released.copy()

    def add(self, item):
        self.total, self.released = self.total + item, None


class FreshPrefixAgent(CountingAgent):
    """Visit and reward counters, every released prefix noised afresh; greedy planning on the noisy model."""

    noise_scale = 1.0  # the twin halves it

    def psums_per_user(self, episodes):
        return max(episodes - 1, 1)  # the released prefixes that hold the first user (P_1 … P_{K-1})

    def make_counter(self, shape, sigma, seed, episodes):
        return FreshPrefixCounter(shape, self.noise_scale * sigma, seed)


class HalfNoise(FreshPrefixAgent):
    """Twin: adds half the noise it declares."""

    noise_scale = 0.5
