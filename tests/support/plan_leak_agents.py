"""Billboard agents (examples/jdp_agent.py's CountingAgent) whose billboard is right but whose plans are not: each
serves later users a plan that depends on more than the billboard and their own data (the whole view:
``dpkit.audits.rl.plans``). Module level and importable by name, so that process pools can pickle them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.algorithms.episodes import Plan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
if str(EXAMPLES) not in sys.path:
    sys.path.insert(0, str(EXAMPLES))
import jdp_agent  # noqa: E402


def greedy_plan(visits: np.ndarray, rewards: np.ndarray, *, unvisited_reward: float = 0.0) -> np.ndarray:
    """The greedy policy (H, S) on the model of visit counts (H, S, A, S) and reward sums (H, S, A): the empirical
    transitions and mean rewards where a cell was visited, uniform transitions and ``unvisited_reward`` elsewhere."""
    n = visits.sum(axis=3)
    states = visits.shape[1]
    p = np.where(n[..., None] > 0, visits / np.maximum(n, 1e-9)[..., None], 1.0 / states)
    r = np.where(n > 0, np.clip(rewards / np.maximum(n, 1.0), 0.0, 1.0), unvisited_reward)
    v, policy = np.zeros(states), np.zeros(visits.shape[:2], dtype=int)
    for h in range(visits.shape[0] - 1, -1, -1):
        q = r[h] + p[h] @ v
        policy[h], v = q.argmax(axis=1), q.max(axis=1)
    return policy


class PreviousUserPlanner(jdp_agent.CountingAgent):
    """Publishes its noisy counters, but serves user k the greedy plan on user k − 1's exact trajectory (the cells
    she did not visit valued optimistically, reward 1): it copies a previous user's data into the plan."""

    def plan(self, k: int) -> Any:
        noisy = super().plan(k)
        last = getattr(self, "last", None)
        if last is None:
            return noisy
        return Plan(greedy_plan(last["visits"], last["rewards"], unvisited_reward=1.0), noisy.released)

    def update(self, k: int, states: Any, actions: Any, rewards: Any) -> Any:
        self.last = self.billboard_items(states, actions, rewards)
        return super().update(k, states, actions, rewards)


#: Publishes its noisy counters but plans greedily on the exact ones (examples/jdp_agent.py's twin).
ExactStatisticsPlanner = jdp_agent.ExactPlanner
