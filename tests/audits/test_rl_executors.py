"""RL audits on every executor (audits/rl/fixed.py, `dpkit audit ALGORITHM`): the same seed gives the same result in
this process, on a process pool and on an auto executor that moves to one midway; `auto` is the command's default."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace

import pytest
from cli_runs import run, run_json
from toy_algorithm import SPEC

from dpkit.algorithms import registry
from dpkit.algorithms.executors import AutoExecutor, Executor, make_executor
from dpkit.audits.rl import audit_setting, audited_algorithms, default_setting
from dpkit.commands.options import rl_executor

RUNS, CHUNK = 24, 4  # six chunks per dataset: an auto executor has work left to move


@pytest.fixture(scope="module")
def pool() -> Iterator[Executor]:
    with make_executor("processes", workers=2) as executor:
        yield executor


def _audit(algorithm: str, executor: Executor | None) -> dict:
    setting = default_setting(algorithm, position="first")
    return audit_setting(setting, runs=RUNS, seed=11, executor=executor, chunk_size=CHUNK).to_dict()


def test_same_seed_same_rl_result_any_executor(pool: Executor) -> None:
    """In-process, a pool, and an auto executor told that every map is slow (it runs one chunk here, times it and
    moves the rest to a pool): one result."""
    here = _audit("private-linopt-vi", None)
    with AutoExecutor(workers=2, slow_seconds=0.0) as auto:
        moved = _audit("private-linopt-vi", auto)
        assert auto.name == "processes" and auto.switched_after == CHUNK  # it did move, after one chunk
    assert moved == here
    assert _audit("private-linopt-vi", pool) == here


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", audited_algorithms())
def test_every_algorithm_same_result_on_a_pool(algorithm: str, pool: Executor) -> None:
    assert _audit(algorithm, pool) == _audit(algorithm, None)


def test_the_command_defaults_to_auto_with_the_same_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("audit", "rlsvi", "--runs", "12", "--position", "first", "--seed", "3")
    default = run_json(capsys, *args)
    local = run_json(capsys, *args, "--executor", "local")
    sized = run_json(capsys, *args, "--workers", "2")  # auto's pool takes --workers
    assert default == local == sized
    code, _, err = run(capsys, *args, "--executor", "local", "--workers", "2")
    assert code == 2 and "--workers does not apply to --executor local" in err
    assert json.dumps(default)  # plain JSON, nothing executor-specific in it


def test_auto_stays_in_process_for_an_algorithm_no_pool_can_know() -> None:
    assert rl_executor("local", "rlsvi") == "in-process" and rl_executor("auto", "rlsvi") == "auto"
    spec = replace(SPEC, name="toy-unpicklable", default_epsilon=lambda: 1.0)
    registry.register(spec)
    try:
        assert registry.is_runtime(spec.name) and not registry.travels(spec.name)
        assert rl_executor("auto", spec.name) == "in-process"
        assert rl_executor("processes", spec.name) == "processes"  # asked for: the audit refuses it, naming why
    finally:
        registry.unregister(spec.name)
    registry.register(SPEC)
    try:
        assert registry.travels(SPEC.name) and rl_executor("auto", SPEC.name) == "auto"
    finally:
        registry.unregister(SPEC.name)
