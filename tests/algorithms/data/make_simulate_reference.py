"""Record simulate_reference.npz: what the scalar ``simulate(experiment, seed)`` gave before the regret runs got a
run axis (simulate_seeds), for every registered seed algorithm at 40 episodes and seeds 0 and 1 (regret, returns,
states, actions and the recorded releases). Run from the repository root:
``python tests/algorithms/data/make_simulate_reference.py``."""

from __future__ import annotations

import pathlib

import numpy as np

from dpkit.algorithms.simulation import Experiment, simulate

OUT = pathlib.Path(__file__).with_name("simulate_reference.npz")
EPISODES = 40
SEEDS = (0, 1)


def experiments() -> dict[str, Experiment]:
    """One small experiment per seed algorithm (the report's environments)."""
    private = {"epsilon": 1.0, "delta": 0.1}
    return {
        "ucrl-vtr": Experiment("ucrl-vtr", "riverswim", EPISODES, states=2),
        "ldp-ucrl-vtr": Experiment("ldp-ucrl-vtr", "riverswim", EPISODES, states=2, **private),
        "linopt-vi": Experiment("linopt-vi", "riverswim", EPISODES, states=2),
        "linopt-po": Experiment("linopt-po", "tabular", EPISODES, states=3),
        "private-linopt-vi": Experiment("private-linopt-vi", "riverswim", EPISODES, states=2, **private),
        "private-linopt-po": Experiment("private-linopt-po", "riverswim", EPISODES, states=2, **private),
        "ofu-rl": Experiment("ofu-rl", "lq", EPISODES),
        "private-ofu-rl": Experiment("private-ofu-rl", "lq", EPISODES, **private),
        "rlsvi": Experiment("rlsvi", "riverswim", EPISODES, states=3, delta=1e-5),
    }


def main() -> None:
    arrays: dict[str, np.ndarray] = {}
    for key, e in experiments().items():
        for seed in SEEDS:
            run = simulate(e, seed, record=True)
            prefix = f"{key}/{seed}/"
            for name in ("regret", "returns", "states", "actions", "rewards"):
                arrays[prefix + name] = np.asarray(getattr(run, name))
            for name, value in run.releases.items():
                arrays[prefix + "release/" + name] = np.asarray(value)
    np.savez_compressed(OUT, **arrays)


if __name__ == "__main__":
    main()
