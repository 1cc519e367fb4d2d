"""What `dpkit report` says while it works (reports/job.py, dpkit/render.py, dpkit/commands/report_estimate.py): the
parts of each audit named as they start, its progress in full, the estimate up front; and the audits' runs on any
executor give the same result."""

from __future__ import annotations

import pytest

from dpkit.algorithms.executors import AutoExecutor
from dpkit.audits.rl import plan_probe_runs, positions
from dpkit.commands.report_estimate import audits_estimate
from dpkit.reports.config import parse_config
from dpkit.reports.job import audit_parts, audit_section, audit_setting_of, run_audit
from dpkit.stages import StageClock

CONFIG = {
    "title": "progress",
    "seeds": 1,
    "workers": 1,
    "algorithm": [
        {"name": "ldp-ucrl-vtr", "states": 2, "episodes": 20, "epsilon": 1.0, "delta": 0.1, "audit": {"runs": 24}},
        {"name": "rlsvi", "states": 2, "episodes": 20, "delta": 1e-5, "audit": {"runs": 300, "position": "last"}},
        {
            "name": "private-linopt-vi",
            "states": 2,
            "episodes": 20,
            "epsilon": 1.0,
            "delta": 0.1,
            "audit": {"enabled": False},
        },
    ],
}


@pytest.fixture(scope="module")
def config():
    return parse_config(CONFIG, "progress.toml")


def test_the_parts_are_the_positions_then_the_plan_probe_with_every_run(config) -> None:
    ldp, rlsvi, off = config.algorithms
    setting = audit_setting_of(ldp)
    names = list(positions(setting))
    parts = audit_parts(ldp)
    assert [p.label for p in parts[: len(names)]] == [
        f"position {n} ({i + 1}/{len(names)})" for i, n in enumerate(names)
    ]
    probe = plan_probe_runs(setting, 24)
    # the runs of `dpkit audit`'s own progress bar: 2 × (runs × positions + probe)
    assert sum(p.runs for p in parts) == 2 * (24 * len(names) + probe)
    assert [p.label for p in audit_parts(rlsvi)] == ["position last (1/1)"]  # a pinned position: no plan probe
    assert audit_parts(off) == ()


def test_an_audit_names_each_part_as_it_starts_and_advances_by_one_in_all(config) -> None:
    ldp = config.algorithms[0]
    said: list[str] = []
    steps: list[float] = []
    section = audit_section(ldp, 0, steps.append, status=said.append)
    assert section["available"] and sum(steps) == pytest.approx(1.0) and all(k > 0 for k in steps)
    assert said == [f"ldp-ucrl-vtr: {p.label}" for p in audit_parts(ldp)]


def test_the_audits_runs_give_one_result_on_any_executor(config) -> None:
    rlsvi = config.algorithms[1]  # 300 runs: two chunks per dataset, work left to move after the first
    with AutoExecutor(workers=2, slow_seconds=0.0) as auto:
        moved = run_audit(rlsvi, 0, executor=auto)
        assert auto.name == "processes"
    assert moved == run_audit(rlsvi, 0)


def test_the_estimate_names_the_runs_and_the_slowest(config) -> None:
    note = audits_estimate(config)
    runs = sum(p.runs for a in config.algorithms for p in audit_parts(a))
    assert note is not None and note.startswith("expected time: audits about ")
    assert f"{runs:,} runs" in note and "slowest " in note and "simulations beside them" in note


def test_the_clock_passes_on_what_a_stage_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dpkit.stages.time.perf_counter", lambda: 104.5)
    seen: list[tuple[str, str, float]] = []
    clock = StageClock({"audits": 2}, start=100.0, on_status=lambda *a: seen.append(a))
    clock.status("audits", "rlsvi: position first (1/3)")
    assert seen == [("audits", "rlsvi: position first (1/3)", 4.5)]
    with pytest.raises(ValueError, match="unknown stage 'x'"):
        clock.status("x", "?")
