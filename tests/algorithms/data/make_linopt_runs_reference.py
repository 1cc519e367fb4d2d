"""Record linopt_runs_reference.npz: rows of the LinOpt audit's observer and plans of the scalar agents, as the agent
was before it got a run axis (commit 4713430). Run from the repository root:
``python tests/algorithms/data/make_linopt_runs_reference.py``."""

from __future__ import annotations

import dataclasses
import functools
import pathlib

import numpy as np

from dpkit.algorithms.envs.tabular import User, random_tabular
from dpkit.algorithms.episodes import play_episode
from dpkit.algorithms.linopt import make_agent
from dpkit.audits.rl.linopt import observe
from dpkit.audits.rl.observers import ObservedRun
from dpkit.audits.rl.setting import (
    declared_sensitivities,
    default_setting,
    make_setting_agent,
    setting_claim_sigmas,
    setting_world,
)

OUT = pathlib.Path(__file__).with_name("linopt_runs_reference.npz")

#: (key, algorithm, observer, options, sigma): the audit settings whose rows are recorded.
SETTINGS = (
    ("vi-billboard", "private-linopt-vi", "billboard", None, None),
    ("po-billboard", "private-linopt-po", "billboard", None, None),
    ("vi-actions", "private-linopt-vi", "actions", {"preset": "tuned"}, None),
    ("po-actions", "private-linopt-po", "actions", {"preset": "tuned"}, None),
    ("vi-billboard-tuned-s1", "private-linopt-vi", "billboard", {"preset": "tuned"}, 1.0),
)
POSITIONS = ("first", "middle", "last")
SEEDS = (0, 1)
_PRIVATE = {"epsilon": 4.0, "delta": 1e-5}
#: (key, kwargs of make_agent): the scalar agents whose plans are recorded (the name is the key without its suffix).
AGENTS = (
    ("linopt-vi", {}),
    ("linopt-po", {}),
    ("linopt-po-tuned", {"preset": "tuned"}),
    ("private-linopt-vi", _PRIVATE),
    ("private-linopt-po", {**_PRIVATE, "preset": "tuned", "eta": 1.0}),
    ("private-linopt-vi-s", {**_PRIVATE, "sigma": 0.5, "regularization": 1.0}),
)
AGENT_SEEDS = (3,)


def observed_run(setting, which: int) -> ObservedRun:
    """The run ``dpkit.audits.rl.setting._release`` hands the observer."""
    return ObservedRun(
        setting=setting,
        which=which,
        world=setting_world(setting),
        index=setting.index,
        white_box=setting.white_box,
        claim_sigmas=setting_claim_sigmas(setting),
        sensitivities=declared_sensitivities(setting),
        make_agent=functools.partial(make_setting_agent, setting),
    )


def _sum(x: np.ndarray) -> float:
    return float(np.sum(x))


def _squares(x: np.ndarray) -> float:
    return float(np.sum(x * x))


def agent_plans(name: str, seed: int, **kwargs) -> dict[str, np.ndarray]:
    """Plans, Q and released prefixes of a scalar agent on a random MDP over 6 episodes."""
    env = random_tabular(3, 2, 3, seed)
    rng = np.random.default_rng(seed)
    agent = make_agent(name, env, 6, np.random.default_rng(seed + 100), **kwargs)
    policies, qs, released = [], [], []
    for k in range(6):
        plan = agent.plan(k)
        policy = np.asarray(plan.policy)
        policies.append(np.asarray(policy, dtype=float))
        qs.append(agent.last_q)
        # each noisy prefix summarised by its sum and sum of squares (the file stays small)
        released.append([float(f(np.asarray(v))) for v in plan.released.values() for f in (_sum, _squares)])
        draws = rng.random(env.horizon) if policy.ndim == 3 else None
        traj = play_episode(env, policy, User(rng.random(3), rng.random(3)), draws)
        agent.update(k, *traj)
    return {"policy": np.stack(policies), "q": np.stack(qs), "released": np.asarray(released, dtype=float)}


def main() -> None:
    out: dict[str, np.ndarray] = {}
    for key, algorithm, observer, options, sigma in SETTINGS:
        base = default_setting(algorithm, observer=observer, options=options, sigma=sigma)
        for position in POSITIONS:
            setting = dataclasses.replace(base, position=position)
            for which in (0, 1):
                run = observed_run(setting, which)
                rows = [observe(run, np.random.default_rng(seed)) for seed in SEEDS]
                out[f"row/{key}/{position}/{which}"] = np.stack(rows)
    for key, kwargs in AGENTS:
        name = key.removesuffix("-tuned").removesuffix("-s")
        for seed in AGENT_SEEDS:
            for field, value in agent_plans(name, seed, **kwargs).items():
                out[f"agent/{key}/{seed}/{field}"] = value
    np.savez_compressed(OUT, **out)
    print(f"{OUT}: {len(out)} arrays, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
