"""One home per algorithm: a private algorithm defined outside dpkit (tests/support/toy_algorithm.py)
runs through the simulation, the ledger, the audit and the report after one registration, and the
registry behaves like Gymnasium's (entry points as "module:attr", plugins, did-you-mean)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import toy_algorithm
from toy_algorithm import NAME, SPEC, make_agent_without_clipping

from dpkit.accountant import calibrate_sigma
from dpkit.accountant.algorithm_ledgers import algorithm_ledger
from dpkit.algorithms import registry
from dpkit.algorithms.simulation import Experiment, simulate
from dpkit.algorithms.spec import AlgorithmSpec, AuditSpec, ReportSpec, load
from dpkit.audits.rl import audit_registered_algorithm, audit_setting, default_setting
from dpkit.audits.rl.registry import audited_algorithms
from dpkit.reports.config import parse_config
from dpkit.reports.job import compute_report
from dpkit.reports.render import markdown_escape, write_report


@pytest.fixture
def toy() -> Iterator[AlgorithmSpec]:
    registry.register(SPEC)  # the one line that adds the algorithm
    yield SPEC
    registry.unregister(NAME)


def test_the_toy_algorithm_simulates(toy: AlgorithmSpec) -> None:
    e = Experiment(algorithm=NAME, env="riverswim", states=2, episodes=60, epsilon=1.0, delta=1e-5)
    run = simulate(e, 0)
    again = simulate(e, 0)
    assert run.algorithm == NAME and run.regret.shape == (60,)
    assert np.array_equal(run.regret, again.regret)  # same seed, same run
    horizon = 4  # RiverSwim: H = 2S
    assert run.sigmas["rewards"] == pytest.approx(math.sqrt(horizon) * math.sqrt(2 * math.log(1.25e5)) / 1.0)
    assert NAME in registry.names(private=True, environment="tabular")
    assert NAME in audited_algorithms()


def test_the_toy_algorithm_has_a_ledger(toy: AlgorithmSpec) -> None:
    declaration = registry.declare(NAME, 1.0, 1e-5, horizon=4)
    ledger = algorithm_ledger(declaration)
    # one Gaussian release of Δ = √H: its tight σ is the accountant's calibration of that release (peer)
    reference = calibrate_sigma(1.0, 1e-5, sensitivity=2.0).sigma
    assert ledger.sigmas_tight[0] == pytest.approx(reference, rel=1e-9)
    assert ledger.sigmas_tight[0] >= reference
    with pytest.raises(ValueError, match="does not use"):
        registry.declare(NAME, 1.0, 1e-5, horizon=4, dim=3)


@pytest.mark.slow
def test_the_toy_algorithm_is_audited(toy: AlgorithmSpec) -> None:
    correct = audit_registered_algorithm(NAME, runs=1500, seed=2)
    assert correct.verdict == "consistent", correct.to_dict()
    assert correct.reach == pytest.approx(1.0)  # the canaries realise the declared Δ = √H
    wrong = audit_setting(default_setting(NAME, implementation=make_agent_without_clipping), runs=1500, seed=2)
    assert wrong.verdict == "violation", wrong.to_dict()


@pytest.mark.slow
def test_the_toy_algorithm_is_reported(toy: AlgorithmSpec, tmp_path: Path) -> None:
    config = parse_config(
        {
            "seeds": 2,
            "workers": 2,  # the regret runs in worker processes: the registration is replayed there
            "algorithm": [
                {"name": NAME, "states": 2, "episodes": 40, "epsilon": 1.0, "delta": 1e-5, "audit": {"runs": 300}}
            ],
        },
        "toy.toml",
    )
    data = compute_report(config, command=["dpkit", "report"])
    (section,) = data["algorithms"]
    assert section["name"] == NAME and section["privacy_model"] == "LDP"
    assert section["assumptions"] == list(SPEC.report.assumptions)
    assert section["tree"] is None and section["rlsvi"] is None
    assert section["audit"]["result"]["verdict"] in ("consistent", "inconclusive")
    files = write_report(data, tmp_path / "out")
    assert "report.md" in files
    text = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert f"## {NAME}" in text and markdown_escape(SPEC.report.assumptions[0]) in text
    assert json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["algorithms"][0]["name"] == NAME


def test_unknown_names_suggest_the_closest() -> None:
    with pytest.raises(ValueError, match=r"did you mean 'private-linopt-vi'\?"):
        registry.get("private-linopt-iv")
    with pytest.raises(ValueError, match="must be one of"):
        Experiment(algorithm="rlsvj", env="riverswim", episodes=3)
    with pytest.raises(ValueError, match="did you mean 'rlsvi'"):
        default_setting("rlsvj")


def test_a_name_is_registered_once(toy: AlgorithmSpec) -> None:
    clash = AlgorithmSpec(NAME, toy_algorithm.make_agent)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(clash)
    registry.register(clash, replace=True)
    assert registry.get(NAME) is clash and not registry.get(NAME).private
    assert NAME not in registry.names(private=True)


def test_entry_points_load_lazily_and_say_what_is_wrong() -> None:
    assert load("toy_algorithm:make_agent") is toy_algorithm.make_agent
    assert load("dpkit.audits.rl.observers:Trace.row") is not None  # dotted attributes
    for bad, message in (
        ("toy_algorithm.make_agent", "package.module:attr"),
        ("no_such_module_xyz:f", "cannot be loaded"),
        ("toy_algorithm:nothing", "cannot be loaded"),
    ):
        with pytest.raises(ValueError, match=message):
            load(bad)
    with pytest.raises(TypeError, match="not callable"):
        load("toy_algorithm:NAME")


def test_specs_are_checked_when_made() -> None:
    with pytest.raises(ValueError, match="environment must be one of"):
        AlgorithmSpec("x", toy_algorithm.make_agent, environment="atari")
    with pytest.raises(TypeError, match="entry_point"):
        AlgorithmSpec("x", 42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no ε of its own"):
        AlgorithmSpec("x", toy_algorithm.make_agent, default_epsilon=toy_algorithm.declare)
    with pytest.raises(ValueError, match="white_box names observers"):
        AuditSpec(
            observers=("a",),
            white_box=("b",),
            world=toy_algorithm.SPEC.audit.world,
            observe=toy_algorithm.SPEC.audit.observe,
        )
    with pytest.raises(ValueError, match="sections must be among"):
        ReportSpec(sections=("appendix",))
    with pytest.raises(TypeError, match="must be an AlgorithmSpec"):
        registry.register("toy")  # type: ignore[arg-type]


def test_plugins_register_through_the_entry_point_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed package's entry point in the group dpkit.algorithms is loaded on the first lookup."""
    from importlib import metadata

    class FakeEntryPoint:
        name, value = "toy", "toy_algorithm:SPEC"

        def load(self) -> AlgorithmSpec:
            return SPEC

    def entry_points(*, group: str) -> list[FakeEntryPoint]:
        return [FakeEntryPoint()] if group == registry.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "_RUNTIME", {})
    monkeypatch.setattr(registry, "_LOADED", set())
    monkeypatch.setattr(registry, "_loaded", False)
    assert registry.get(NAME) is SPEC
    assert "rlsvi" in registry.names(private=True)  # the built-ins load too
    assert not registry.is_runtime(NAME) and SPEC not in registry.runtime_registrations()  # each process loads it


