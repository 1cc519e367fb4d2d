"""Private-OFU-RL simulated R runs at once: each run of a batch is the run alone (the agent, its optimistic search and
the audit's observer), the agent of one Generator still plays what it played before the run axis, and an audit at a
too-small σ through the batched observer is still a violation."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.algorithms.envs.lq import random_lq
from dpkit.algorithms.envs.lq_users import LQUsers
from dpkit.algorithms.ofu_rl import Ellipsoid, make_agent, optimistic_theta, run_lq
from dpkit.algorithms.ofu_rl.ellipsoid import EllipsoidBatch, optimistic_thetas
from dpkit.audits.rl import audit_setting
from dpkit.audits.rl import setting as rs
from dpkit.audits.rl.observers import ObservedRun
from dpkit.audits.rl.ofu_rl import observe, observe_batch
from dpkit.audits.rl.registry import audit_spec

NAME = "private-ofu-rl"
#: Rows and runs recorded at commit 4713430, before the agent had a run axis (the agent of one Generator must still
#: give them): ``observe/<observer>/<position>/<which>`` the rows of seeds 3 and 11 of the default setting;
#: ``run/<agent>/<preset>/<field>`` a run_lq of 6 users (system random_lq(2, 1, 5, 0, r=0.1), users LQUsers.draw(6,
#: system, 1), agent seed 5, candidates 6, refine_rounds 3).
REFERENCE = Path(__file__).parent / "data" / "ofu_batched_reference.npz"
TOL = {"rtol": 1e-9, "atol": 1e-12}


def observed(setting: rs.RlSetting, which: int) -> ObservedRun:
    """The run an audit of ``setting`` hands its observer on D (0) or D′ (1) (as :func:`dpkit.audits.rl.setting`)."""
    return ObservedRun(
        setting=setting,
        which=which,
        world=rs.setting_world(setting),
        index=setting.index,
        white_box=setting.white_box,
        claim_sigmas=rs.setting_claim_sigmas(setting),
        sensitivities=rs.declared_sensitivities(setting),
        make_agent=functools.partial(rs.make_setting_agent, setting),
    )


def settings_of(observer: str) -> list[rs.RlSetting]:
    base = dataclasses.replace(rs.default_setting(NAME), observer=observer)
    return [dataclasses.replace(base, position=p) for p in rs.positions(base)]


def test_observe_batch_is_registered() -> None:

    assert audit_spec(NAME).hook("observe_batch") is observe_batch


# ------------------------------------------------------------------ (a) a batch is its runs alone


@pytest.mark.parametrize("observer", ["billboard", "actions"])
@pytest.mark.parametrize("which", [0, 1])
def test_observe_batch_is_observe_run_by_run(observer: str, which: int) -> None:
    for setting in settings_of(observer):
        run = observed(setting, which)
        many = observe_batch(run, np.random.default_rng(7).spawn(5))
        alone = np.stack([observe(run, g) for g in np.random.default_rng(7).spawn(5)])
        assert many.shape == alone.shape and many.shape[0] == 5
        np.testing.assert_allclose(many, alone, **TOL)


def test_observe_batch_with_the_paper_preset_and_gradient_rounds() -> None:
    """The paper's regulariser and a gradient search of several rounds (runs stop their descent at different
    rounds)."""
    setting = rs.default_setting(NAME, options={"candidates": 6, "refine_rounds": 4})
    run = observed(setting, 1)
    many = observe_batch(run, np.random.default_rng(3).spawn(6))
    alone = np.stack([observe(run, g) for g in np.random.default_rng(3).spawn(6)])
    np.testing.assert_allclose(many, alone, **TOL)


def test_an_implementation_under_test_is_observed_run_by_run() -> None:
    """An implementation under test takes one run: observe_batch plays it run by run, exactly as observe does."""
    import copy

    def seeded_as_b1(name, env, episodes, rng, **kw):  # B2 draws B1's normals (a mutant of the scalar agent)
        agent = make_agent(name, env, episodes, rng, **kw)
        agent._b2._rng = copy.deepcopy(agent._b1._rng)
        return agent

    setting = rs.default_setting(NAME, implementation=seeded_as_b1)
    run = observed(setting, 0)
    many = observe_batch(run, np.random.default_rng(2).spawn(3))
    alone = np.stack([observe(run, g) for g in np.random.default_rng(2).spawn(3)])
    np.testing.assert_array_equal(many, alone)
    correct = np.stack([observe(observed(rs.default_setting(NAME), 0), g) for g in np.random.default_rng(2).spawn(3)])
    assert not np.allclose(many, correct)  # the mutant's counters really ran


@settings(max_examples=12, deadline=None)
@given(runs=st.integers(1, 4), seed=st.integers(0, 2**32 - 1), private=st.booleans(), rounds=st.integers(0, 3))
def test_an_agent_of_runs_plays_each_run_as_alone(runs: int, seed: int, private: bool, rounds: int) -> None:
    system = random_lq(2, 1, 4, seed % 1000, r=0.1)
    users = LQUsers.draw(5, system, seed)
    kw = {"epsilon": 2.0, "delta": 1e-5} if private else {}
    options = {"candidates": 4, "refine_rounds": rounds, **kw}
    batch = make_agent(NAME if private else "ofu-rl", system, 5, np.random.default_rng(seed).spawn(runs), **options)
    alone = [make_agent(batch.name, system, 5, g, **options) for g in np.random.default_rng(seed).spawn(runs)]
    assert batch.runs == runs and alone[0].runs is None
    for k in range(5):
        plan = batch.plan(k)
        plans = [a.plan(k) for a in alone]
        assert plan.policy.shape == (runs, 4, 1, 2)
        for i, p in enumerate(plans):
            np.testing.assert_allclose(plan.policy[i], p.policy, **TOL)
            for n in ("B1", "B2"):
                np.testing.assert_allclose(plan.released[n][i], p.released[n], **TOL)
        states, controls, _ = system.rollout(plan.policy, users.noise[k])
        items = batch.items(states, controls)
        for i, a in enumerate(alone):
            mine = a.items(states[i], controls[i])
            for n in ("B1", "B2"):
                np.testing.assert_allclose(items[n][i], mine[n], **TOL)
            a.update(k, states[i], controls[i], np.zeros(4))
        batch.update(k, states, controls, np.zeros((runs, 4)))


def test_an_agent_of_runs_checks_its_inputs() -> None:
    system = random_lq(2, 1, 4, 0)
    agent = make_agent("ofu-rl", system, 3, np.random.default_rng(0).spawn(2))
    with pytest.raises(ValueError, match=r"states must have shape \(2, 5, 2\)"):
        agent.items(np.zeros((5, 2)), np.zeros((4, 1)))
    with pytest.raises(ValueError, match="at least one Generator"):
        make_agent("ofu-rl", system, 3, [])
    with pytest.raises(ValueError, match=r"plan\(1\) called after 0 episodes"):
        agent.plan(1)


@settings(max_examples=15, deadline=None)
@given(runs=st.integers(1, 4), seed=st.integers(0, 2**32 - 1), gradient=st.booleans(), bound=st.sampled_from([0.3, 3]))
def test_the_optimistic_search_of_runs_is_each_search_alone(runs: int, seed: int, gradient: bool, bound: float) -> None:
    """Each run's choice is optimistic_theta's of its ellipsoid and Generator alone, with or without gradients and
    with the Frobenius constraint active (S = 0.3: anchors off the centre) or not."""
    rng = np.random.default_rng(seed)
    ells = []
    for _ in range(runs):
        z = rng.standard_normal((20, 3))
        ells.append(Ellipsoid(rng.standard_normal((3, 2)), z.T @ z + np.eye(3), float(rng.uniform(0.0, 2.0))))
    target = rng.standard_normal((3, 2))

    def cost(t: np.ndarray):
        c = np.sum((t - target) ** 2, axis=(-2, -1))
        return (c, 2.0 * (t - target)) if gradient else c

    def costs(t: np.ndarray):
        out = cost(t)
        return out if gradient else (out, None)

    options = {"gradient": gradient, "theta_bound": bound, "candidates": 5, "refine_rounds": 3, "line_search": 4}
    sets = EllipsoidBatch.of(
        np.stack([e.centre for e in ells]), np.stack([e.gram for e in ells]), np.array([e.radius for e in ells])
    )
    many = optimistic_thetas(sets, costs, np.random.default_rng(seed).spawn(runs), **options)
    for i, g in enumerate(np.random.default_rng(seed).spawn(runs)):
        one = optimistic_theta(ells[i], cost, g, **options)
        np.testing.assert_allclose(many.theta[i], one.theta, **TOL)
        np.testing.assert_allclose(many.anchor[i], one.anchor, **TOL)
        np.testing.assert_allclose(many.cost[i], one.cost, **TOL)
        assert bool(many.constrained[i]) == one.constrained and int(many.evaluated[i]) == one.evaluated


# ------------------------------------------------------------------ (b) the agent of one Generator is unchanged


@pytest.mark.parametrize("observer", ["billboard", "actions"])
def test_observe_gives_the_rows_it_gave_before_the_run_axis(observer: str) -> None:
    ref = np.load(REFERENCE)
    for setting in settings_of(observer):
        if setting.position not in ("first", "middle", "last"):
            continue
        for which in (0, 1):
            run = observed(setting, which)
            rows = np.stack([observe(run, np.random.default_rng(seed)) for seed in (3, 11)])
            np.testing.assert_allclose(rows, ref[f"observe/{observer}/{setting.position}/{which}"], **TOL)


@pytest.mark.parametrize("name", ["private-ofu-rl", "ofu-rl"])
@pytest.mark.parametrize("preset", ["paper", "tuned"])
def test_run_lq_gives_what_it_gave_before_the_run_axis(name: str, preset: str) -> None:
    ref = np.load(REFERENCE)
    system = random_lq(2, 1, 5, 0, r=0.1)
    users = LQUsers.draw(6, system, 1)
    kw = {"epsilon": 1.0, "delta": 1e-5} if name == NAME else {}
    options = {"candidates": 6, "refine_rounds": 3}
    if not (name == "ofu-rl" and preset == "paper"):
        options["preset"] = preset
    run = run_lq(make_agent(name, system, 6, 5, **kw, **options), system, users, 0, record=True)
    key = f"run/{name}/{preset}"
    for field, value in (("actions", run.actions), ("states", run.states), ("regret", run.regret)):
        np.testing.assert_allclose(value, ref[f"{key}/{field}"], **TOL)
    for n in ("B1", "B2"):
        np.testing.assert_allclose(run.releases[n], ref[f"{key}/{n}"], **TOL)


# ------------------------------------------------------------------ (c) a too-small σ is still seen


def test_half_the_tight_sigma_is_a_violation_through_the_batch() -> None:
    """dpkit's own agent at half the σ the claim needs (the registered algorithm: its runs go through observe_batch)."""
    setting = rs.default_setting(NAME)
    half = dataclasses.replace(setting, sigma=tuple((k, v / 2) for k, v in rs.setting_claim_sigmas(setting).items()))
    assert half.implementation is None
    result = audit_setting(half, runs=300, seed=3)
    assert result.verdict == "violation", result.to_dict()
