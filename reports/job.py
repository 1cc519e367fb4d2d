"""Computing a report: everything a report shows, as one plain, JSON-ready dictionary.

:func:`compute_report` runs, for every algorithm of a :class:`~dpkit.reports.config.ReportConfig`, its ledger and
ε(δ) curves, the tree counter or RLSVI's per-run privacy, the audit (:func:`run_audit`), regret over seeds, and for
every ``[[ledger]]`` entry its section; then one verdict row per algorithm. Progress is reported per stage
(:data:`STAGES`). Nothing here draws or writes (:mod:`dpkit.reports.render` does), and the dictionary holds no wall
times: the same configuration gives the same dictionary on any executor. What each part holds: see
docs/explanation/reports.md ("How a report is computed").
"""

from __future__ import annotations

import concurrent.futures as cf
import pickle
import platform
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np

from dpkit.accountant.accountants import AccountingMethod
from dpkit.accountant.algorithm_ledgers import Allocation, algorithm_ledger
from dpkit.accountant.declarations import SEVERITIES
from dpkit.accountant.flags import Severity
from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.rlsvi import RUN_PRIVACY_KIND, rlsvi_closed_form, rlsvi_worst_case_mu
from dpkit.accountant.sensitivity import Relation
from dpkit.accountant.tree import (
    max_psums_per_item,
    max_psums_per_prefix,
    paper_depth,
    psums_per_item,
    released_prefixes,
)
from dpkit.algorithms import registry
from dpkit.algorithms.executors import Executor, make_executor
from dpkit.algorithms.registry import declare
from dpkit.algorithms.worker_processes import quiet_context
from dpkit.reports.encoding import to_jsonable

from .audit_row import AUDIT_COLUMNS, audit_columns
from .config import AlgorithmConfig, AuditMode, ReportConfig, ledger_parameters
from .regret_runs import (
    SIGMAS,
    RegretTask,
    RlsviTask,
    regret_checkpoints,
    regret_section,
    run_task,
)
from .task_progress import EpisodeFeed, run_reported, start_worker_feed, task_episodes
from .texts import PRIVACY_MODEL_TEXT, assumptions, relation_text
from .user_ledgers import ledger_section, method_curves
from .verdict_views import PaperClaim

__all__ = [
    "FORMAT_VERSION",
    "SIGMAS",
    "STAGES",
    "RegretTask",
    "RlsviTask",
    "compute_report",
    "count_steps",
    "report_tasks",
    "stage_totals",
    "regret_sigmas",
    "ledger_command",
    "audit_command",
    "AuditPart",
    "audit_parts",
    "audit_setting_of",
    "run_audit",
    "run_sequential_audit",
    "audit_section",
    "PaperClaim",
    "paper_claim",
    "regret_checkpoints",
    "versions",
]

#: Version of the report.json layout (reports/report.schema.json).
FORMAT_VERSION = 1
#: The stages :func:`compute_report` reports progress of (the figures are drawn afterwards, by the renderer).
STAGES: tuple[str, ...] = ("ledgers", "simulations", "audits")

Progress = Callable[[float], None]  # advance the progress by this many steps
StageProgress = Callable[[str, float], None]  # advance the stage (one of STAGES) by this many steps
StageStatus = Callable[[str, str], None]  # what a stage (one of STAGES) is doing now, as text


# -- the command lines a report's numbers can be checked against -------------------------------------


def _arg(value: float | int) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def ledger_command(a: AlgorithmConfig, seed: int) -> list[str]:
    """``dpkit`` arguments that print this algorithm's ledger (``--json`` gives the same numbers).

    Args:
        a: The algorithm's entry of the config.
        seed: The report's seed.

    Returns:
        The arguments.
    """
    args = ["ledger", a.name]
    if a.epsilon is not None:
        args += ["--epsilon", _arg(a.epsilon)]
    args += ["--delta", _arg(a.delta)]
    for key, value in ledger_parameters(a, seed).items():
        args += [f"--{key}", _arg(value)]
    return args


