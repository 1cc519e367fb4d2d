"""What `dpkit report` says while it works (reports/job.py, dpkit/render.py, dpkit/commands/report_estimate.py): the
parts of each audit named as they start, its progress in full, the estimate up front; and the audits' runs on any
executor give the same result."""

from __future__ import annotations

import pytest

from dpkit.algorithms.executors import AutoExecutor
from dpkit.audits.rl import plan_probe_runs, positions
from dpkit.commands.report_calibration import RLSVI_KEY, UnitCosts, calibrate
from dpkit.commands.report_estimate import Machine, estimate_line, figure_count, report_estimate
from dpkit.reports.config import parse_config
from dpkit.reports.job import audit_parts, audit_section, audit_setting_of, report_tasks, run_audit, stage_totals
from dpkit.reports.regret_runs import RegretTask, RlsviTask
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


def _costs(slowdown: float = 1.0) -> UnitCosts:
    return UnitCosts(
        ledger=0.5,
        audit_run={"ldp-ucrl-vtr": 1e-3, "rlsvi": 4e-3},
        audit_part=0.125,
        episode={"ldp-ucrl-vtr": 2e-3, "rlsvi": 1e-3, "private-linopt-vi": 3e-3, RLSVI_KEY: 5e-4},
        figure=0.25,
        slowdown=slowdown,
    )


def test_the_estimate_is_the_configs_work_at_each_units_cost(config) -> None:
    """Issue 54: the estimate covers all of the work (audits, simulations, ledgers, figures), counted from what the
    config asks for — runs × positions, episodes × seeds × σ — at each kind of unit's cost, not from constants."""
    estimate = report_estimate(config, _costs())
    runs = {a.name: sum(p.runs for p in audit_parts(a)) for a in config.algorithms}
    assert estimate.runs == sum(runs.values())
    parts = sum(len(audit_parts(a)) for a in config.algorithms)  # each with its own cost: its attacks, its tests
    assert estimate.work["audits"] == pytest.approx(1e-3 * runs["ldp-ucrl-vtr"] + 4e-3 * runs["rlsvi"] + 0.125 * parts)
    assert estimate.episodes == stage_totals(config)["simulations"]
    tasks = [t for t in report_tasks(config) if isinstance(t, RegretTask)]
    regret = sum(_costs().episode[t.algorithm] * t.experiment.episodes * len(t.seeds) for t in tasks)
    rlsvi = sum(t.episodes for t in report_tasks(config) if isinstance(t, RlsviTask)) * 5e-4
    assert estimate.work["simulations"] == pytest.approx(regret + rlsvi)
    # ldp-ucrl-vtr: ε(δ), the audit's two, regret; rlsvi: those and its own; linopt: ε(δ), tree, regret (no audit)
    assert estimate.figures == figure_count(config) == 4 + 5 + 3
    assert estimate.work["figures"] == pytest.approx(0.25 * estimate.figures)
    assert estimate.work["ledgers"] == pytest.approx(0.5 * len(config.algorithms))
    # one worker: everything in this process, one after another (at least the work itself, at a whole core)
    assert estimate.seconds >= sum(estimate.work.values())
    # four times the runs: the audits' work four times over
    more = parse_config(
        {
            **CONFIG,
            "algorithm": [
                {**a, "audit": {**a["audit"], "runs": 4 * a["audit"]["runs"]}} if "runs" in a["audit"] else a
                for a in CONFIG["algorithm"]
            ],
        },
        "more.toml",
    )
    runs_work = estimate.work["audits"] - 0.125 * parts  # the parts' own cost does not grow with their runs
    assert report_estimate(more, _costs()).work["audits"] == pytest.approx(4 * runs_work + 0.125 * parts)


def test_a_loaded_machine_stretches_the_estimate(config) -> None:
    """Where one process got a quarter of a core while timing, the same work takes four times as long; where the
    kernel shares the CPU by session (Linux's autogroup), the report's workers share that quarter."""
    quiet = report_estimate(config, _costs(1.0), Machine(2, 1.0, 1.0, grouped=True))
    loaded = report_estimate(config, _costs(4.0), Machine(2, 0.25, 7.0, grouped=True))
    assert loaded.work == quiet.work  # (the CPU this process has spent so far moves a little between the two)
    assert loaded.seconds == pytest.approx(4 * quiet.seconds, rel=0.01)
    assert Machine(2, 0.25, 7.0, grouped=True).throughput(4) == pytest.approx(0.25)
    assert Machine(2, 1.0, 0.0, grouped=True).throughput(4) == Machine(2, 1.0, 0.0, grouped=False).throughput(4) == 2
    assert Machine(2, 0.25, 7.0, grouped=False).throughput(1) == pytest.approx(0.25)  # a fair share per process
    assert Machine(2, 0.25, 7.0, grouped=False).throughput(4) == pytest.approx(8 / 11)
    machine = Machine.now(4.0)
    assert machine.share == pytest.approx(0.25) and machine.throughput(1) == pytest.approx(0.25)


