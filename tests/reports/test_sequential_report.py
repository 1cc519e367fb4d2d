"""A report whose audit is sequential (issue 31, Build 5: ``mode = "sequential"``): the report runs the audit that
``dpkit audit ALGORITHM --sequential`` runs, report.json carries its result (the models and the schema check it), the
verdict row is filled from it — null where it has no figure —, and report.md and report.html say how it ended, with
the e-value figure and no ROC."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from markupsafe import escape

from dpkit.audits.rl import default_setting
from dpkit.audits.rl.sequential import audit_positions_sequential
from dpkit.reports.config import parse_config
from dpkit.reports.encoding import to_jsonable
from dpkit.reports.job import compute_report
from dpkit.reports.models import report_schema, validate_report
from dpkit.reports.render import figure_list, render_markdown, report_json, write_report


def _config(name: str, **audit: Any) -> dict[str, Any]:
    """One Private-LinOpt algorithm (its audit: one position, two users) audited sequentially with 200 runs."""
    entry = {"name": name, "episodes": 12, "epsilon": 1.0, "delta": 0.1}
    return {"seeds": 2, "deltas": [1e-6], "algorithm": [entry | {"audit": {"runs": 200, "episodes": 2} | audit}]}


#: σ = 0.1, far below the tight σ (3.8 to 272): a violation the sequential audit sees within its first batches.
VIOLATING = _config("private-linopt-vi", mode="sequential", sigma=0.1)
#: At the tight σ: a correct implementation, audited to the end of its budget.
CORRECT = _config("private-linopt-po", mode="sequential")


@pytest.fixture(scope="module")
def violating() -> tuple[dict[str, Any], list[float]]:
    """The report of :data:`VIOLATING` as report.json holds it, and the steps its audit stage advanced by."""
    steps: list[float] = []
    data = compute_report(
        parse_config(VIOLATING, "violating.toml"),
        command=["dpkit", "report", "--config", "violating.toml"],
        progress=lambda stage, k: steps.append(k) if stage == "audits" else None,
    )
    return json.loads(report_json(data)), steps


def test_a_violation_stops_early_with_fewer_runs_than_the_fixed_audit(violating: tuple[dict, list]) -> None:
    data, _ = violating
    section = data["algorithms"][0]
    assert section["settings"]["audit"]["mode"] == "sequential"
    assert section["audit"]["command"][-1] == "--sequential"
    result = section["audit"]["result"]
    assert result["sequential"] is True and result["verdict"] == "violation" and result["stopped_early"] is True
    assert result["runs_used"] < result["fixed_runs"] == 200
    (position,) = result["positions"]
    assert position["verdict"] == "violation" and position["e_value"] >= result["threshold"]
    assert [look["runs_used"] for look in position["looks"]][-1] == position["runs_used"] == result["runs_used"]


def test_the_result_is_what_dpkit_audit_sequential_prints(violating: tuple[dict, list]) -> None:
    """The report's result is the sequential audit's own dictionary (its command, with --json, prints the same)."""
    data, _ = violating
    setting = default_setting("private-linopt-vi", sigma=0.1, episodes=2, epsilon=1.0, delta=0.1)
    audit = audit_positions_sequential(setting, runs=200, seed=0)
    assert data["algorithms"][0]["audit"]["result"] == to_jsonable(audit.to_dict())


def test_the_verdict_row_is_filled_from_the_sequential_result(violating: tuple[dict, list]) -> None:
    """Its bounds, verdict, confidence and runs; no power, power needed or estimate: it has none (never made up)."""
    data, _ = violating
    row, result = data["summary"][0], data["algorithms"][0]["audit"]["result"]
    assert row["verdict"] == result["verdict"] and row["audit_confidence"] == result["confidence"]
    assert row["audited_mu_lower"] == result["mu_lower"] and row["audited_epsilon_lower"] == result["epsilon_lower"]
    assert (row["audit_mode"], row["audit_runs"], row["audit_runs_used"]) == ("sequential", 200, result["runs_used"])
    for key in ("audited_mu_estimate", "audited_epsilon_estimate", "audit_power_ratio", "audit_power_needed"):
        assert row[key] is None, key


def test_the_audit_stage_advances_to_one_and_never_beyond(violating: tuple[dict, list]) -> None:
    _, steps = violating
    assert all(k > 0 for k in steps) and len(steps) > 1  # as runs finish, then the rest of the budget it did not use
    assert sum(steps) == pytest.approx(1.0, abs=1e-12) and max(sum(steps[: i + 1]) for i in range(len(steps))) <= 1


def test_the_json_validates_against_the_models_and_the_schema(violating: tuple[dict, list]) -> None:
    data, _ = violating
    report = validate_report(data)
    assert report.algorithms[0].audit.result.sequential is True  # type: ignore[union-attr]
    jsonschema.Draft202012Validator(report_schema()).validate(data)


def test_the_markdown_states_the_sequential_mode_and_the_runs(violating: tuple[dict, list]) -> None:
    data, _ = violating
    result = data["algorithms"][0]["audit"]["result"]
    figs = figure_list(data)
    kinds = {f.kind for f in figs}
    assert "audit-evalue" in kinds and not kinds & {"audit-roc", "audit-tradeoff"}
    text = render_markdown(data, figs)
    used = result["runs_used"]
    assert (
        f"Sequential audit (anytime-valid): stopped after {used} runs per dataset at a violation, where the fixed "
        f"audit of this position spends 200 ({200 / used:.3g}× fewer)." in text
    )
    assert "No ROC or trade-off figure" in text and 'mode = "fixed"' in text
    assert result["epsilon_lower"] == 0 and "certifies its bound in the claim's unit, μ, only: nothing in ε" in text
    assert f"sequential, anytime-valid; ε ≥ {result['epsilon_lower']:.3g} certified (95%)" in text  # the verdict row
    assert f"{used} runs per dataset used (the fixed audit's: 200 per position)" in text
    assert "| position of the changed user | share | μ allowed | declared μ | runs used | e-value |" in text


@pytest.mark.slow
def test_a_correct_audit_runs_to_its_budget_and_every_file_says_so(tmp_path: Path) -> None:
    data = json.loads(report_json(compute_report(parse_config(CORRECT, "correct.toml"), command=["dpkit"])))
    result = data["algorithms"][0]["audit"]["result"]
    assert result["stopped_early"] is False and result["verdict"] != "violation"
    assert result["runs_used"] == result["budget"] <= 1.3 * result["runs"]
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    write_report(data, tmp_path)
    sentence = (
        f"Sequential audit (anytime-valid): ran to its budget of {result['budget']} runs per dataset, where the fixed "
        "audit's verdict test decided (the fixed audit of this position spends 200)."
    )
    assert sentence in (tmp_path / "report.md").read_text(encoding="utf-8")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert str(escape(sentence)) in html and 'class="badge stopped"' not in html
    pngs = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "figures").glob("*.png"))
    assert pngs == sorted(f.file for f in figure_list(data))
    assert "figures/private-linopt-po-audit-evalue.png" in pngs
