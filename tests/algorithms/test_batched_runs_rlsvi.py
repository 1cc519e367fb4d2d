"""RLSVI's runs in batches: an agent of R Generators is R agents of one, its audit's observe_batch is observe run by
run, and the agent of one Generator (the batch of one) gives what it gave before the run axis.

The reference rows in ``data/rlsvi_reference_4713430.npz`` were recorded at commit 4713430 (before the run axis):
``observe(run, np.random.default_rng(seed))`` for seeds 0, 1, 2 of the default setting of both observers, of a
larger world (S = 3, H = 4, K = 6, Russo's β; seed 0) and of the default setting at half the claim's σ, at every
default position and on both datasets; and the plans, counts, variances, estimates and run μ of a scalar agent
(S = 3, A = 2, H = 4, K = 6; seed 0 with Russo's β, seed 1 with β = 0.05) playing users drawn from seed + 10.
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
from rl_mutants import rlsvi_no_clipping, rlsvi_noise_reused_across_plans

import dpkit.algorithms.rlsvi as rlsvi
import dpkit.audits.rl.rlsvi as rlsvi_module
from dpkit.algorithms.envs.tabular import Users, random_tabular, uniform_tabular
from dpkit.algorithms.episodes import Plan, play_episode, play_episodes
from dpkit.algorithms.rlsvi import RELEASE, Rlsvi
from dpkit.audits.rl import audit_setting
from dpkit.audits.rl.observers import ObservedRun
from dpkit.audits.rl.rlsvi import observe, observe_batch
from dpkit.audits.rl.rows import RowLayout
from dpkit.audits.rl.setting import (
    RlSetting,
    declared_sensitivities,
    default_setting,
    make_setting_agent,
    positions,
    setting_claim_sigmas,
    setting_world,
)

REFERENCE = Path(__file__).parent / "data" / "rlsvi_reference_4713430.npz"
TOL = {"rtol": 1e-9, "atol": 1e-12}


def _run(setting: RlSetting, which: int) -> ObservedRun:
    """The observed run of ``setting`` on D (``which`` = 0) or D′, as the audit's release builds it."""
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


def _half_sigma(setting: RlSetting) -> RlSetting:
    """dpkit's RLSVI at half the σ the claim needs: the registered algorithm, too little noise."""
    return dataclasses.replace(setting, sigma={k: v * 0.5 for k, v in setting_claim_sigmas(setting).items()})


def _gens(seed: int, runs: int) -> list[np.random.Generator]:
    return list(np.random.default_rng(seed).spawn(runs))


# ------------------------------------------------------------------------------ observe_batch is observe run by run


@pytest.mark.parametrize("observer", ["q-values", "policies"])
@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize("which", [0, 1])
def test_observe_batch_is_observe_run_by_run(observer: str, position: str, which: int) -> None:
    setting = default_setting("rlsvi", observer=observer)
    assert position in positions(setting)
    run = _run(dataclasses.replace(setting, position=position), which)
    assert rlsvi_module._batched(run)
    batch = observe_batch(run, _gens(5, 5))
    one_by_one = np.stack([observe(run, g) for g in _gens(5, 5)])
    assert batch.shape == one_by_one.shape and batch.shape[0] == 5
    np.testing.assert_allclose(batch, one_by_one, **TOL)


