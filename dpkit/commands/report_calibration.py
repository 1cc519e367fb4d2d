"""What ``dpkit report`` times before it starts (:func:`calibrate`): one small unit of each kind of work its config
asks for — a ledger with its ε(δ) curves, a chunk of each algorithm's audit runs, a few episodes of each algorithm's
simulations (and of RLSVI's own runs), one figure — in CPU seconds, and the share of a core this process got while
timing them. :mod:`dpkit.commands.report_estimate` turns them into the run's expected time.
"""

from __future__ import annotations

import dataclasses
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RLSVI_KEY", "UnitCosts", "calibrate"]

#: Runs per dataset of the timed audit chunk (the audits hand their executor chunks of this many runs) and episodes
#: of the timed simulation (of every seed), after a warm-up of one run.
_AUDIT_CHUNK, _EPISODES = 250, 50
#: Runs per dataset of the small whole audit whose time beyond its runs is an audit part's own cost (its attacks'
#: training and tests at one position).
_SMALL_AUDIT = 100


@dataclass
class UnitCosts:
    """CPU seconds of each kind of unit, timed in this process, and the share of a core it got while timing them.

    Attributes:
        ledger: One ledger with its ε(δ) curves.
        audit_run: One audit run (on one dataset), by algorithm.
        audit_part: An audit part's own cost beyond its runs (its attacks fitted and tested at one position).
        episode: One simulated episode of one seed, by algorithm.
        figure: One figure drawn.
        start: Starting one worker process (this process's own start-up and imports, up to the timing).
        slowdown: Wall seconds per CPU second while timing (1: a whole core; 3: a third of one).
        running: The machine's runnable processes (this one among them) as each unit ended, where the system says.
    """

    ledger: float = 0.0
    audit_run: dict[str, float] = dataclasses.field(default_factory=dict)
    audit_part: float = 0.0
    episode: dict[str, float] = dataclasses.field(default_factory=dict)
    figure: float = 0.0
    start: float = 0.0
    slowdown: float = 1.0
    running: list[int] = dataclasses.field(default_factory=list)
    _wall: float = 0.0
    _cpu: float = 0.0

    @contextmanager
    def timing(self, record: Callable[[float], None]) -> Iterator[None]:
        """Time the block: pass its CPU seconds to ``record``, and count its wall and CPU seconds in the slowdown.

        Args:
            record: Called with the block's CPU seconds.

        Yields:
            Nothing; the block runs.
        """
        wall, cpu = time.perf_counter(), time.process_time()
        yield
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        record(cpu)
        self._wall, self._cpu = self._wall + wall, self._cpu + cpu
        self.running += _running()
        self.slowdown = max(1.0, self._wall / self._cpu) if self._cpu > 0 else 1.0


def _running() -> list[int]:
    """The runnable processes now (``/proc/loadavg``'s fourth field), or nothing where the system does not say."""
    try:
        return [int(Path("/proc/loadavg").read_text(encoding="ascii").split()[3].split("/")[0])]
    except (OSError, IndexError, ValueError):
        return []


def _per_unit(costs: dict[str, float], key: str, units: int) -> Callable[[float], None]:
    """A :meth:`UnitCosts.timing` record that stores the CPU seconds per unit of ``units`` under ``key``."""

    def record(cpu: float) -> None:
        costs[key] = cpu / units

    return record


def calibrate(config: Any) -> UnitCosts:
    """Time one small unit of each kind the report of ``config`` runs (their results are discarded).

    Args:
        config: The report's :class:`~dpkit.reports.config.ReportConfig`.

    Returns:
        The costs.

    Raises:
        ValueError: A unit cannot run (the report itself then names what is wrong).
    """
    from dpkit.accountant.algorithm_ledgers import algorithm_ledger
    from dpkit.accountant.sensitivity import Relation
    from dpkit.algorithms.executors import run_pair
    from dpkit.algorithms.registry import declare
    from dpkit.algorithms.simulation import simulate_seeds
    from dpkit.audits.rl import neighbouring_datasets, rl_release
    from dpkit.reports import figures
    from dpkit.reports.config import ledger_parameters
    from dpkit.reports.job import audit_parts, audit_setting_of, epsilon_curves, run_audit
    from dpkit.reports.regret_runs import RlsviTask, run_task
    from dpkit.reports.user_ledgers import ledger_section

    usage = resource.getrusage(resource.RUSAGE_SELF)  # what a worker also does: start, import dpkit, numpy, …
    costs = UnitCosts(start=usage.ru_utime + usage.ru_stime)
    seeds = tuple(config.seed + i for i in range(config.seeds))
    curves: dict[str, Any] | None = None

    def ledger(cpu: float) -> None:
        costs.ledger = cpu

    with costs.timing(ledger):  # the first algorithm's ledger and curves, or the first file's
        if config.algorithms:
            a = config.algorithms[0]
            declaration = declare(a.name, a.epsilon, a.delta, **ledger_parameters(a, config.seed))
            curves = epsilon_curves(declaration, Relation(algorithm_ledger(declaration).relation), config.deltas)
        elif config.ledgers:
            curves = ledger_section(config.ledgers[0], config.deltas)["epsilon_curves"]
    for a in config.algorithms:
        if audit_parts(a):
            d0, d1 = neighbouring_datasets(audit_setting_of(a))
            run_pair(rl_release, d0, d1, 1, 0)  # its caches: the world, the declaration, σ
            with costs.timing(_per_unit(costs.audit_run, a.name, 2 * _AUDIT_CHUNK)):
                run_pair(rl_release, d0, d1, _AUDIT_CHUNK, 1)
        short = dataclasses.replace(a.experiment("paper", config.seed), episodes=min(a.episodes, _EPISODES))
        with costs.timing(_per_unit(costs.episode, a.name, short.episodes * len(seeds))):
            simulate_seeds(short, seeds)
        if "rlsvi" in a.spec.report.sections:
            k = min(a.episodes, 4 * _EPISODES)
            horizon = ledger_parameters(a, config.seed)["horizon"]
            task = RlsviTask(a.env, a.states, a.actions, horizon, k, config.seed, a.delta)
            with costs.timing(_per_unit(costs.episode, RLSVI_KEY, k)):
                run_task(task)
    audited = [a for a in config.algorithms if audit_parts(a)]
    if audited:  # one small whole audit: what its parts cost beyond their runs
        a = audited[0]
        small = a.model_copy(update={"audit": a.audit.model_copy(update={"runs": min(a.audit.runs, _SMALL_AUDIT)})})
        parts = audit_parts(small)
        runs = sum(p.runs for p in parts) * costs.audit_run[a.name]

        def part(cpu: float) -> None:
            costs.audit_part = max(0.0, cpu - runs) / len(parts)

        warm = a.model_copy(update={"audit": a.audit.model_copy(update={"runs": min(a.audit.runs, _SMALL_AUDIT // 5)})})
        run_audit(warm, config.seed)  # its imports and caches, which the report pays once
        with costs.timing(part):
            run_audit(small, config.seed)
    if curves is not None:
        drawn = {curves["labels"][key]: values for key, values in curves["methods"].items()}
        with tempfile.TemporaryDirectory() as folder:
            figures.epsilon_delta_figure(curves["deltas"], drawn, Path(folder) / "warm.png")  # imports, fonts

            def figure(cpu: float) -> None:
                costs.figure = cpu

            with costs.timing(figure):
                figures.epsilon_delta_figure(curves["deltas"], drawn, Path(folder) / "timed.png")
    return costs


#: The key of RLSVI's own runs (its privacy figure's K) among :attr:`UnitCosts.episode`.
RLSVI_KEY = "rlsvi runs"
