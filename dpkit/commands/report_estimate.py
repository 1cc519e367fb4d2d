"""What ``dpkit report`` says before it starts: how long the whole report will take — ledgers, simulations, audits
and figures together — from the work its config asks for and the cost of each kind of unit, timed here first.

:func:`~dpkit.commands.report_calibration.calibrate` times one small unit of each kind in this process, in CPU
seconds, and the share of a core this process gets now (the machine's load). :func:`report_estimate` multiplies the
config's counts — runs × positions, episodes × seeds × σ, figures — by those costs and spreads the simulations and
audits over the config's workers and the CPU the machine gives them (:class:`Machine`); :func:`estimate_line` says it
in one line.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpkit.audit_modes import AuditMode

from .report_calibration import RLSVI_KEY, UnitCosts


def _autogroup(pid: str) -> str | None:
    """The autogroup a process runs in (``/proc/PID/autogroup``), None where it cannot be read."""
    try:
        return Path(f"/proc/{pid}/autogroup").read_text(encoding="ascii").split()[0]
    except (OSError, IndexError):
        return None


def _running_groups() -> list[str | None]:
    """The autogroup of every running process but this one (``/proc/PID/stat`` state ``R``)."""
    pids = [p.name for p in Path("/proc").iterdir() if p.name.isdigit() and p.name != str(os.getpid())]
    groups = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state == "R":
            groups.append(_autogroup(pid))
    return groups


def _apart(mine: str | None, running: list[str | None]) -> bool:
    """Whether more of the running processes sit in other autogroups than in ``mine``."""
    same = sum(group == mine for group in running)
    return len(running) - same > same


def _grouped_apart() -> bool:
    """Whether the kernel shares the CPU between sessions first (Linux's autogroup) *and* the busy processes beside
    the report run in other sessions: then the report's workers share their session's part of the machine. Where the
    busy processes share the report's own group (a shell that ran both), the CPU is shared per process."""
    try:
        if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text(encoding="ascii").strip() != "1":
            return False
        running = _running_groups()
    except OSError:
        return False
    return _apart(_autogroup("self"), running)


@dataclass(frozen=True)
class Estimate:
    """The expected wall time of a report and the work behind it.

    Attributes:
        seconds: The expected wall seconds, from the start of the process to the report written.
        runs: The audits' runs (both datasets, every position).
        episodes: The simulations' episodes (every seed, σ and RLSVI run).
        figures: The figures drawn.
        work: CPU seconds of each kind: ``ledgers``, ``simulations``, ``audits``, ``figures``, ``starts``.
        machine: The CPU the machine gives the report now.
    """

    seconds: float
    runs: int
    episodes: int
    figures: int
    work: dict[str, float]
    machine: Machine


@dataclass(frozen=True)
class Machine:
    """How much CPU this machine gives the report now.

    Attributes:
        cores: The cores this process may run on.
        share: The share of a core one process of the report got while timing (1: a whole one).
        others: The busy processes beside the report's, read from that share, or where the report's process got a
            whole core from the processes runnable beside it while it was timed (else the load average).
        grouped: Whether the kernel shares the CPU between sessions first (Linux's autogroup): the report's workers
            are in its session, so together they get the session's part of the machine, not one part each.
    """

    cores: int
    share: float
    others: float
    grouped: bool

    @classmethod
    def now(cls, slowdown: float, running: list[int] | None = None) -> Machine:
        """This machine, with the slowdown one process of the report saw while timing.

        Args:
            slowdown: :attr:`UnitCosts.slowdown`.
            running: :attr:`UnitCosts.running` (None or empty: the load average).

        Returns:
            The machine.
        """
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        share = min(1.0, 1.0 / slowdown)
        if share < 0.95:  # part of a core: the others' load is what leaves it that share
            others = cores / share - 1.0
        else:  # a whole core: how many others ran beside it (as it ran, else over the last minute)
            load = sum(running) / len(running) if running else os.getloadavg()[0] if hasattr(os, "getloadavg") else 1.0
            others = min(max(load - 1.0, 0.0), cores - 1.0)
        return cls(cores, share, others, _grouped_apart())

    def throughput(self, processes: int) -> float:
        """The cores' worth of CPU that ``processes`` busy processes of the report get together.

        Args:
            processes: How many run at once.

        Returns:
            A fair share of the cores beside the others: per session where the kernel groups by session, else per
            process.

        Examples:
            >>> Machine(2, 0.25, 7.0, grouped=True).throughput(4), Machine(2, 1.0, 0.0, grouped=True).throughput(4)
            (0.25, 2.0)
            >>> Machine(2, 0.25, 7.0, grouped=False).throughput(4)
            0.7272727272727273
        """
        if self.grouped:
            return min(float(processes), self.cores / (self.others + 1.0))
        return processes * min(1.0, self.cores / (self.others + processes))


def figure_count(config: Any) -> int:
    """The figures the report of ``config`` draws (:func:`dpkit.reports.render.figure_list`, counted from the config).

    Args:
        config: The report's configuration.

    Returns:
        Per algorithm its ε(δ), tree and RLSVI figures where it has them, its audit's (one for a sequential audit,
        two for a fixed one) and its regret; one per ledger or event file.
    """
    count = len(config.ledgers)
    for a in config.algorithms:
        sections = a.spec.report.sections
        audit = 0 if not a.audit.enabled else (1 if a.audit.mode == AuditMode.SEQUENTIAL else 2)
        count += 2 + ("tree" in sections) + ("rlsvi" in sections) + audit
    return count


def report_estimate(config: Any, costs: UnitCosts, machine: Machine | None = None) -> Estimate:
    """The expected wall time of the report of ``config``, from its counts of work and the units' ``costs``.

    The ledgers and figures run in this process; the simulations (a pool of the config's workers) and the audits
    (as many again) run side by side, then whichever has work left alone, with the CPU :class:`Machine` says they
    get beside the machine's other load.

    Args:
        config: The report's configuration.
        costs: The units' costs (:func:`~dpkit.commands.report_calibration.calibrate`).
        machine: The CPU the report gets (default: :meth:`Machine.now` at the costs' slowdown).

    Returns:
        The estimate.
    """
    from dpkit.reports.job import audit_parts, report_tasks  # the report's own tasks: what it will simulate
    from dpkit.reports.regret_runs import RegretTask

    parts = {a.name: audit_parts(a) for a in config.algorithms}
    runs = {name: sum(p.runs for p in these) for name, these in parts.items()}
    audits = sum(costs.audit_run.get(name, 0.0) * n for name, n in runs.items())
    audits += costs.audit_part * sum(len(these) for these in parts.values())
    simulations, episodes = 0.0, 0
    for task in report_tasks(config):
        if isinstance(task, RegretTask):
            k = task.experiment.episodes * len(task.seeds)
            simulations += costs.episode.get(task.algorithm, 0.0) * k
        else:
            k = task.episodes
            simulations += costs.episode.get(RLSVI_KEY, 0.0) * k
        episodes += k
    workers = config.workers
    figures = figure_count(config)
    starts = costs.start * (2 * workers if workers > 1 else 0)  # a pool for the simulations, one for the audits
    serial = costs.ledger * (len(config.algorithms) + len(config.ledgers)) + costs.figure * figures
    machine = machine or Machine.now(costs.slowdown, costs.running)
    if workers == 1:  # the audits, then the simulations, in this process
        side_by_side = (audits + simulations) / machine.throughput(1)
    else:  # both pools side by side, then whichever has work left alone
        first, rest = sorted((audits + starts / 2, simulations + starts / 2))
        side_by_side = 2 * first / machine.throughput(2 * workers) + (rest - first) / machine.throughput(workers)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    spent = usage.ru_utime + usage.ru_stime  # start-up and timing, so far
    seconds = (spent + serial) / machine.throughput(1) + side_by_side
    work = {
        "ledgers": costs.ledger * (len(config.algorithms) + len(config.ledgers)),
        "simulations": simulations,
        "audits": audits,
        "figures": costs.figure * figures,
        "starts": starts,
    }
    return Estimate(seconds, sum(runs.values()), episodes, figures, work, machine)


def duration(seconds: float) -> str:
    """A report's time as its estimate says it: ``40 s``, ``3 min 20 s`` (to 10 s), ``1 h 5 min``.

    Args:
        seconds: The time in seconds.

    Returns:
        The time in words.

    Examples:
        >>> duration(41.7), duration(200.0), duration(3900.0)
        ('42 s', '3 min 20 s', '1 h 5 min')
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        minutes, rest = divmod(round(seconds / 10) * 10, 60)
        return f"{minutes:.0f} min" + (f" {rest:.0f} s" if rest else "")
    hours, rest = divmod(round(seconds / 60), 60)
    return f"{hours:.0f} h" + (f" {rest:.0f} min" if rest else "")


def estimate_line(estimate: Estimate) -> str:
    """The line ``dpkit report`` prints first: the expected time of all of it, and the work behind it.

    Args:
        estimate: :func:`report_estimate`'s estimate.

    Returns:
        The line.
    """
    w, m = estimate.work, estimate.machine
    shared = ""
    if m.grouped and m.share < 0.95:
        shared = " and its workers sharing it (the kernel shares the CPU by session)"
    return (
        f"expected time: about {duration(estimate.seconds)} in all — audits {estimate.runs:,} runs "
        f"({w['audits']:.0f} s of CPU), simulations {estimate.episodes:,} episodes ({w['simulations']:.0f} s), "
        f"{estimate.figures} figures and the ledgers ({w['figures'] + w['ledgers']:.0f} s); on {m.cores} "
        f"core{'s' if m.cores > 1 else ''}, one process getting {m.share:.0%} of a core now{shared} "
        "(each kind of work timed on a first small unit here)"
    )