def test_the_estimate_line_says_all_of_it(config) -> None:
    line = estimate_line(report_estimate(config, _costs()))
    assert line.startswith("expected time: about ") and " in all" in line
    for word in ("runs", "episodes", "figures", "ledgers", "core"):
        assert word in line


def test_every_kind_of_unit_is_timed(config) -> None:
    costs = calibrate(config)
    assert set(costs.audit_run) == {"ldp-ucrl-vtr", "rlsvi"}  # linopt's audit is disabled
    assert set(costs.episode) == {"ldp-ucrl-vtr", "rlsvi", "private-linopt-vi", RLSVI_KEY}
    assert all(v > 0 for v in [*costs.audit_run.values(), *costs.episode.values(), costs.ledger, costs.figure])
    assert costs.slowdown >= 1.0 and costs.start > 0 and costs.audit_part >= 0


def test_a_task_sends_its_episodes_as_it_plays(monkeypatch: pytest.MonkeyPatch, config) -> None:
    """Issue 54: the simulations' bar sat at 0 % and jumped when a batch of seeds ended. A task run in a worker
    sends its episodes as they are played, and the feed advances the stage by exactly each task's episodes."""
    import queue as queues

    from dpkit.reports import task_progress

    tasks = report_tasks(config)
    task = next(t for t in tasks if isinstance(t, RegretTask))
    sent: queues.SimpleQueue = queues.SimpleQueue()
    monkeypatch.setattr(task_progress, "_SEND_EVERY", 0.0)
    task_progress.start_worker_feed(sent)
    try:
        task_progress.run_reported(0, task)
    finally:
        task_progress.start_worker_feed(None)
    messages = []
    while not sent.empty():
        messages.append(sent.get())
    assert len(messages) >= task.experiment.episodes  # at least one message an episode (of all seeds together)
    assert {i for i, _ in messages} == {0} and sum(k for _, k in messages) == task_progress.task_episodes(task)
    advanced: list[float] = []
    feed = task_progress.EpisodeFeed([task, task], queues.SimpleQueue(), advanced.append)
    feed._pay(0, 10)
    feed.finish(0)
    feed._pay(0, 5)  # a report that arrives after its task ended: dropped
    feed.finish(1)  # a task that reported nothing (an RLSVI run): all of it at its end
    assert advanced == [10, task_progress.task_episodes(task) - 10, task_progress.task_episodes(task)]


@pytest.mark.slow
def test_a_pool_advances_the_simulations_by_their_episodes(config) -> None:
    from dpkit.reports.job import _execute

    tasks = report_tasks(config)
    advanced: list[float] = []
    results, _ = _execute(tasks, 2, advanced.append, lambda: None)
    assert len(results) == len(tasks) and sum(advanced) == stage_totals(config)["simulations"]


def test_the_clock_passes_on_what_a_stage_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dpkit.stages.time.perf_counter", lambda: 104.5)
    seen: list[tuple[str, str, float]] = []
    clock = StageClock({"audits": 2}, start=100.0, on_status=lambda *a: seen.append(a))
    clock.status("audits", "rlsvi: position first (1/3)")
    assert seen == [("audits", "rlsvi: position first (1/3)", 4.5)]
    with pytest.raises(ValueError, match="unknown stage 'x'"):
        clock.status("x", "?")


def test_busy_processes_of_the_reports_own_session_share_the_cpu_per_process() -> None:
    """A busy process started from the report's own session runs in its autogroup: the kernel then shares the CPU per
    process between them, so the estimate must not read the report's workers as one group apart (which made it
    ~1.8× too long where a shell ran the report beside another job). The decision is read from the running
    processes' groups; the live part checks only that a child runs in its parent's group (what else runs on the
    machine, in other sessions, is not the test's to fix)."""
    import subprocess
    import sys
    import time

    from dpkit.commands.report_estimate import _apart, _autogroup

    assert _apart("7", ["7", "7", "9"]) is False  # busy work of the report's own session: shared per process
    assert _apart("7", ["7", "9", "9"]) is True  # most busy work in other sessions: the session's share
    assert _apart("7", []) is False and _apart("7", ["7", "9"]) is False
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        assert _autogroup(str(busy.pid)) == _autogroup("self")
    finally:
        busy.kill()
        busy.wait()