def audit_command(a: AlgorithmConfig, seed: int) -> list[str]:
    """``dpkit`` arguments that run this algorithm's audit (``--json`` gives the same numbers).

    Args:
        a: The algorithm's entry of the config.
        seed: The report's seed.

    Returns:
        The arguments.
    """
    c = a.audit
    args = ["audit", a.name, "--sigma", _arg(c.sigma) if not isinstance(c.sigma, str) else c.sigma]
    if c.observer is not None:
        args += ["--observer", c.observer]
    args += ["--runs", str(c.runs)]
    if c.episodes is not None:
        args += ["--episodes", str(c.episodes)]
    overrides = a.audit_overrides()
    if "env" in overrides:
        args += ["--env", overrides["env"], "--horizon", str(overrides["horizon"])]
    if a.epsilon is not None:
        args += ["--epsilon", _arg(a.epsilon)]
    args += ["--delta", _arg(a.delta), "--seed", str(seed)]
    if c.position is not None:
        args += ["--position", str(c.position)]
    if c.mode == AuditMode.SEQUENTIAL:
        args += ["--sequential"]
    return args


# -- ledgers, ε(δ) curves, the tree counter and RLSVI's closed forms ----------------------------------


def _ledger(a: AlgorithmConfig, seed: int) -> tuple[Any, dict[str, Any]]:
    declaration = declare(a.name, a.epsilon, a.delta, **ledger_parameters(a, seed))
    led = algorithm_ledger(declaration)
    return declaration, led.to_dict()


def regret_sigmas(a: AlgorithmConfig, seed: int) -> tuple[str, ...]:
    """The σ of :data:`SIGMAS` that ``a`` is run at.

    Args:
        a: The algorithm's entry of the config.
        seed: The report's seed (the environment's draw).

    Returns:
        Paper and tight, and optimal where its ledger has an optimal allocation (plain-Gaussian declarations).
    """
    declaration = declare(a.name, a.epsilon, a.delta, **ledger_parameters(a, seed))
    has_optimal = algorithm_ledger(declaration).optimal_scale is not None
    return tuple(s for s in SIGMAS if s != Allocation.OPTIMAL or has_optimal)


def epsilon_curves(declaration: Any, relation: Relation, deltas: Sequence[float]) -> dict[str, Any]:
    """ε(δ) of every accounting method for the declared releases at the paper's σ.

    Args:
        declaration: The algorithm's privacy declaration.
        relation: The neighbouring relation.
        deltas: The δ grid.

    Returns:
        Each method's ε at each δ (and why a method refuses).
    """
    ledger = declaration.ledger(relation=relation)
    return method_curves(ledger, [*deltas, declaration.delta], relation=relation, sigma="paper")


def tree_section(ledger: Mapping[str, Any]) -> dict[str, Any]:
    """The binary counter behind a tree-counter algorithm's releases.

    Args:
        ledger: The algorithm's ledger, as ``dpkit ledger --json`` prints it.

    Returns:
        For each released prefix t, popcount(t) (its noise variance in units of σ²); for each user, the p-sums
        that contain her.
    """
    params = ledger["parameters"]
    steps, schedule = int(params["episodes"]), str(params["schedule"])
    last = released_prefixes(steps, schedule=schedule)
    prefixes = np.bitwise_count(np.arange(1, last + 1, dtype=np.uint64)).astype(int)
    return {
        "steps": steps,
        "schedule": schedule,
        "released_prefixes": last,
        "max_psums_per_item": max_psums_per_item(steps, schedule=schedule),
        "max_psums_per_prefix": max_psums_per_prefix(steps, schedule=schedule),
        "paper_depth": paper_depth(steps),
        "prefix_psums": prefixes.tolist(),
        "item_psums": psums_per_item(steps, schedule=schedule).tolist(),
        "sigma_paper": ledger["sigma_paper"],
        "sigma_tight": ledger["sigma_tight"],
    }


