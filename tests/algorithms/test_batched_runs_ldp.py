"""LDP-UCRL-VTR in batches of runs: the agent of R Generators is R agents of one, and the audit's batched observer
gives each run's row exactly as the per-run observer does.

The reference (tests/algorithms/data/ldp_ucrl_vtr_4713430.npz, recorded by make_ldp_reference.py beside it) holds
what the scalar agent and the messages observer gave at commit 4713430, before the agent had a run axis.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.algorithms.envs.catalog import make_environment
from dpkit.algorithms.envs.tabular import Users
from dpkit.algorithms.episodes import play_episode, play_episodes
from dpkit.algorithms.ldp_ucrl_vtr import GRAM, TARGET, LdpUcrlVtr, make_agent
from dpkit.audits.rl import audit_setting
from dpkit.audits.rl.ldp_ucrl_vtr import batched, observe, observe_batch
from dpkit.audits.rl.observers import ObservedRun, observe_messages
from dpkit.audits.rl.setting import (
    audit_hook,
    declared_sensitivities,
    default_setting,
    make_setting_agent,
    positions,
    setting_claim_sigmas,
    setting_world,
)

DATA = Path(__file__).parent / "data"
REFERENCE = DATA / "ldp_ucrl_vtr_4713430.npz"
TOLERANCE = {"rtol": 1e-9, "atol": 1e-12}


def _load_reference_script() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_ldp_reference", DATA / "make_ldp_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(setting: Any, which: int) -> ObservedRun:
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


def _generators(seed: int, runs: int) -> list[np.random.Generator]:
    return list(np.random.default_rng(seed).spawn(runs))


BASE = default_setting("ldp-ucrl-vtr")
POSITIONS = tuple(positions(BASE))


def test_the_registered_spec_hands_its_runs_to_the_batch() -> None:
    assert audit_hook(BASE, "observe_batch") is observe_batch
    assert audit_hook(BASE, "observe") is observe
    assert POSITIONS == ("first", "middle", "last")


# -- (a) each row of a batch is the run alone ----------------------------------------------------------------------


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("sigma", ["tight", "optimal", 0.0])
def test_a_batch_gives_every_run_its_own_row(position: str, which: int, sigma: Any) -> None:
    setting = dataclasses.replace(BASE, position=position, sigma=sigma)
    run = _run(setting, which)
    assert batched(run)
    rows = observe_batch(run, _generators(11 * which + 3, 5))
    one_by_one = np.stack([observe(run, g) for g in _generators(11 * which + 3, 5)])
    per_run_code = np.stack([observe_messages(run, g) for g in _generators(11 * which + 3, 5)])
    assert rows.shape == one_by_one.shape == per_run_code.shape
    np.testing.assert_allclose(rows, one_by_one, **TOLERANCE)
    np.testing.assert_allclose(rows, per_run_code, **TOLERANCE)


def test_a_batch_of_one_is_the_run_alone() -> None:
    run = _run(dataclasses.replace(BASE, position="last"), 1)
    g = np.random.default_rng(4)
    np.testing.assert_allclose(observe_batch(run, [np.random.default_rng(4)])[0], observe_messages(run, g), **TOLERANCE)


def _diagonal_unnoised_unmarked(*args: Any, **kwargs: Any) -> Any:
    """The mutant without its :func:`~dpkit.algorithms.batches.plays_runs` mark: an implementation under test."""
    from rl_mutants import ldp_diagonal_unnoised

    return ldp_diagonal_unnoised(*args, **kwargs)


def test_an_implementation_under_test_runs_one_by_one() -> None:
    """A mutant (a subclass of the scalar agent) not marked as playing a run axis is not batched: observe_batch
    stacks its per-run rows; marked, it is."""
    from rl_mutants import ldp_diagonal_unnoised

    setting = dataclasses.replace(BASE, position="middle", implementation=_diagonal_unnoised_unmarked)
    assert batched(_run(dataclasses.replace(setting, implementation=ldp_diagonal_unnoised), 1))
    run = _run(setting, 1)
    assert not batched(run)
    rows = observe_batch(run, _generators(5, 3))
    np.testing.assert_array_equal(rows, np.stack([observe_messages(run, g) for g in _generators(5, 3)]))
    np.testing.assert_array_equal(
        observe(run, np.random.default_rng(2)), observe_messages(run, np.random.default_rng(2))
    )


# -- (b) the scalar agent and observer give what they gave before the run axis -------------------------------------


def test_the_observer_gives_the_rows_it_gave_before() -> None:
    reference = np.load(REFERENCE)
    n = 0
    for position in POSITIONS:
        for which in (0, 1):
            run = _run(dataclasses.replace(BASE, position=position), which)
            want = reference[f"row_{position}_{which}"]
            rng_seed = 10 * n + 1  # the seeds make_ldp_reference.py used, in its order
            n += 1
            np.testing.assert_allclose(observe(run, np.random.default_rng(rng_seed)), want, **TOLERANCE)
            np.testing.assert_allclose(
                observe_batch(run, [np.random.default_rng(7), np.random.default_rng(rng_seed)])[1], want, **TOLERANCE
            )


@pytest.mark.parametrize("name", list(_load_reference_script().AGENTS))
def test_the_scalar_agent_gives_what_it_gave_before(name: str, tmp_path: Path) -> None:
    """Plans, a message, Λ and u of the scalar agent over 10 RiverSwim episodes, for every configuration recorded."""
    script = _load_reference_script()
    reference = np.load(REFERENCE)
    env = make_environment("riverswim", 3, 0, horizon=4)
    users = Users.draw(script.EPISODES, env.horizon, np.random.default_rng(5))
    agent = make_agent("ldp-ucrl-vtr", env, script.EPISODES, 7, epsilon=1000.0, delta=0.1, **script.AGENTS[name])
    assert agent.runs is None
    plans = []
    for k in range(script.EPISODES):
        policy = np.asarray(agent.plan(k).policy)
        assert policy.shape == (env.horizon, env.states)
        messages = agent.update(k, *play_episode(env, policy, users[k]))
        assert messages[GRAM].shape == (env.horizon, agent.dim, agent.dim)
        plans.append(policy)
        if k == 1:
            message = np.concatenate([messages[GRAM][:, 0], messages[TARGET]], axis=1)
            np.testing.assert_allclose(message, reference[f"agent_{name}_message"], **TOLERANCE)
    np.testing.assert_array_equal(np.stack(plans), reference[f"agent_{name}_plans"])
    np.testing.assert_allclose(
        agent.gram()[:, *np.triu_indices(agent.dim)], reference[f"agent_{name}_gram"], **TOLERANCE
    )
    np.testing.assert_allclose(agent.target(), reference[f"agent_{name}_target"], **TOLERANCE)


# -- the agent of R Generators is R agents of one -------------------------------------------------------------------

CONFIGS = {
    "tight": {"sigma": "tight"},
    "optimal": {"sigma": "optimal"},
    "paper-bonus": {"bonus": "paper", "sigma": "tight"},
    "support": {"features": "support", "sigma": 1e-3},
    "no-noise": {"sigma": 0.0},
    "small": {"sigma": 1e-3},
}


@settings(max_examples=12, deadline=None)
@given(
    config=st.sampled_from(sorted(CONFIGS)),
    runs=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    states=st.sampled_from([2, 3]),
)
def test_every_run_of_a_batch_is_the_agent_of_its_generator(config: str, runs: int, seed: int, states: int) -> None:
    env = make_environment("riverswim", states, 0, horizon=2 * states)
    episodes = 6
    users = Users.draw(episodes, env.horizon, np.random.default_rng(seed))
    options = CONFIGS[config]
    batch = make_agent("ldp-ucrl-vtr", env, episodes, _generators(seed, runs), epsilon=1000.0, delta=0.1, **options)
    alone = [
        make_agent("ldp-ucrl-vtr", env, episodes, g, epsilon=1000.0, delta=0.1, **options)
        for g in _generators(seed, runs)
    ]
    assert batch.runs == runs and all(a.runs is None for a in alone)
    for k in range(episodes):
        policies = np.asarray(batch.plan(k).policy)
        assert policies.shape == (runs, env.horizon, env.states)
        singles = [np.asarray(a.plan(k).policy) for a in alone]
        np.testing.assert_array_equal(policies, np.stack(singles))
        states_, actions, rewards = play_episodes(env, policies, users[k])
        inputs = batch.regression_inputs(states_, actions)
        statistics = batch.message_statistics(states_, actions, rewards)
        messages = batch.update(k, states_, actions, rewards)
        for i, a in enumerate(alone):
            one_inputs = a.regression_inputs(states_[i], actions[i])
            for x, y in zip(inputs, one_inputs):
                np.testing.assert_array_equal(x[i], y)
            one_statistics = a.message_statistics(states_[i], actions[i], rewards[i])
            one = a.update(k, states_[i], actions[i], rewards[i])
            for name in (GRAM, TARGET):
                np.testing.assert_array_equal(statistics[name][i], one_statistics[name])
                np.testing.assert_allclose(messages[name][i], one[name], **TOLERANCE)
    for i, a in enumerate(alone):
        np.testing.assert_allclose(batch.gram()[i], a.gram(), **TOLERANCE)
        np.testing.assert_allclose(batch.target()[i], a.target(), **TOLERANCE)


def test_a_batch_checks_its_inputs() -> None:
    env = make_environment("riverswim", 2, 0, horizon=4)
    with pytest.raises(ValueError, match="at least one Generator"):
        LdpUcrlVtr(env, 3, [], epsilon=1.0, delta=0.1)
    with pytest.raises(ValueError, match=r"rng\[1\]"):
        LdpUcrlVtr(env, 3, [np.random.default_rng(0), -1], epsilon=1.0, delta=0.1)
    batch = LdpUcrlVtr(env, 3, _generators(0, 2), epsilon=1.0, delta=0.1)
    batch.plan(0)
    with pytest.raises(ValueError, match=r"states must have shape \(2, 5\) and actions \(2, 4\)"):
        batch.regression_inputs(np.zeros(5, int), np.zeros(4, int))
    with pytest.raises(ValueError, match=r"shapes \(2, 4\), \(2, 4, 2\) and \(2, 4\)"):
        batch.statistics(np.zeros(4, int), np.zeros((4, 2)), np.zeros(4))
    scalar = LdpUcrlVtr(env, 3, 0, epsilon=1.0, delta=0.1)
    scalar.plan(0)
    with pytest.raises(ValueError, match=r"states must have shape \(5,\) and actions \(4,\)"):
        scalar.regression_inputs(np.zeros((2, 5), int), np.zeros((2, 4), int))


# -- (c) an audit at too small a σ, through the batch, is a violation ------------------------------------------------


def test_half_the_tight_sigma_is_a_violation_through_the_batch() -> None:
    setting = default_setting("ldp-ucrl-vtr")
    halved = {
        k: tuple(x / 2 for x in v) if isinstance(v, tuple) else v / 2 for k, v in setting_claim_sigmas(setting).items()
    }
    half = dataclasses.replace(setting, sigma=halved)
    assert half.implementation is None and batched(_run(half, 0))  # dpkit's algorithm: its runs go through the batch
    result = audit_setting(half, runs=400, seed=3)
    assert result.verdict == "violation", result.to_dict()
    correct = audit_setting(setting, runs=400, seed=3)
    assert correct.verdict != "violation", correct.to_dict()
