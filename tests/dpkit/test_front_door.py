"""``dpkit.audit``, the one front door: every kind of target in every mode gives a result with the same headline
fields, a JSON-ready ``to_dict()`` and a verdict table for notebooks; options that do not apply are refused by
name; the CLI goes through the same door."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_runs import run_json

import dpkit
from dpkit.algorithms import registry
from dpkit.audits.rl import default_setting
from dpkit.audits.summary import HEADLINE, AuditSummary
from dpkit.loading import load_object

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ldp_agent.py"
ALGORITHM = "ldp-ucrl-vtr"
SMALL_RL = {"runs": 200, "position": "first", "seed": 1}
CLAIM = dpkit.Claim.gdp(1.0)
GAUSSIAN = {"claim": CLAIM, "runs": 2000, "attack": "gaussian-lr-fitted", "seed": 0}


def _release(data: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    return (float(np.sum(data)) + rng.normal(0.0, 1.0, n))[:, None]


def _vector_release(data: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    total = np.sum(np.asarray(data, dtype=float).reshape(-1, 4), axis=0)
    return total + rng.normal(0.0, 1.0, (n, 4))


CANARIES = [np.eye(4)[i % 4] for i in range(8)]


def _check(result: Any, *, positions: bool = False) -> dict[str, Any]:
    """The headline every result has; returns it."""
    assert isinstance(result, AuditSummary)
    head = result.headline()
    assert tuple(head) == HEADLINE
    assert head["verdict"] in ("violation", "consistent", "inconclusive")
    assert isinstance(head["claim"], str) and head["claim"]
    assert head["epsilon_lower"] >= 0.0
    assert head["runs"] >= 1 and head["runs_used"] >= 1
    assert (head["positions"] is not None) == positions
    json.dumps(head)
    json.dumps(result.to_dict())
    assert result.to_dict()["verdict"] == result.verdict
    table = result._repr_html_()
    assert table.startswith('<div class="dpkit-audit-result"') and "<table" in table
    assert f">{result.verdict}</span>" in table and "<style" not in table  # inline styles: a notebook keeps them
    text = repr(result)
    assert text == str(result) and text.startswith(f"{type(result).__name__}: {result.verdict}")
    assert len(text.splitlines()) <= 8 and "claim" in text and "estimate" in text and "runs" in text
    return head


@pytest.fixture
def agent() -> Any:
    factory = load_object("--agent", f"{EXAMPLE}:make_agent")
    yield factory
    for name in ("make_agent", "my_agent"):
        if name in registry.names():
            registry.unregister(name)


# -- a release function


def test_a_release_in_each_mode() -> None:
    fixed = dpkit.audit(_release, [0.0], [1.0], **GAUSSIAN)
    assert type(fixed).__name__ == "AuditResult" and _check(fixed)["runs_used"] == 2000
    assert fixed.epsilon_estimate is not None
    sequential = dpkit.audit(_release, [0.0], [1.0], mode="sequential", **GAUSSIAN)
    assert type(sequential).__name__ == "SequentialResult"
    head = _check(sequential)
    assert head["runs_used"] <= head["runs"]
    pairs = dpkit.audit(_release, pairs=[([0.0], [1.0]), ([0.0], [0.5])], **GAUSSIAN)
    assert type(pairs).__name__ == "PairsResult" and _check(pairs)["runs_used"] == 4000
    one_run = dpkit.audit(_vector_release, mode="one-run", canaries=CANARIES, claim=dpkit.Claim.gdp(1.0))
    assert type(one_run).__name__ == "OneRunResult"
    assert _check(one_run)["runs"] == 1 and one_run.epsilon_estimate is None
    with_data = dpkit.audit(_vector_release, [np.zeros(4)], mode="one-run", canaries=CANARIES, claim=one_run.claim)
    assert with_data.canaries == 8


def test_the_door_gives_what_the_function_beneath_gives() -> None:
    from dpkit.audits.engine import audit_pair

    door = dpkit.audit(_release, [0.0], [1.0], **GAUSSIAN).to_dict()
    assert door == audit_pair(_release, [0.0], [1.0], **GAUSSIAN).to_dict()


def test_the_retired_sequential_flag_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="mode='sequential'"):
        dpkit.audit(_release, [0.0], [1.0], sequential=True, **GAUSSIAN)


def test_the_renamed_and_second_doors_still_answer_with_a_warning() -> None:
    from dpkit.audits import rl
    from dpkit.audits.rl import sequential as rl_sequential

    with pytest.warns(DeprecationWarning, match="RlPositionsResult"):
        assert dpkit.RlPositionsAudit is rl.RlPositionsResult
    with pytest.raises(AttributeError, match="RlPositionsAudit"):
        _ = rl.RlPositionsAudit
    with pytest.warns(DeprecationWarning, match="RlSequentialResult"):
        assert rl_sequential.RlSequentialAudit is rl_sequential.RlSequentialResult
    with pytest.raises(AttributeError, match="NoSuchName"):
        _ = rl_sequential.NoSuchName
    with pytest.warns(DeprecationWarning, match="audit_pair"):
        from dpkit.audits import audit as old_name
    from dpkit.audits import audit_pair

    assert old_name is audit_pair


@pytest.mark.parametrize(
    ("call", "error", "needle"),
    [
        (
            lambda: dpkit.audit(_release, [0.0], [1.0], mode="batch", **GAUSSIAN),
            ValueError,
            "fixed, sequential, one-run",
        ),
        (lambda: dpkit.audit(_release, [0.0], [1.0], canaries=3, **GAUSSIAN), TypeError, "'canaries'"),
        (lambda: dpkit.audit(_release, [0.0], [1.0], mode="sequential", plans=True, **GAUSSIAN), TypeError, "'plans'"),
        (lambda: dpkit.audit(_release, [0.0], [1.0], on_look=print, **GAUSSIAN), TypeError, "'on_look'"),
        (lambda: dpkit.audit(_release, [0.0], **GAUSSIAN), TypeError, "two datasets"),
        (lambda: dpkit.audit(_release, pairs=[([0.0], [1.0])], episodes=3, **GAUSSIAN), TypeError, "'episodes'"),
        (
            lambda: dpkit.audit(
                _vector_release, [0.0], [1.0], mode="one-run", canaries=CANARIES, claim=GAUSSIAN["claim"]
            ),
            TypeError,
            "one dataset",
        ),
        (
            lambda: dpkit.audit(_vector_release, mode="one-run", canaries=CANARIES, claim=CLAIM, runs=9),
            TypeError,
            "'runs'",
        ),
        (lambda: dpkit.audit(3.0, [0.0], [1.0]), TypeError, "release function"),
    ],
)
def test_what_does_not_apply_is_refused_by_name(call: Any, error: type[Exception], needle: str) -> None:
    with pytest.raises(error, match=needle.replace("(", r"\(")):
        call()


# -- a registered algorithm, an agent, a setting


def test_an_algorithm_in_each_mode() -> None:
    fixed = dpkit.audit(ALGORITHM, **SMALL_RL)
    assert type(fixed).__name__ == "RlPositionsResult"
    assert _check(fixed, positions=True)["positions"] == [{"position": "first", "verdict": fixed.verdict}]
    with pytest.warns(DeprecationWarning, match="one door"):
        assert fixed.to_dict() == dpkit.audit_algorithm(ALGORITHM, **SMALL_RL).to_dict()
    sequential = dpkit.audit(ALGORITHM, mode="sequential", **SMALL_RL)
    assert type(sequential).__name__ == "RlSequentialResult"
    _check(sequential, positions=True)
    one_run = dpkit.audit(ALGORITHM, mode="one-run", canaries=300, seed=1)
    assert type(one_run).__name__ == "RlOneRunResult" and _check(one_run)["runs"] == 1


def test_a_setting_is_audited_at_its_positions() -> None:
    setting = default_setting(ALGORITHM, episodes=4)
    result = dpkit.audit(setting, runs=200, positions=["first"], seed=1)
    assert result.setting.episodes == 4  # the headline position's setting
    _check(result, positions=True)
    with pytest.raises(TypeError, match="'episodes'"):
        dpkit.audit(setting, runs=200, episodes=3)
    with pytest.raises(ValueError, match="one-run"):
        dpkit.audit(setting, mode="one-run")


def test_an_agent_is_registered_and_audited(agent: Any) -> None:
    result = dpkit.audit(agent, name="my_agent", **SMALL_RL)
    assert "my_agent" in registry.names() and result.setting.algorithm == "my_agent"
    _check(result, positions=True)


@pytest.mark.parametrize(
    ("options", "error", "needle"),
    [
        ({"mode": "sideways"}, ValueError, "fixed, sequential, one-run"),
        ({"mode": "one-run", "runs": 200}, TypeError, "'runs'"),
        ({"mode": "sequential", "canaries": 30}, TypeError, "'canaries'"),
        ({"colour": "blue"}, TypeError, "'colour'"),
        ({"position": "first", "positions": ["first"]}, TypeError, "not both"),
    ],
)
def test_an_algorithms_options_that_do_not_apply_are_refused(
    options: dict[str, Any], error: type[Exception], needle: str
) -> None:
    with pytest.raises(error, match=needle):
        dpkit.audit(ALGORITHM, **options)


def test_an_unknown_algorithm_gets_the_registrys_suggestion() -> None:
    with pytest.raises(ValueError, match="did you mean 'ldp-ucrl-vtr'"):
        dpkit.audit("ldp-ucrl-vtx", runs=200)
    with pytest.raises(TypeError, match="no datasets"):
        dpkit.audit(ALGORITHM, [0.0], [1.0])


def test_the_cli_and_the_door_agree(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "audit", ALGORITHM, "--runs", "200", "--position", "first", "--seed", "1")
    door = dpkit.audit(ALGORITHM, **SMALL_RL)
    assert out["verdict"] == door.verdict and out["mu_lower"] == door.to_dict()["mu_lower"]


def test_the_notebook_table_is_the_reports_verdict_row() -> None:
    """A result's table shows the lines the report's verdict table writes for it (the same functions)."""
    import html

    from dpkit.audits.summary import POWER_RATIO_NEEDED
    from dpkit.reports import audit_row, job, notebook_view, verdict_views

    assert verdict_views.evidence_lines is audit_row.evidence_lines is notebook_view.evidence_lines
    assert verdict_views.implementation_text is audit_row.implementation_text is notebook_view.implementation_text
    assert job.audit_columns is audit_row.audit_columns is notebook_view.audit_columns
    result = dpkit.audit(ALGORITHM, **SMALL_RL)
    row = audit_row.audit_columns(result.to_dict(), "tight", POWER_RATIO_NEEDED)
    table = result._repr_html_()
    assert table == notebook_view.verdict_table_html(result)  # the view dpkit registers (dpkit.notebook_views)
    for line in [*audit_row.evidence_lines(row), audit_row.implementation_text(row)]:
        assert html.escape(line) in table


def test_the_door_is_typed_per_target_kind() -> None:
    """``dpkit.audit`` declares, per kind of target and mode, the result it returns (mypy reads the overloads)."""
    from typing import get_overloads

    import dpkit.facade

    returns = [o.__annotations__["return"] for o in get_overloads(dpkit.facade.audit)]
    assert returns == [
        "RlPositionsResult",
        "RlSequentialResult",
        "RlOneRunResult",
        "PairsResult",
        "OneRunResult",
        "AuditSummary",
    ]
    assert dpkit.facade.audit.__annotations__["return"] == "AuditSummary"