def rlsvi_grid(a: AlgorithmConfig) -> tuple[int, ...]:
    """The K of RLSVI's privacy figure.

    Args:
        a: RLSVI's config.

    Returns:
        The config's grid, or 8 log-spaced values up to its ``episodes``.
    """
    if a.episode_grid is not None:
        return a.episode_grid
    return tuple(int(k) for k in np.unique(np.geomspace(min(10, a.episodes), a.episodes, 8).round().astype(int)))


def rlsvi_closed_forms(a: AlgorithmConfig, grid: Sequence[int]) -> dict[str, Any]:
    """RLSVI's closed form (the paper's, and the same ρ read exactly) and the worst case over runs, per K.

    Args:
        a: RLSVI's config.
        grid: the K to read them at.

    Returns:
        The sizes, the grid, and per K the paper's ε, the exact ε of its ρ, the worst-case μ and its ε.
    """
    horizon = ledger_parameters(a, 0)["horizon"]
    forms = [
        rlsvi_closed_form(states=a.states, actions=a.actions, horizon=horizon, episodes=k, delta=a.delta) for k in grid
    ]
    worst = [rlsvi_worst_case_mu(states=a.states, actions=a.actions, horizon=horizon, episodes=k) for k in grid]
    return {
        "states": a.states,
        "actions": a.actions,
        "horizon": horizon,
        "delta": a.delta,
        "env": a.env,
        "episodes": list(grid),
        "epsilon_paper": [f.epsilon_paper for f in forms],
        "epsilon_exact_gdp": [f.epsilon_exact_gdp for f in forms],
        "mu_worst_case": worst,
        "epsilon_worst_case": [0.0 if mu == 0.0 else gdp_epsilon(mu, a.delta) for mu in worst],
    }


# -- the audit -----------------------------------------------------------------------------------------


def run_audit(
    a: AlgorithmConfig, seed: int, progress: Progress | None = None, *, executor: Executor | None = None
) -> dict[str, Any]:
    """The audit of one algorithm: ``dpkit.audits.rl.audit_registered_algorithm(…).to_dict()``.

    A config's ``mode = "sequential"`` runs :func:`run_sequential_audit` instead.

    Args:
        a: The algorithm's entry of the config.
        seed: The audit's seed.
        progress: Called with k as runs finish (2 × runs in all, at each position).
        executor: Where the runs go (default: in this process); it never changes the result.

    Returns:
        The object ``dpkit audit ALGORITHM … --json`` prints (see :func:`audit_command`).
    """
    from dpkit.audits.rl import audit_registered_algorithm

    c = a.audit
    if c.mode == AuditMode.SEQUENTIAL:
        return run_sequential_audit(a, seed, progress, executor=executor)
    result = audit_registered_algorithm(
        a.name,
        **a.audit_overrides(),
        runs=c.runs,
        epsilon=a.epsilon,
        delta=a.delta,
        seed=seed,
        position=c.position,
        executor=executor,
        progress=progress,
    )
    out: dict[str, Any] = to_jsonable(result.to_dict())
    return out


def run_sequential_audit(
    a: AlgorithmConfig, seed: int, progress: Progress | None = None, *, executor: Executor | None = None
) -> dict[str, Any]:
    """The sequential, anytime-valid audit of one algorithm in the fixed audit's setting, runs, seed and positions.

    Args:
        a: The algorithm's entry of the config.
        seed: The audit's seed.
        progress: Called with k as runs finish (at most 2 × ``max_budget(runs)`` at each position).
        executor: Where the runs go (default: in this process).

    Returns:
        The object ``dpkit audit ALGORITHM … --sequential --json`` prints.
    """
    from dpkit.audits.rl.sequential import audit_positions_sequential

    c = a.audit
    setting = audit_setting_of(a)
    result = audit_positions_sequential(
        setting,
        positions_to_probe=None if c.position is None else [c.position],
        runs=c.runs,
        seed=seed,
        executor=executor,
        progress=progress,
    )
    out: dict[str, Any] = to_jsonable(result.to_dict())
    return out


@dataclass(frozen=True)
class AuditPart:
    """One part of an algorithm's audit as its progress is shown: a position of the changed user (a sequential
    audit's positions take turns: one part) or the plan probe, and its runs on both datasets together."""

    label: str
    runs: int


