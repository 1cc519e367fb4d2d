"""A user's tabular environment: Gymnasium's toy text (a known model P) or a file, as a finite-horizon TabularMDP that
every tabular algorithm of dpkit runs on."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.algorithms.envs.catalog import check_environment, make_environment
from dpkit.algorithms.envs.from_gymnasium import is_external, load_environment, tabular_from_model
from dpkit.algorithms.envs.tabular import User, Users
from dpkit.algorithms.simulation import Experiment, simulate

gymnasium = pytest.importorskip("gymnasium")

LAKE = "gymnasium:FrozenLake-v1,is_slippery=false"
SLIPPERY = "gymnasium:FrozenLake-v1"


def test_frozen_lake_is_its_model() -> None:
    env = load_environment(LAKE, horizon=8)
    inner = gymnasium.make("FrozenLake-v1", is_slippery=False).unwrapped
    assert (env.states, env.actions, env.horizon, env.initial_state) == (16, 4, 8, 0)
    for s in range(16):
        for a in range(4):
            for prob, nxt, reward, _terminated in inner.P[s][a]:
                if s not in (5, 7, 11, 12, 15):  # the holes and the goal become absorbing, paying 0
                    assert env.transitions[3, s, a, nxt] == pytest.approx(prob)
                    assert env.transition_rewards[3, s, a, nxt] == reward
    for terminal in (5, 7, 11, 12, 15):
        assert np.all(env.transitions[:, terminal, :, terminal] == 1.0) and np.all(env.rewards[:, terminal] == 0.0)
    _, v = env.optimal_values()
    assert v[0, 0] == 1.0  # the goal is 6 steps away: reached within H = 8, reward 1
    # a user's reward is the transition's: 1 exactly when she reaches the goal
    user = User.canary([0.5] * 8, [0.0] * 8, initial_state=14, path=[15] * 8)
    assert env.step(0, 14, 2, user) == (15, 0.5)  # a canary's own rewards replace the model's
    drawn = Users.draw(1, 8, 0)[0]
    assert env.step(0, 14, 2, drawn) == (15, 1.0)


def test_rewards_outside_the_unit_interval_are_mapped_affinely() -> None:
    env = load_environment("gymnasium:CliffWalking-v1", horizon=20)
    assert "rewards (r + 100)/100" in env.name
    assert env.rewards.min() >= 0.0 and env.rewards.max() <= 1.0
    raw = gymnasium.make("CliffWalking-v1").unwrapped
    prob, nxt, reward, _ = raw.P[36][1][0]  # a step off the start along the cliff
    assert env.transition_rewards[0, 36, 1, nxt] == pytest.approx((reward + 100) / 100)


def test_a_model_given_as_arrays_and_a_random_start_is_refused_or_named() -> None:
    p = np.zeros((3, 2, 3))
    p[:, :, 1] = 1.0
    env = tabular_from_model({"transitions": p, "rewards": np.full((3, 2), 0.5)}, horizon=4, name="mine")
    assert env.rewards.shape == (4, 3, 2) and env.name == "mine"
    with pytest.raises(ValueError, match="random state"):
        tabular_from_model(
            {"transitions": p, "rewards": np.zeros((3, 2))}, horizon=2, initial_distribution=[0.5, 0.5, 0.0]
        )


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("gymnasium:NoSuchEnv-v0", "NoSuchEnv"),
        ("gymnasium:FrozenLake-v1,is_slippery", "key=value"),
        ("gymnasium:CartPole-v1", "exposes no model"),
        ("riverswim", "gymnasium:ID"),
    ],
)
def test_bad_environments_are_named(spec: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        load_environment(spec, horizon=4)


def test_the_catalog_names_dpkit_and_user_environments() -> None:
    assert is_external(LAKE) and is_external("my_env.py:make") and not is_external("riverswim")
    assert check_environment(LAKE) == LAKE
    with pytest.raises(ValueError, match="gymnasium:ID"):
        check_environment("lake")
    assert make_environment(LAKE, 2, 0).horizon == 32  # H = 2S by default
    assert make_environment("riverswim", 3, 0).states == 3


def test_a_file_environment(tmp_path) -> None:  # noqa: ANN001
    (tmp_path / "walls.py").write_text(
        "import numpy as np\n"
        "def make():\n"
        "    p = np.zeros((2, 2, 2)); p[:, 0, 0] = 1; p[:, 1, 1] = 1\n"
        "    return {'transitions': p, 'rewards': np.array([[0.0, 1.0], [0.0, 1.0]])}\n",
        encoding="utf-8",
    )
    env = load_environment(f"{tmp_path / 'walls.py'}:make", horizon=3)
    assert env.states == 2 and env.optimal_values()[1][0, 0] == 3.0  # action 1 pays 1 at each of the 3 steps


@pytest.mark.parametrize("spec", [LAKE, SLIPPERY])
@pytest.mark.parametrize("algorithm", ["ldp-ucrl-vtr", "rlsvi", "ucrl-vtr"])
@pytest.mark.slow
def test_tabular_algorithms_run_on_frozen_lake(algorithm: str, spec: str) -> None:
    private = {"epsilon": 8.0, "delta": 1e-5, "sigma": "tight"} if algorithm == "ldp-ucrl-vtr" else {}
    experiment = Experiment(algorithm, spec, 30, horizon=8, **private)
    assert (experiment.states, experiment.actions) == (16, 4)
    run = simulate(experiment, 0)
    assert run.regret.shape == (30,) and np.all(run.regret >= -1e-9) and np.all(run.regret <= 1.0 + 1e-9)
    with pytest.raises(ValueError, match="states = 16"):
        Experiment(algorithm, spec, 30, horizon=8, states=3, **private)
