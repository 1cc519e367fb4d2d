"""Private-LinOpt's runs simulated in batches: the agent with a run axis is, run by run, the agent of one Generator;
the audit's ``observe_batch`` is, row by row, ``observe``; the agent of one Generator is what it was before it became
the batch of one (rows recorded at commit 4713430); and an audit at too small a σ, batched, is still a violation."""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import pathlib
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.algorithms.envs.tabular import User, random_tabular
from dpkit.algorithms.episodes import play_episodes
from dpkit.algorithms.linopt import make_agent
from dpkit.audits.rl.linopt import observe, observe_batch
from dpkit.audits.rl.observers import ObservedRun
from dpkit.audits.rl.registry import audit_spec
from dpkit.audits.rl.setting import (
    RlSetting,
    declared_sensitivities,
    default_setting,
    make_setting_agent,
    setting_claim_sigmas,
    setting_world,
)

DATA = pathlib.Path(__file__).with_name("data")
PRIVATE = {"epsilon": 4.0, "delta": 1e-5}


def _reference_module() -> Any:
    """The script that recorded ``linopt_runs_reference.npz`` (its settings and helpers)."""
    spec = importlib.util.spec_from_file_location("make_linopt_runs_reference", DATA / "make_linopt_runs_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _observed_run(setting: RlSetting, which: int) -> ObservedRun:
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


def _gens(seeds: range | list[int]) -> list[np.random.Generator]:
    """Fresh Generators (each its own SeedSequence: spawning from one does not shift another's children)."""
    return [np.random.default_rng(s) for s in seeds]


# -- the agent ----------------------------------------------------------------------------------------------------


AGENTS = (
    ("linopt-vi", {}),
    ("linopt-po", {"preset": "tuned"}),
    ("private-linopt-vi", PRIVATE),
    ("private-linopt-vi", {**PRIVATE, "sigma": 0.3, "regularization": 1.0}),
    ("private-linopt-po", {**PRIVATE, "preset": "tuned", "eta": 1.0}),
    ("private-linopt-po", PRIVATE),
)


@settings(max_examples=25, deadline=None)
@given(
    agent=st.sampled_from(AGENTS),
    runs=st.integers(1, 5),
    states=st.integers(2, 3),
    seed=st.integers(0, 2**31 - 1),
)
def test_a_batch_of_agents_is_the_agents_of_its_generators(
    agent: tuple[str, dict[str, Any]], runs: int, states: int, seed: int
) -> None:
    name, kwargs = agent
    horizon, episodes = 3, 5
    env = random_tabular(states, 2, horizon, seed % 1000)
    seeds = [seed + i for i in range(runs)]
    batch = make_agent(name, env, episodes, _gens(seeds), **kwargs)
    alone = [make_agent(name, env, episodes, g, **kwargs) for g in _gens(seeds)]
    assert batch.runs == runs and alone[0].runs is None
    assert batch.privatizer.runs == runs and alone[0].privatizer.runs is None
    rng = np.random.default_rng(seed)
    for k in range(episodes):
        plan = batch.plan(k)
        policy = np.asarray(plan.policy)
        for i, one in enumerate(alone):
            p = one.plan(k)
            np.testing.assert_allclose(policy[i], p.policy, rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(batch.last_q[i], one.last_q, rtol=1e-9, atol=1e-12)
            assert sorted(plan.released) == sorted(p.released)
            for n, released in p.released.items():
                np.testing.assert_allclose(plan.released[n][i], released, rtol=1e-9, atol=1e-12)
        draws = rng.random((runs, horizon)) if policy.ndim == 4 else None
        states_, actions, rewards = play_episodes(env, policy, User(rng.random(horizon), rng.random(horizon)), draws)
        items = batch.items(k, states_, actions, rewards)
        for i, one in enumerate(alone):
            for n, item in one.items(k, states_[i], actions[i], rewards[i]).items():
                np.testing.assert_allclose(items[n][i], item, rtol=1e-9, atol=1e-12)
            one.update(k, states_[i], actions[i], rewards[i])
        batch.update(k, states_, actions, rewards)


def test_a_batch_checks_its_trajectories_with_their_run_axis() -> None:
    env = random_tabular(2, 2, 3, 0)
    batch = make_agent("private-linopt-vi", env, 4, _gens([0, 1]), **PRIVATE)
    batch.plan(0)
    with pytest.raises(ValueError, match=r"states of episode 0 must be integers of shape \(2, 4\)"):
        batch.update(0, np.zeros(4, dtype=int), np.zeros((2, 3), dtype=int), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="rewards of episode 0"):
        batch.update(0, np.zeros((2, 4), dtype=int), np.zeros((2, 3), dtype=int), np.zeros(3))
    with pytest.raises(ValueError, match="at least one Generator"):
        make_agent("private-linopt-vi", env, 4, [], **PRIVATE)


# -- the audit's observer -----------------------------------------------------------------------------------------


def test_the_registered_spec_observes_in_batches() -> None:
    assert audit_spec("private-linopt-vi").hook("observe_batch") is observe_batch
    assert audit_spec("private-linopt-po").hook("observe_batch") is observe_batch


OBSERVED = (
    ("private-linopt-vi", "billboard", None),
    ("private-linopt-po", "billboard", None),
    ("private-linopt-vi", "actions", {"preset": "tuned"}),
    ("private-linopt-po", "actions", {"preset": "tuned"}),
)


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize(("algorithm", "observer", "options"), OBSERVED)
def test_observe_batch_is_observe_run_by_run(
    algorithm: str, observer: str, options: dict[str, Any] | None, position: str, which: int
) -> None:
    setting = default_setting(algorithm, observer=observer, options=options)
    run = _observed_run(dataclasses.replace(setting, position=position), which)
    seeds = list(range(40, 45))
    batch = observe_batch(run, _gens(seeds))
    rows = np.stack([observe(run, g) for g in _gens(seeds)])
    assert batch.shape == rows.shape
    np.testing.assert_allclose(batch, rows, rtol=1e-9, atol=1e-12)


def test_an_implementation_under_test_is_observed_run_by_run() -> None:
    """A user's class (here a subclass that counts its runs) is built with one Generator per run."""
    from dpkit.algorithms.linopt import PrivateLinOpt

    built: list[Any] = []

    def implementation(name: str, env: Any, episodes: int, rng: Any, **kw: Any) -> Any:
        assert isinstance(rng, np.random.Generator)  # never a batch
        agent = make_agent(name, env, episodes, rng, **kw)
        built.append(agent)
        return agent

    setting = dataclasses.replace(default_setting("private-linopt-vi"), implementation=implementation)
    run = _observed_run(setting, 1)
    rows = observe_batch(run, _gens([1, 2, 3]))
    assert len(built) == 3 and all(isinstance(a, PrivateLinOpt) and a.runs is None for a in built)
    registered = _observed_run(default_setting("private-linopt-vi"), 1)
    np.testing.assert_allclose(rows, observe_batch(registered, _gens([1, 2, 3])), rtol=1e-9, atol=1e-12)


# -- the agent of one Generator is what it was (rows recorded at commit 4713430) ----------------------------------


def test_the_scalar_agent_and_observer_give_what_they_gave_before_the_run_axis() -> None:
    ref = _reference_module()
    data = np.load(DATA / "linopt_runs_reference.npz")
    checked = 0
    for key, algorithm, observer, options, sigma in ref.SETTINGS:
        base = default_setting(algorithm, observer=observer, options=options, sigma=sigma)
        for position in ref.POSITIONS:
            for which in (0, 1):
                run = _observed_run(dataclasses.replace(base, position=position), which)
                rows = np.stack([observe(run, np.random.default_rng(s)) for s in ref.SEEDS])
                want = data[f"row/{key}/{position}/{which}"]
                assert rows.shape == want.shape, (key, position, which)
                np.testing.assert_allclose(rows, want, rtol=1e-9, atol=1e-12, err_msg=f"{key} {position} {which}")
                checked += 1
    for key, kwargs in ref.AGENTS:
        name = key.removesuffix("-tuned").removesuffix("-s")
        for seed in ref.AGENT_SEEDS:
            for field, value in ref.agent_plans(name, seed, **kwargs).items():
                want = data[f"agent/{key}/{seed}/{field}"]
                np.testing.assert_allclose(value, want, rtol=1e-9, atol=1e-12, err_msg=f"{key} {seed} {field}")
                checked += 1
    assert checked == len(data.files)


# -- an audit at too small a σ, batched, is a violation -----------------------------------------------------------


@pytest.mark.slow
def test_half_the_tight_sigma_is_a_violation_through_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    import dpkit.audits.rl.linopt as audit_module
    from dpkit.audits.rl import audit_setting

    batches: list[int] = []
    observe_runs = audit_module._observe_runs

    def counted(run: ObservedRun, rngs: Any, *, batched: bool) -> np.ndarray:
        batches.append(len(rngs) if batched else 0)
        return observe_runs(run, rngs, batched=batched)

    monkeypatch.setattr(audit_module, "_observe_runs", counted)
    setting = default_setting("private-linopt-vi")
    half = dataclasses.replace(setting, sigma={k: v / 2 for k, v in setting_claim_sigmas(setting).items()})
    assert half.implementation is None  # dpkit's own agent: the runs go through observe_batch
    result = audit_setting(half, runs=300, seed=3)
    assert result.verdict == "violation", result.to_dict()
    assert batches and min(batches) > 1  # in batches of runs, in this process