def _ghost_make_agent(*args: object, **kwargs: object) -> None:
    """An entry point whose module a spawned worker cannot import (it lives only in this process's sys.modules)."""


def test_a_registration_no_worker_can_load_costs_only_itself() -> None:
    # a spec pickled by reference to a module a spawned worker cannot import (a test module loaded by path, a
    # notebook's): the pool's initializer skips it, and the pool runs every other task as before
    import sys
    import types

    from dpkit.algorithms.executors import make_executor

    ghost = types.ModuleType("dpkit_ghost_module")
    _ghost_make_agent.__module__ = ghost.__name__
    ghost._ghost_make_agent = _ghost_make_agent  # type: ignore[attr-defined]
    sys.modules[ghost.__name__] = ghost
    try:
        registry.register(AlgorithmSpec("ghost-algorithm", _ghost_make_agent))
        assert any(s.name == "ghost-algorithm" for s in registry.runtime_registrations())  # it pickles here
        with make_executor("processes", workers=1) as pool:
            assert pool.map(math.sqrt, [4.0, 9.0]) == [2.0, 3.0]
    finally:
        registry.unregister("ghost-algorithm")
        del sys.modules[ghost.__name__]
    blob = registry.travelling()  # the ghost gone: the pickles of what remains
    registry.replay(blob)  # replaying them here is idempotent


class _Skipping(BaseException):
    """What pytest's ``importorskip`` raises at import time: a BaseException, not an Exception."""


def _raise_on_load() -> None:
    raise _Skipping("a module that skips on import")


class _LoadsBadly:
    def __reduce__(self) -> tuple[object, tuple[()]]:
        return (_raise_on_load, ())


def test_replay_skips_a_pickle_whose_loading_raises_even_a_base_exception() -> None:
    import pickle

    before = registry.generation()
    registry.replay([pickle.dumps(_LoadsBadly())])
    assert registry.generation() == before  # nothing registered, nothing raised