def audit_setting_of(a: AlgorithmConfig) -> Any:
    """The setting the audit of ``a`` runs in (``dpkit.audits.rl.default_setting`` with the config's changes).

    Args:
        a: The algorithm's entry of the config.

    Returns:
        The audit's :class:`~dpkit.audits.rl.RlSetting`.
    """
    from dpkit.audits.rl import default_setting

    return default_setting(a.name, **a.audit_overrides(), epsilon=a.epsilon, delta=a.delta)


def audit_parts(a: AlgorithmConfig) -> tuple[AuditPart, ...]:
    """The parts of the audit of ``a`` in the order they run, with their runs.

    Args:
        a: The algorithm's entry of the config.

    Returns:
        Each position it probes (2 × runs; a sequential audit: 2 × its most runs at every position, in one part),
        then the plan probe where the audit adds one; empty when the audit is disabled.
    """
    c = a.audit
    if not c.enabled:
        return ()
    from dpkit.audits.rl import plan_probe_runs, positions

    setting = audit_setting_of(a)
    names = [str(c.position)] if c.position is not None else list(positions(setting))
    if c.mode == AuditMode.SEQUENTIAL:  # its most runs: it may stop before them
        from dpkit.audits.sequential_plan import max_budget

        return (AuditPart(f"{len(names)} position(s), sequential", 2 * max_budget(c.runs) * len(names)),)
    parts = [AuditPart(f"position {name} ({i + 1}/{len(names)})", 2 * c.runs) for i, name in enumerate(names)]
    probe = plan_probe_runs(setting, c.runs) if c.position is None else 0
    return tuple(parts) + ((AuditPart("plan probe", 2 * probe),) if probe else ())


