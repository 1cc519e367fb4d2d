"""Regret runs in batches: ``simulate_seeds(e, seeds)`` is, seed by seed, ``simulate(e, seed)`` for every algorithm of
the default report (and every seed algorithm); the scalar ``simulate`` gives what it gave before the run axis
(simulate_reference.npz, recorded by make_simulate_reference.py); UCRL-VTR's baseline and a plugin's agent simulate
one seed at a time; the batched episode loops check their runs."""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import toy_algorithm

from dpkit.algorithms import registry
from dpkit.algorithms.envs.tabular import User, Users, random_tabular, riverswim
from dpkit.algorithms.episodes import Run, play_episode, play_episodes, run_tabular_runs
from dpkit.algorithms.simulation import Experiment, batched_factory, simulate, simulate_seeds
from dpkit.reports.config import load_config
from dpkit.reports.job import regret_sigmas

DATA = pathlib.Path(__file__).with_name("data")
FIELDS = ("regret", "returns", "states", "actions", "rewards", "cumulative_regret")


def _reference_module() -> Any:
    spec = importlib.util.spec_from_file_location("make_simulate_reference", DATA / "make_simulate_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _same_run(batched: Run, alone: Run) -> None:
    assert batched.algorithm == alone.algorithm and batched.env == alone.env
    assert dict(batched.sigmas) == dict(alone.sigmas)
    for name in FIELDS:
        x, y = np.asarray(getattr(batched, name)), np.asarray(getattr(alone, name))
        assert x.shape == y.shape and x.dtype == y.dtype, name
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-12, err_msg=name)
    assert sorted(batched.releases) == sorted(alone.releases)
    for name, value in alone.releases.items():
        np.testing.assert_allclose(batched.releases[name], value, rtol=1e-9, atol=1e-12, err_msg=name)


def _report_experiments() -> list[tuple[str, Experiment]]:
    """Every experiment of the default report (each algorithm at each of its σ), at 30 episodes."""
    config = load_config(None)
    out = []
    for a in config.algorithms:
        for sigma in regret_sigmas(a, config.seed):
            e = a.experiment(sigma, config.seed)
            out.append((f"{a.name}-{sigma}", dataclasses.replace(e, episodes=30)))
    return out


REPORT = _report_experiments()


@pytest.mark.parametrize(("key", "experiment"), REPORT, ids=[k for k, _ in REPORT])
def test_the_report_s_seeds_in_one_batch_are_its_seeds_one_by_one(key: str, experiment: Experiment) -> None:
    seeds = [0, 1, 4]
    batched = simulate_seeds(experiment, seeds, record=True)
    assert len(batched) == len(seeds)
    for seed, run in zip(seeds, batched):
        _same_run(run, simulate(experiment, seed, record=True))


def test_the_report_batches_every_algorithm() -> None:
    assert {e.algorithm for _, e in REPORT} <= {n for n in registry.names() if batched_factory(n)}


SEED_ALGORITHMS = list(_reference_module().experiments().items())


@pytest.mark.parametrize(("key", "experiment"), SEED_ALGORITHMS, ids=[k for k, _ in SEED_ALGORITHMS])
def test_every_seed_algorithm_in_a_batch_is_its_seeds_one_by_one(key: str, experiment: Experiment) -> None:
    e = dataclasses.replace(experiment, episodes=25)
    seeds = [3, 0]
    for seed, run in zip(seeds, simulate_seeds(e, seeds, record=True)):
        _same_run(run, simulate(e, seed, record=True))


@pytest.mark.parametrize(("key", "experiment"), SEED_ALGORITHMS, ids=[k for k, _ in SEED_ALGORITHMS])
def test_simulate_gives_what_it_gave_before_the_run_axis(key: str, experiment: Experiment) -> None:
    module = _reference_module()
    reference = np.load(DATA / "simulate_reference.npz")
    for seed in module.SEEDS:
        run = simulate(experiment, seed, record=True)
        prefix = f"{key}/{seed}/"
        for name in ("regret", "returns", "states", "actions", "rewards"):
            np.testing.assert_allclose(getattr(run, name), reference[prefix + name], rtol=1e-9, atol=1e-12)
        recorded = sorted(k[len(prefix + "release/") :] for k in reference.files if k.startswith(prefix + "release/"))
        assert sorted(run.releases) == recorded
        for name in recorded:
            np.testing.assert_allclose(run.releases[name], reference[prefix + "release/" + name], rtol=1e-9, atol=1e-12)
        assert simulate_seeds(experiment, [seed])[0].regret.tolist() == run.regret.tolist()  # one code path


