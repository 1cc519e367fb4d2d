"""Record reference rows and plans of ldp-ucrl-vtr as it was at commit 4713430 (before its run axis).

Run from the repository root with the output path, ``tests/algorithms/data/ldp_ucrl_vtr_4713430.npz``.
tests/algorithms/test_batched_runs_ldp.py checks that the scalar agent and the audit's observer still give these.
"""

from __future__ import annotations

import dataclasses
import functools
import sys

import numpy as np

from dpkit.algorithms.envs.catalog import make_environment
from dpkit.algorithms.envs.tabular import Users
from dpkit.algorithms.episodes import play_episode
from dpkit.algorithms.ldp_ucrl_vtr import make_agent
from dpkit.audits.rl.observers import ObservedRun, observe_messages
from dpkit.audits.rl.setting import (
    declared_sensitivities,
    default_setting,
    make_setting_agent,
    positions,
    setting_claim_sigmas,
    setting_world,
)

#: the scalar agent's configurations, on RiverSwim S = 3, H = 4 at ε = 1000 (small σ: plans that vary)
AGENTS = {
    "default": {"sigma": "tight"},
    "optimal": {"sigma": "optimal"},
    "paperbonus": {"bonus": "paper", "sigma": "tight"},
    "support": {"features": "support", "sigma": "tight"},
    "zero": {"sigma": 0.0},
    "tiny": {"sigma": 1e-3},
    "paper": {},
}
EPISODES = 10


def main(path: str) -> None:
    out: dict[str, np.ndarray] = {}
    base = default_setting("ldp-ucrl-vtr")
    for pos in positions(base):
        s = dataclasses.replace(base, position=pos)
        for which in (0, 1):
            run = ObservedRun(
                setting=s,
                which=which,
                world=setting_world(s),
                index=s.index,
                white_box=s.white_box,
                claim_sigmas=setting_claim_sigmas(s),
                sensitivities=declared_sensitivities(s),
                make_agent=functools.partial(make_setting_agent, s),
            )
            out[f"row_{pos}_{which}"] = observe_messages(run, np.random.default_rng(10 * len(out) + 1))
    env = make_environment("riverswim", 3, 0, horizon=4)
    users = Users.draw(EPISODES, env.horizon, np.random.default_rng(5))
    for name, kw in AGENTS.items():
        agent = make_agent("ldp-ucrl-vtr", env, EPISODES, 7, epsilon=1000.0, delta=0.1, **kw)
        plans, grams, targets = [], [], []
        for k in range(EPISODES):
            p = np.asarray(agent.plan(k).policy)
            messages = agent.update(k, *play_episode(env, p, users[k]))
            plans.append(p)
            grams.append(messages["ΔΛ_h"])
            targets.append(messages["Δu_h"])
        out[f"agent_{name}_plans"] = np.stack(plans)
        out[f"agent_{name}_message"] = np.concatenate([grams[1][:, 0], targets[1]], axis=1)
        out[f"agent_{name}_gram"] = agent.gram()[:, *np.triu_indices(agent.dim)]
        out[f"agent_{name}_target"] = agent.target()
    np.savez_compressed(path, **out)


if __name__ == "__main__":
    main(sys.argv[1])