def audit_section(
    a: AlgorithmConfig,
    seed: int,
    progress: Progress | None = None,
    *,
    executor: Executor | None = None,
    status: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """The audit part of an algorithm's report: the command, and the result (or why there is none).

    Args:
        a: The algorithm's entry of the config.
        seed: The audit's seed.
        progress: Advances by 1 in all, in fractions as the audit's runs finish.
        executor: Where the runs go (default: in this process), where the algorithm can travel to its workers.
        status: Called with the name of each part of the audit (:func:`audit_parts`) as it starts.

    Returns:
        The command, the result's dictionary or the reason there is none.
    """
    command = audit_command(a, seed)
    advance: Progress = progress or (lambda k: None)
    if not a.audit.enabled:
        advance(1)
        return {"available": False, "reason": "disabled in the configuration", "command": command, "result": None}
    parts = audit_parts(a)
    ends = np.cumsum([p.runs for p in parts])
    total, done, part = float(ends[-1]), [0.0], [0]
    say: Callable[[str], None] = status or (lambda text: None)
    say(f"{a.name}: {parts[0].label}")

    def runs_done(k: float) -> None:
        k = min(k, total - done[0])
        if k > 0:
            done[0] += k
            advance(k / total)
            while part[0] + 1 < len(parts) and done[0] >= ends[part[0]]:
                part[0] += 1
                say(f"{a.name}: {parts[part[0]].label}")

    result = run_audit(a, seed, runs_done, executor=executor if registry.travels(a.name) else None)
    runs_done(total)  # whatever the audit did not report
    return {"available": True, "reason": None, "command": command, "result": result}


# -- regret and RLSVI runs (picklable tasks, for a process pool) ----------------------------------------


def _finish(feed: EpisodeFeed, index: int) -> Callable[[Any], None]:
    """A future's done callback that pays task ``index`` the rest of its episodes."""
    return lambda _future: feed.finish(index)


# -- the whole report -------------------------------------------------------------------------------------


def report_tasks(config: ReportConfig) -> list[RegretTask | RlsviTask]:
    """The simulations a report runs: each algorithm's regret tasks (its σ choices, its seeds) and RLSVI's runs.

    Args:
        config: The report's configuration.

    Returns:
        The tasks, in the order the report runs them (the time estimate counts the same list).
    """
    tasks: list[RegretTask | RlsviTask] = []
    for a in config.algorithms:
        if "rlsvi" in a.spec.report.sections:
            horizon = ledger_parameters(a, config.seed)["horizon"]
            tasks += [RlsviTask(a.env, a.states, a.actions, horizon, k, config.seed, a.delta) for k in rlsvi_grid(a)]
        for sigma in regret_sigmas(a, config.seed):
            experiment = a.experiment(sigma, config.seed)
            seeds = tuple(config.seed + i for i in range(config.seeds))
            tasks.append(RegretTask(a.name, sigma, experiment, seeds))  # every seed in one batch
    return tasks


def stage_totals(config: ReportConfig) -> dict[str, int]:
    """The number of steps of each stage (:data:`STAGES`) that :func:`compute_report` reports to ``progress``.

    Args:
        config: The report's configuration.

    Returns:
        One step per ledger, per episode simulated (of every regret seed and RLSVI run) and per audit.
    """
    ledgers = len(config.algorithms) + len(config.ledgers)  # the algorithms' ledgers and the ledger or event files
    simulations = sum(task_episodes(t) for t in report_tasks(config))
    return {"ledgers": ledgers, "simulations": simulations, "audits": len(config.algorithms)}


def count_steps(config: ReportConfig) -> int:
    """The number of steps of all stages together (:func:`stage_totals`).

    Args:
        config: The report's configuration.

    Returns:
        The total.
    """
    return sum(stage_totals(config).values())


def _start_worker(specs: Sequence[Any], plugins: tuple[str, ...], episodes: Any = None) -> None:
    """A worker's initializer: the parent's picklable runtime registrations, then the config's plugins (loaded
    again from their files or modules: a spec loaded from a file by path cannot be pickled), then the queue its
    tasks send their episodes to."""
    from .config import register_plugins

    registry.replay(specs)
    register_plugins(plugins)
    start_worker_feed(episodes)


def _execute(
    tasks: Sequence[RegretTask | RlsviTask],
    workers: int,
    progress: Progress,
    meanwhile: Callable[[], Any],
    plugins: tuple[str, ...] = (),
) -> tuple[list[Any], Any]:
    """Run ``tasks`` (in a pool of ``workers`` processes when > 1) while ``meanwhile()`` runs here."""
    if workers == 1:
        extra = meanwhile()
        results = []
        for task in tasks:
            played = [0]

            def episodes(k: int, played: list[int] = played) -> None:
                played[0] += k
                progress(k)

            results.append(run_task(task, progress=episodes))
            if played[0] < task_episodes(task):  # an RLSVI run reports its episodes at its end
                progress(task_episodes(task) - played[0])
        return results, extra
    from .config import plugin_names

    context = quiet_context("spawn")  # a Ctrl-C is the parent's to report (its workers die of it silently)
    loaded_again = plugin_names(plugins)  # from their files, in the worker: a file's module cannot be unpickled there
    replayed = tuple(pickle.dumps(spec) for spec in registry.runtime_registrations() if spec.name not in loaded_again)
    queue = context.SimpleQueue()  # the workers' episodes, read here as they play (EpisodeFeed)
    with (
        EpisodeFeed(list(tasks), queue, progress) as feed,
        cf.ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_start_worker,  # algorithms registered at run time exist in the workers too
            initargs=(replayed, plugins, queue),
        ) as pool,
    ):
        futures = [pool.submit(run_reported, index, task) for index, task in enumerate(tasks)]
        for index, future in enumerate(futures):
            future.add_done_callback(_finish(feed, index))
        try:
            extra = meanwhile()
            results = [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return results, extra


def versions() -> dict[str, str | None]:
    """Installed versions of dpkit and of every package it requires.

    Returns:
        Each version by package name (None: not installed).
    """
    names = ["dpkit"]
    for requirement in metadata.requires("dpkit") or []:
        match = re.match(r"[A-Za-z0-9._-]+", requirement)
        if match and match.group(0) not in names:
            names.append(match.group(0))
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def compute_report(
    config: ReportConfig,
    *,
    command: Sequence[str] = (),
    progress: StageProgress | None = None,
    status: StageStatus | None = None,
) -> dict[str, Any]:
    """Compute every number of the report of ``config``.

    Args:
        config: The report's configuration.
        command: The command line recorded (the one that reproduces the numbers: without ``--out``).
        progress: ``progress(stage, k)`` as each stage (:data:`STAGES`) advances by k steps (the simulations and
            the audits run at the same time).
        status: ``status(stage, text)`` says what a stage does now (the audits name each algorithm and part).

    Returns:
        The report as one plain, JSON-ready dictionary.

    Raises:
        ValueError: If ``config`` is not a :class:`~dpkit.reports.config.ReportConfig`.
    """
    if not isinstance(config, ReportConfig):
        raise ValueError(f"config must be a ReportConfig, got {type(config).__name__}")
    report_progress: StageProgress = progress or (lambda stage, k: None)

    def stage(name: str) -> Progress:
        return lambda k: report_progress(name, k)

    def audit_status(text: str) -> None:
        if status is not None:
            status("audits", text)

    advance = stage("ledgers")
    sections: list[dict[str, Any]] = []
    for a in config.algorithms:
        declaration, led = _ledger(a, config.seed)
        section: dict[str, Any] = {
            "name": a.name,
            "privacy_model": led["privacy_model"],
            "paper": led["paper"],
            "relation": led["relation"],
            "relation_text": relation_text(led["relation"]),
            "privacy_model_text": PRIVACY_MODEL_TEXT.get(led["privacy_model"], ""),
            "assumptions": list(assumptions(a.name)),
            "settings": a.to_dict(),
            "ledger": led,
            "ledger_command": ledger_command(a, config.seed),
            "epsilon_curves": epsilon_curves(declaration, Relation(led["relation"]), config.deltas),
            "tree": tree_section(led) if "tree" in a.spec.report.sections else None,
            "rlsvi": rlsvi_closed_forms(a, rlsvi_grid(a)) if "rlsvi" in a.spec.report.sections else None,
        }
        sections.append(section)
        advance(1)
    files = []
    for entry in config.ledgers:
        files.append(ledger_section(entry, config.deltas))
        files[-1]["worst_flag"] = worst_flag(files[-1]["assessment"]["flags"])
        advance(1)
    tasks = report_tasks(config)

    def audits() -> list[dict[str, Any]]:
        # the audits' runs: every core once they are slow (an auto executor), unless the config keeps to one process
        # an algorithm of the config's plugins stays here: the pool's workers do not load the config's files
        from .config import plugin_names

        from_files = plugin_names(config.plugins)
        with make_executor(
            "in-process" if config.workers == 1 else "auto", workers=None if config.workers == 1 else config.workers
        ) as pool:
            return [
                audit_section(
                    a,
                    config.seed,
                    stage("audits"),
                    executor=None if a.name in from_files else pool,
                    status=audit_status,
                )
                for a in config.algorithms
            ]

    results, audit_results = _execute(tasks, config.workers, stage("simulations"), audits, config.plugins)
    by_task = dict(zip(tasks, results))
    for a, section, audit in zip(config.algorithms, sections, audit_results):
        section["audit"] = audit
        section["regret"] = regret_section(a, config, tasks, by_task)
        if section["rlsvi"] is not None:
            runs = [by_task[t] for t in tasks if isinstance(t, RlsviTask)]
            section["rlsvi"]["seed"] = config.seed
            section["rlsvi"]["mu_run"] = [r["mu"] for r in runs]
            section["rlsvi"]["epsilon_run"] = [r["epsilon"] for r in runs]
            section["rlsvi"]["worst_user_run"] = [r["worst_user"] for r in runs]
            section["rlsvi"]["run_kind"] = RUN_PRIVACY_KIND  # mu_run, epsilon_run: data-dependent, ex-post
    summary = [_summary_row(s) for s in sections]
    report: dict[str, Any] = to_jsonable(
        {
            "format": FORMAT_VERSION,
            "title": config.title,
            "summary": summary,
            "algorithms": sections,
            "ledgers": files,
            "provenance": {
                "command_line": list(command),
                "config": config.to_dict(),
                "seeds": {
                    "regret": [config.seed + i for i in range(config.seeds)],
                    "environment": config.seed,
                    "audit": config.seed,
                    "rlsvi_runs": config.seed,
                },
                "versions": versions(),
                "python": platform.python_version(),
            },
        }
    )
    return report


def __getattr__(name: str) -> object:
    # the algorithms whose report has the tree-counter section, as registered now
    if name == "TREE_ALGORITHMS":
        return tuple(n for n in registry.names(private=True) if "tree" in registry.get(n).report.sections)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _power_needed() -> float:
    from dpkit.audits.verdicts import POWER_RATIO_NEEDED

    return POWER_RATIO_NEEDED


def worst_flag(flags: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The first flag of the worst severity (error, then warning, then info).

    Args:
        flags: A ledger's flags.

    Returns:
        That flag, or None without flags.
    """
    for severity in SEVERITIES:
        for flag in flags:
            if flag["severity"] == severity:
                return {k: flag[k] for k in ("code", "severity", "release", "message")}
    return None


def paper_claim(ledger: Mapping[str, Any]) -> PaperClaim:
    """The verdict on the paper's claim, read off an algorithm's ledger (the second of a report's two verdicts).

    Args:
        ledger: The algorithm's ledger, as ``dpkit ledger --json`` prints it.

    Returns:
        ``not met`` where the exact ε of the paper's σ exceeds the claimed ε, ``not certified`` where an upper bound
        on it does, ``flawed`` where the claim holds here but the accounting has an error-level flag (a sensitivity
        too small, a data-dependent quantity left unaccounted, …: no proof stands behind it), else ``met``.
    """
    if ledger["epsilon_achieved_by_paper_sigma"] > ledger["epsilon_claimed_by_paper"]:
        return PaperClaim.NOT_MET if ledger["method"] == AccountingMethod.EXACT else PaperClaim.NOT_CERTIFIED
    return PaperClaim.FLAWED if any(f["severity"] == Severity.ERROR for f in ledger["flags"]) else PaperClaim.MET


def _summary_row(section: Mapping[str, Any]) -> dict[str, Any]:
    """The verdict row of one algorithm: the claim, the exact ε of the paper's σ (at the paper's δ and the
    informative δ), σ paper / tight / optimal, the audit's verdict with its power, certified bound and point
    estimate (null where a sequential audit has none), its mode and the runs it used, and the worst flag of the
    ledger."""
    led = section["ledger"]
    audit = section["audit"]
    result = audit["result"] if audit["available"] else None
    sigma = section["settings"]["audit"]["sigma"]
    # the audit's columns (null where the result lacks a key: a sequential audit's power and estimates; all of them
    # without an audit), as a result's own verdict table shows them
    columns = dict.fromkeys(AUDIT_COLUMNS) | {"audit_sigma": sigma}
    if result is not None:
        columns = audit_columns(result, sigma, _power_needed())
    return {
        "algorithm": section["name"],
        "privacy_model": led["privacy_model"],
        "relation": led["relation"],
        "delta": led["delta"],
        "claimed_epsilon": led["epsilon_claimed_by_paper"],
        "epsilon_at_paper_sigma": led["epsilon_achieved_by_paper_sigma"],
        "method": led["method"],
        "delta_informative": led["delta_informative"],
        "epsilon_at_informative_delta": led["epsilon_at_informative_delta_by_paper_sigma"],
        "mu_at_paper_sigma": led["mu_at_paper_sigma"],
        "noise_ratio": led["noise_ratio"],
        "sigma_paper": led["sigma_paper"],
        "sigma_tight": led["sigma_tight"],
        "sigma_optimal": led.get("sigma_optimal"),
        **columns,
        "paper_claim": paper_claim(led),
        "worst_flag": worst_flag(led["flags"]),
        "flag_counts": {severity: sum(f["severity"] == severity for f in led["flags"]) for severity in SEVERITIES},
    }