def test_which_agents_take_runs() -> None:
    batched = {n for n in registry.names() if batched_factory(n)}
    assert batched == set(registry.names()) - {"ucrl-vtr"}
    with pytest.raises(ValueError):  # the baseline's factory itself refuses a sequence of Generators
        registry.get("ucrl-vtr").make_agent()("ucrl-vtr", riverswim(2), 5, [np.random.default_rng(0)] * 2)


@pytest.fixture
def counted_toy() -> Iterator[list[Any]]:
    """The toy plugin algorithm, registered with a factory that records the rng of every agent it builds."""
    built: list[Any] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(args[3])
        return toy_algorithm.make_agent(*args, **kwargs)

    registry.register(dataclasses.replace(toy_algorithm.SPEC, entry_point=counting))
    yield built
    registry.unregister(toy_algorithm.NAME)


def test_a_plugin_simulates_seed_by_seed(counted_toy: list[Any]) -> None:
    e = Experiment(algorithm=toy_algorithm.NAME, env="riverswim", states=2, episodes=20, epsilon=1.0, delta=1e-5)
    assert not batched_factory(toy_algorithm.NAME)
    seeds = [2, 0, 5]
    progress: list[int] = []
    runs = simulate_seeds(e, seeds, record=True, progress=progress.append)
    assert len(counted_toy) == 3 and all(isinstance(g, np.random.Generator) for g in counted_toy)  # one per seed
    assert sum(progress) == 3 * 20
    for seed, run in zip(seeds, runs):
        _same_run(run, simulate(e, seed, record=True))


def test_progress_counts_every_run_s_episodes() -> None:
    e = Experiment("rlsvi", "riverswim", 12, states=2, delta=1e-5)
    progress: list[int] = []
    simulate_seeds(e, [0, 1, 2], progress=progress.append)
    assert progress == [3] * 12


def test_simulate_seeds_checks_its_seeds() -> None:
    e = Experiment("rlsvi", "riverswim", 5, states=2, delta=1e-5)
    for bad in ([], 3, "01", [-1]):
        with pytest.raises(ValueError):
            simulate_seeds(e, bad)  # type: ignore[arg-type]


def test_play_episodes_of_one_user_per_run_is_each_user_alone() -> None:
    env = random_tabular(3, 2, 4, 1)
    rng = np.random.default_rng(0)
    users = [
        User(rng.random(4), rng.random(4)),
        User.canary([0.0, 1.0, 0.5, 1.0], rng.random(4), initial_state=2),
        User(rng.random(4), rng.random(4), np.array([np.nan, 1.0, np.nan, 0.0])),
        User.canary([1.0] * 4, rng.random(4), path=[1, 0, 2, 2]),
    ]
    stacked = Users.stack(users)
    for policies, draws in (
        (rng.integers(0, 2, (4, 4, 3)), None),
        (rng.dirichlet([1.0, 1.0], (4, 4, 3)), rng.random((4, 4))),
    ):
        states, actions, rewards = play_episodes(env, policies, stacked, draws)
        for i, user in enumerate(users):
            s, a, r = play_episode(env, policies[i], user, None if draws is None else draws[i])
            assert np.array_equal(states[i], s) and np.array_equal(actions[i], a) and np.array_equal(rewards[i], r)
    bernoulli = riverswim(2)
    with pytest.raises(ValueError, match="one user per run"):
        play_episodes(bernoulli, np.zeros((3, 4, 2), dtype=int), Users.stack(users[:2]))


def test_run_tabular_runs_checks_its_runs() -> None:
    env = riverswim(2)
    users = Users.draw(3, env.horizon, 0)
    agent = registry.get("rlsvi").make_agent()("rlsvi", env, 3, [np.random.default_rng(0)] * 2, delta=1e-5)
    with pytest.raises(ValueError, match="a batch of 2 runs, got 3"):
        run_tabular_runs(agent, env, [users] * 3, [0, 1, 2])
    with pytest.raises(ValueError, match="one rng per run"):
        run_tabular_runs(agent, env, [users] * 2, [0])
    one = registry.get("rlsvi").make_agent()("rlsvi", env, 3, 0, delta=1e-5)
    with pytest.raises(ValueError, match="an agent of one run"):
        run_tabular_runs(one, env, [users] * 2, [0, 1])
