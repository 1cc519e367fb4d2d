"""report.json as pydantic models: a real report parses and round-trips, the generated schema (the checked-in
reports/report.schema.json, kept equal by tests/reports/test_files.py) accepts it, and a report that does not
fit is refused by the model and the schema alike, in one line naming the key and the value."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import jsonschema
import pytest

from dpkit.accountant import VARIANTS
from dpkit.reports.config import parse_config
from dpkit.reports.encoding import to_jsonable
from dpkit.reports.job import compute_report
from dpkit.reports.models import METHOD_KEYS, ReportJson, report_schema, validate_report
from dpkit.reports.render import report_json
from dpkit.reports.schemas import schemas

#: A tree-counter algorithm audited, RLSVI not: every kind of section, in a few seconds.
TINY = {
    "seeds": 2,
    "deltas": [1e-6],
    "algorithm": [
        {
            "name": "private-linopt-vi",
            "episodes": 12,
            "epsilon": 1.0,
            "delta": 0.1,
            "audit": {"runs": 6, "episodes": 2},
        },
        {"name": "rlsvi", "episodes": 12, "delta": 1e-5, "episode_grid": [4, 12], "audit": {"enabled": False}},
    ],
}


#: The schema's validator, built once (``jsonschema.validate`` checks the schema itself on every call: ~0.4 s).
VALIDATOR = jsonschema.Draft202012Validator(report_schema())


def _refused_by_model_and_schema(report: dict[str, Any], change: Callable[[Any], None], message: str) -> None:
    """``report`` changed by ``change`` is refused by the model in one line naming ``message``, and by the schema."""
    bad = copy.deepcopy(report)
    change(bad)
    with pytest.raises(ValueError) as info:
        validate_report(bad)
    assert message in str(info.value) and str(info.value).startswith("report.json: ") and "\n" not in str(info.value)
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(bad)


@pytest.fixture(scope="module")
def tiny() -> dict[str, Any]:
    """The report of :data:`TINY` as report.json holds it."""
    data = compute_report(parse_config(TINY, "tiny.toml"), command=["dpkit", "report", "--config", "tiny.toml"])
    return json.loads(report_json(data))


def test_the_checked_in_schema_is_generated_from_the_models() -> None:
    checked_in = json.loads(resources.files("dpkit.reports").joinpath("report.schema.json").read_text("utf-8"))
    assert checked_in == report_schema() == schemas()["report.schema.json"]
    jsonschema.Draft202012Validator.check_schema(checked_in)
    assert checked_in["title"] == "dpkit report.json" and checked_in["additionalProperties"] is False


def test_the_paper_claims_words_are_the_jobs() -> None:
    from typing import get_args

    from dpkit.reports.job import PaperClaim as Verdicts
    from dpkit.reports.model_types import PaperClaim
    from dpkit.reports.verdict_views import PAPER_CLAIM_CSS

    assert get_args(PaperClaim) == tuple(Verdicts) and set(PAPER_CLAIM_CSS) == set(Verdicts)


def test_the_methods_are_the_accountants() -> None:
    assert METHOD_KEYS == tuple(key for key, _, _ in VARIANTS)


def test_a_real_report_parses_and_round_trips(tiny: dict[str, Any]) -> None:
    report = validate_report(tiny)
    assert isinstance(report, ReportJson)
    assert to_jsonable(report) == tiny  # every key of the report is in the model, none renamed or dropped
    VALIDATOR.validate(tiny)
    first, second = report.algorithms
    assert first.tree is not None and first.rlsvi is None and first.audit.available
    assert second.tree is None and second.rlsvi is not None and not second.audit.available
    assert second.rlsvi.episodes == [4, 12] and len(second.rlsvi.mu_run) == 2
    assert [row.algorithm for row in report.summary] == ["private-linopt-vi", "rlsvi"]
    assert report.summary[1].verdict is None and report.summary[1].audited_epsilon_lower is None


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value

    return change


def _drop(path: tuple[Any, ...]) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]

    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_drop(("summary", 0, "noise_ratio")), "summary[0].noise_ratio is required"),
        (_set(("summary", 0, "noise_ratio"), None), "summary[0].noise_ratio must be a finite number, got None"),
        (_set(("summary", 0, "noise_ratio"), -1.0), "summary[0].noise_ratio must be > 0.0, got -1.0"),
        (_set(("summary", 0, "colour"), "red"), "unknown key 'summary[0].colour'"),
        (_set(("format",), 2), "format must be 1, got 2"),
        (_set(("algorithms",), []), "report.json: algorithms and ledgers must not both be empty"),
        (_set(("algorithms", 0, "audit", "result"), None), "algorithms[0].audit.result must be an object, got None"),
        (_set(("algorithms", 1, "audit", "result"), {}), "algorithms[1].audit.result must be null, got {}"),
        (_set(("algorithms", 1, "audit", "available"), "no"), "algorithms[1].audit.available must be one of"),
        (_drop(("algorithms", 0, "audit", "result", "roc")), "algorithms[0].audit.result.roc is required"),
        (
            _set(("algorithms", 0, "audit", "result", "audit", "tests", 0, "fpr"), 2),
            "algorithms[0].audit.result.audit.tests[0].fpr must be <= 1.0, got 2",
        ),
        (_drop(("algorithms", 0, "epsilon_curves", "methods", "pld")), "methods misses the method 'pld'"),
        (_set(("algorithms", 0, "tree"), []), "algorithms[0].tree must be an object, got []"),
        (_set(("algorithms", 1, "settings", "episodes"), -3), "algorithms[1].settings.episodes must be >= 1, got -3"),
        (_set(("algorithms", 0, "ledger", "delta"), 1.5), "algorithms[0].ledger.delta must be < 1.0, got 1.5"),
        (_set(("provenance", "versions", "numpy"), 3), "provenance.versions.numpy must be a string, got 3"),
        (_set(("provenance", "config", "quick"), "no"), "provenance.config.quick must be true or false, got 'no'"),
    ],
)
def test_a_report_that_does_not_fit_is_refused_by_model_and_schema(
    tiny: dict[str, Any], change: Callable[[Any], None], message: str
) -> None:
    _refused_by_model_and_schema(tiny, change, message)


#: :data:`TINY`'s audited algorithm audited sequentially at a σ far below the tight one: a violation in a few batches.
TINY_SEQUENTIAL = {
    "seeds": 2,
    "deltas": [1e-6],
    "algorithm": [
        {
            "name": "private-linopt-vi",
            "episodes": 12,
            "epsilon": 1.0,
            "delta": 0.1,
            "audit": {"runs": 200, "episodes": 2, "sigma": 0.1, "mode": "sequential"},
        }
    ],
}


@pytest.fixture(scope="module")
def tiny_sequential() -> dict[str, Any]:
    """The report of :data:`TINY_SEQUENTIAL` as report.json holds it."""
    data = compute_report(parse_config(TINY_SEQUENTIAL, "tiny.toml"), command=["dpkit", "report"])
    return json.loads(report_json(data))


def test_a_sequential_report_parses_and_round_trips(tiny_sequential: dict[str, Any]) -> None:
    report = validate_report(tiny_sequential)
    assert to_jsonable(report) == tiny_sequential
    VALIDATOR.validate(tiny_sequential)
    result = report.algorithms[0].audit.result  # type: ignore[union-attr]
    assert type(result).__name__ == "SequentialAuditResult" and result.positions[0].looks


_RESULT = ("algorithms", 0, "audit", "result")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_drop((*_RESULT, "budget")), "algorithms[0].audit.result.budget is required"),
        (_drop((*_RESULT, "positions", 0, "looks")), "algorithms[0].audit.result.positions[0].looks is required"),
        (
            _set((*_RESULT, "positions", 0, "verdict"), "maybe"),
            "algorithms[0].audit.result.positions[0].verdict must be 'violation', 'consistent', 'inconclusive' or "
            "'stopped', got 'maybe'",
        ),
        (
            _set((*_RESULT, "positions", 0, "looks", 0, "phase"), "middle"),
            "algorithms[0].audit.result.positions[0].looks[0].phase must be 'learning' or 'final', got 'middle'",
        ),
        (_set((*_RESULT, "threshold"), -1.0), "algorithms[0].audit.result.threshold must be > 0.0, got -1.0"),
        (_set((*_RESULT, "positions"), []), "algorithms[0].audit.result.positions must not be empty"),
        (_set(("summary", 0, "audit_mode"), "both"), "summary[0].audit_mode must be 'fixed' or 'sequential'"),
        (_drop(("summary", 0, "audit_runs_used")), "summary[0].audit_runs_used is required"),
    ],
)
def test_a_sequential_result_that_does_not_fit_is_refused_by_model_and_schema(
    tiny_sequential: dict[str, Any], change: Callable[[Any], None], message: str
) -> None:
    _refused_by_model_and_schema(tiny_sequential, change, message)


def test_keys_from_the_ledger_and_the_audit_may_grow(tiny: dict[str, Any]) -> None:
    """The ledger and the audit's result are what dpkit ledger/audit --json print: keys they add are allowed."""
    grown = copy.deepcopy(tiny)
    grown["algorithms"][0]["ledger"]["new_figure"] = 1.0
    grown["algorithms"][0]["audit"]["result"]["new_figure"] = [1, 2]
    grown["provenance"]["versions"]["new-package"] = None
    assert validate_report(grown).algorithms[0].ledger.model_extra == {"new_figure": 1.0}
    VALIDATOR.validate(grown)