@settings(max_examples=15, deadline=None)
@given(
    states=st.integers(2, 3),
    horizon=st.integers(2, 4),
    episodes=st.integers(2, 5),
    which=st.integers(0, 1),
    half=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_observe_batch_is_observe_run_by_run_in_other_worlds(
    states: int, horizon: int, episodes: int, which: int, half: bool, seed: int
) -> None:
    setting = default_setting("rlsvi", states=states, horizon=horizon, episodes=episodes)
    setting = _half_sigma(setting) if half else setting
    for position in positions(setting):
        run = _run(dataclasses.replace(setting, position=position), which)
        batch = observe_batch(run, _gens(seed, 3))
        np.testing.assert_allclose(batch, np.stack([observe(run, g) for g in _gens(seed, 3)]), **TOL)


def _no_clipping_unmarked(*args: Any, **kwargs: Any) -> Any:
    """The mutant without its :func:`~dpkit.algorithms.batches.plays_runs` mark: an implementation under test."""
    return rlsvi_no_clipping(*args, **kwargs)


@pytest.mark.parametrize("implementation", [_no_clipping_unmarked, rlsvi_noise_reused_across_plans])
def test_an_implementation_under_test_is_played_run_by_run(implementation: Any) -> None:
    setting = default_setting("rlsvi", implementation=implementation, position="middle")
    run = _run(setting, 1)
    assert not rlsvi_module._batched(run)
    agents: list[Any] = []
    make = run.make_agent

    def spy(rng: Any, env: Any) -> Any:
        agents.append(make(rng, env))
        return agents[-1]

    run = dataclasses.replace(run, make_agent=spy)
    batch = observe_batch(run, _gens(1, 3))
    assert len(agents) == 3 and all(a.runs is None and type(a) is not Rlsvi for a in agents)
    np.testing.assert_allclose(batch, np.stack([observe(run, g) for g in _gens(1, 3)]), **TOL)


def test_a_patched_rlsvi_is_played_run_by_run(monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = Rlsvi.plan

    def plan(self: Rlsvi, k: int) -> Plan:
        return shipped(self, k)

    run = _run(default_setting("rlsvi"), 0)
    assert rlsvi_module._batched(run)
    monkeypatch.setattr(Rlsvi, "plan", plan)
    assert not rlsvi_module._batched(run)


# ------------------------------------------------------------------------------ the batch of one is the agent as it was


def _reference_key(key: str) -> RlSetting:
    name, *_ = key.split("/")
    if name == "observe":
        return default_setting("rlsvi", observer=key.split("/")[1])
    if name == "observe-big":
        return default_setting("rlsvi", states=3, horizon=4, episodes=6, options=())
    assert name == "observe-half"
    return _half_sigma(default_setting("rlsvi"))


def _served_only(rows: np.ndarray, setting: RlSetting) -> np.ndarray:
    """White-box rows as recorded before the plans were read beside the released argmax and her action: each later
    plan's policy alone (the columns that follow each policy dropped, the count of plan columns with them)."""
    if not setting.white_box:
        return rows
    layout = RowLayout.of(rows, True)
    cells, h_ = setting.horizon * setting.states, setting.horizon
    plans = rows[:, layout.plan_columns].reshape(rows.shape[0], -1, 2 * cells + h_)[..., :cells]
    served = plans.reshape(rows.shape[0], -1)
    count = np.full((rows.shape[0], 1), float(served.shape[1]))
    return np.concatenate([rows[:, : layout.body], served, count, rows[:, -2:]], axis=1)


def test_observe_gives_the_rows_it_gave_before_the_run_axis() -> None:
    reference = np.load(REFERENCE)
    keys = [k for k in reference.files if k.startswith("observe")]
    assert len(keys) == 24
    for key in keys:
        *_, position, which = key.split("/")
        setting = dataclasses.replace(_reference_key(key), position=position)
        run = _run(setting, int(which))
        rows = reference[key]
        gens = [np.random.default_rng(seed) for seed in range(len(rows))]
        alone = np.stack([observe(run, g) for g in gens])
        np.testing.assert_allclose(_served_only(alone, setting), rows, err_msg=key, **TOL)
        gens = [np.random.default_rng(seed) for seed in range(len(rows))]
        np.testing.assert_allclose(_served_only(observe_batch(run, gens), setting), rows, err_msg=key, **TOL)


@pytest.mark.parametrize(("seed", "beta"), [(0, None), (1, 0.05)])
def test_the_scalar_agent_gives_what_it_gave_before_the_run_axis(seed: int, beta: float | None) -> None:
    reference = np.load(REFERENCE)
    env = uniform_tabular(3, 2, 4)
    users = Users.draw(6, 4, np.random.default_rng(seed + 10))
    agent = Rlsvi(3, 2, 4, 6, np.random.default_rng(seed), beta=beta)
    assert agent.runs is None
    for k in range(6):
        plan = agent.plan(k)
        assert plan.policy.shape == (4, 3) and plan.released[RELEASE].shape == (4, 3, 2)
        np.testing.assert_allclose(plan.released[RELEASE], reference[f"agent/{seed}/q"][k], **TOL)
        np.testing.assert_array_equal(plan.policy, reference[f"agent/{seed}/policy"][k])
        agent.update(k, *play_episode(env, plan.policy, users[k], None))
    np.testing.assert_array_equal(agent.counts, reference[f"agent/{seed}/counts"])
    np.testing.assert_allclose(agent.variances, reference[f"agent/{seed}/variances"], **TOL)
    r_hat, p_hat = agent.estimates()
    np.testing.assert_allclose(r_hat, reference[f"agent/{seed}/r_hat"], **TOL)
    np.testing.assert_allclose(p_hat, reference[f"agent/{seed}/p_hat"], **TOL)
    assert agent.run_privacy().mu == pytest.approx(float(reference[f"agent/{seed}/mu"]), rel=1e-12)


# ------------------------------------------------------------------------------ the agent of R Generators


@settings(max_examples=25, deadline=None)
@given(
    states=st.integers(1, 4),
    actions=st.integers(1, 3),
    horizon=st.integers(1, 4),
    episodes=st.integers(2, 5),
    runs=st.integers(1, 4),
    beta=st.one_of(st.none(), st.floats(0.01, 10.0)),
    seed=st.integers(0, 2**16),
)
def test_a_batch_of_agents_is_its_agents_one_by_one(
    states: int, actions: int, horizon: int, episodes: int, runs: int, beta: float | None, seed: int
) -> None:
    env = random_tabular(states, actions, horizon, np.random.default_rng(seed))
    users = Users.draw(episodes, horizon, np.random.default_rng(seed + 1))
    batch = Rlsvi(states, actions, horizon, episodes, _gens(seed, runs), beta=beta)
    alone = [Rlsvi(states, actions, horizon, episodes, g, beta=beta) for g in _gens(seed, runs)]
    assert batch.runs == runs
    for k in range(episodes):
        plan = batch.plan(k)
        plans = [a.plan(k) for a in alone]
        assert plan.policy.shape == (runs, horizon, states)
        np.testing.assert_allclose(plan.released[RELEASE], np.stack([p.released[RELEASE] for p in plans]), **TOL)
        np.testing.assert_array_equal(plan.policy, np.stack([p.policy for p in plans]))
        trajectories = play_episodes(env, plan.policy, users[k], None)
        batch.update(k, *trajectories)
        for i, a in enumerate(alone):
            a.update(k, *(x[i] for x in trajectories))
    np.testing.assert_array_equal(batch.counts, np.stack([a.counts for a in alone]))
    np.testing.assert_allclose(batch.variances, np.stack([a.variances for a in alone]), **TOL)
    for got, want in zip(batch.estimates(), zip(*(a.estimates() for a in alone), strict=True), strict=True):
        np.testing.assert_allclose(got, np.stack(want), **TOL)
    for i, a in enumerate(alone):
        assert batch.run_privacy(run=i).mu == pytest.approx(a.run_privacy().mu, rel=1e-12)


def test_a_batch_checks_its_inputs() -> None:
    with pytest.raises(ValueError, match="at least one Generator"):
        Rlsvi(2, 2, 2, 3, [])
    batch = Rlsvi(2, 2, 2, 3, _gens(0, 2))
    batch.plan(0)
    with pytest.raises(ValueError, match=r"states \(2, 3\), actions \(2, 2\) and rewards \(2, 2\)"):
        batch.update(0, np.zeros(3, int), np.zeros(2, int), np.zeros(2))
    with pytest.raises(ValueError, match="states must lie in 0..1"):
        batch.update(0, np.array([[0, 0, 0], [0, 2, 0]]), np.zeros((2, 2), int), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="rewards must be finite"):
        batch.update(0, np.zeros((2, 3), int), np.zeros((2, 2), int), np.array([[0.0, 0.0], [np.nan, 0.0]]))
    batch.update(0, np.zeros((2, 3), int), np.zeros((2, 2), int), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="run must be given"):
        batch.run_privacy()
    with pytest.raises(ValueError, match="run must be < 2"):
        batch.run_privacy(run=2)
    scalar = Rlsvi(2, 2, 2, 3, 0)
    scalar.plan(0)
    with pytest.raises(ValueError, match=r"states \(3,\), actions \(2,\) and rewards \(2,\)"):
        scalar.update(0, np.zeros((1, 3), int), np.zeros((1, 2), int), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="run must be given"):
        scalar.run_privacy(run=0)


# ------------------------------------------------------------------------------ the audit through the batch


def test_too_little_noise_is_a_violation_through_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    batches: list[int] = []
    observe_runs = rlsvi_module._observe

    def spy(run: ObservedRun, agent: Any) -> np.ndarray:
        batches.append(1 if agent.runs is None else agent.runs)
        return observe_runs(run, agent)

    monkeypatch.setattr(rlsvi_module, "_observe", spy)
    result = audit_setting(_half_sigma(default_setting("rlsvi")), runs=500, seed=3)
    assert result.verdict == "violation", result.to_dict()
    assert max(batches) == 250 and sum(batches) == 1000  # two chunks of 250 runs on D and on D′


def test_long_runs_go_in_smaller_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    setting = default_setting("rlsvi", position="middle")
    run = _run(setting, 1)
    sizes: list[int] = []
    observe_runs = rlsvi_module._observe

    def spy(run: ObservedRun, agent: Any) -> np.ndarray:
        sizes.append(agent.runs)
        return observe_runs(run, agent)

    monkeypatch.setattr(rlsvi_module, "_observe", spy)
    monkeypatch.setattr(rlsvi_module, "BATCH_BYTES", 8 * 12 * (8 * 4 + 3 * 2) * 2)  # two runs of K = 4, H·S·A = 12
    batch = observe_batch(run, _gens(2, 5))
    assert sizes == [2, 2, 1]
    np.testing.assert_allclose(batch, np.stack([observe(run, g) for g in _gens(2, 5)]), **TOL)


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    ties=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_the_folded_max_and_argmax_are_numpys(shape: list[int], ties: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, shape).astype(float) if ties else rng.standard_normal(shape)
    np.testing.assert_array_equal(rlsvi.max_last(x), x.max(axis=-1))
    np.testing.assert_array_equal(rlsvi._argmax_last(x), x.argmax(axis=-1))
