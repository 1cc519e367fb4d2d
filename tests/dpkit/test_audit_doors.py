"""One audit, whichever door: ``dpkit.audit`` (Python) and ``dpkit audit --target`` (the command line) start from the
same defaults (:data:`dpkit.audits.defaults.AUDIT_DEFAULTS`) and give the same verdict and numbers for the same
release, claim and seed — a correct Gaussian, a wrong Laplace and randomized response."""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cli_runs import run

import dpkit
from dpkit.audits.defaults import AUDIT_DEFAULTS
from dpkit.reports.encoding import to_jsonable

MECHANISMS = """
import numpy as np

SIGMA = 3.730631635  # the σ of (1, 1e-5)-DP at Δ = 1


def gaussian(dataset, rng, n):
    return np.sum(dataset) + SIGMA * rng.standard_normal((n, 1))


def laplace_half(dataset, rng, n):  # b = 1/2: ε = 2, claimed 1
    return np.sum(dataset) + rng.laplace(0.0, 0.5, (n, 1))


def rr(dataset, rng, n):  # randomized response on the record's bit: ε = log 3
    bit = int(dataset[0])
    keep = rng.random(n) < 0.75
    return np.where(keep, bit, 1 - bit).astype(float)[:, None]


PAIR = ([0.0], [1.0])
"""

#: Each release, the claim's options on the command line, the same claim in Python.
CASES = {
    "gaussian": (["--epsilon", "1", "--delta", "1e-5"], dpkit.Claim.dp(1.0, 1e-5)),
    "laplace_half": (["--epsilon", "1", "--delta", "0"], dpkit.Claim.dp(1.0, 0.0)),
    "rr": (["--epsilon", "1.0986123", "--delta", "0"], dpkit.Claim.dp(1.0986123, 0.0)),
}
#: What only the command line's JSON adds: how many pairs, which was the strongest, where the runs went.
CLI_ONLY = ("pairs", "strongest_pair", "executor")


@pytest.fixture(scope="module")
def mechanisms(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ModuleType]:
    path = tmp_path_factory.mktemp("doors") / "mechs.py"
    path.write_text(MECHANISMS, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("doors_mechs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def _cli(capsys: pytest.CaptureFixture[str], path: Path, name: str, *options: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run(
        capsys, "audit", "--target", f"{path}:{name}", "--neighbours", f"{path}:PAIR", *options, "--json"
    )
    assert code in (0, 1), err
    return code, json.loads(out)


def _python(module: ModuleType, name: str, claim: Any, **options: Any) -> Any:
    return dpkit.audit(getattr(module, name), *module.PAIR, claim=claim, **options)


def test_both_doors_take_their_defaults_from_one_place() -> None:
    from dpkit.audits.engine import audit_pair, audit_pairs
    from dpkit.audits.sequential import audit_sequential
    from dpkit.commands.audit.command import audit as command

    for function in (audit_pair, audit_sequential):
        params = inspect.signature(function).parameters
        assert params["runs"].default == AUDIT_DEFAULTS.runs
        assert params["chunk_size"].default == AUDIT_DEFAULTS.chunk_size
    for function in (audit_pair, audit_sequential, audit_pairs):
        params = inspect.signature(function).parameters
        assert params["seed"].default == AUDIT_DEFAULTS.seed
        assert params["alpha"].default == AUDIT_DEFAULTS.alpha
        assert params["attack"].default == AUDIT_DEFAULTS.attack
    options = {
        p.name: p.default()
        for p in command.params
        if p.name in ("trials", "chunk_size", "seed", "attack", "confidence")
    }
    assert options["trials"] == AUDIT_DEFAULTS.runs and options["chunk_size"] == AUDIT_DEFAULTS.chunk_size
    assert options["seed"] == AUDIT_DEFAULTS.seed and options["attack"] == AUDIT_DEFAULTS.attack
    assert options["confidence"] == AUDIT_DEFAULTS.confidence == 1.0 - AUDIT_DEFAULTS.alpha


@pytest.mark.parametrize("name", list(CASES))
def test_the_same_audit_from_python_and_from_the_command_line(
    name: str, mechanisms: tuple[Path, ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    path, module = mechanisms
    flags, claim = CASES[name]
    code, cli = _cli(capsys, path, name, *flags, "--trials", "2000", "--seed", "3")
    result = _python(module, name, claim, runs=2000, seed=3)
    assert code == (1 if result.verdict == "violation" else 0)
    assert {k: v for k, v in cli.items() if k not in CLI_ONLY} == to_jsonable(result.to_dict())
    assert result.target == name and name in result._repr_html_()  # the notebook view names what it audited


@pytest.mark.slow
def test_a_correct_gaussian_is_consistent_from_both_doors_at_their_defaults(
    mechanisms: tuple[Path, ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    path, module = mechanisms
    flags, claim = CASES["gaussian"]
    _, cli = _cli(capsys, path, "gaussian", *flags)
    result = _python(module, "gaussian", claim)
    assert result.verdict == cli["verdict"] == "consistent"
    assert result.runs == cli["runs"] == AUDIT_DEFAULTS.runs
    assert {k: v for k, v in cli.items() if k not in CLI_ONLY} == to_jsonable(result.to_dict())
    assert math.isclose(result.epsilon_estimate, 1.0, rel_tol=0.15)
