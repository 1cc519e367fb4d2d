"""``dpkit audit ALGORITHM``: an RL algorithm's audit against its own privacy declaration."""

from __future__ import annotations

from dpkit import accountant
from dpkit.accountant.validation import check_index, check_member
from dpkit.audits.verdicts import Verdict
from dpkit.facade import audit
from dpkit.render import emit_json, progress_bar

from ..options import rl_executor, sigma_choice
from .form_options import AlgorithmOptions, RlRuns
from .rl_tables import print_rl_audit


def register_agent_file(value: str) -> str:
    """Register the agent of ``--agent FILE.py:NAME``.

    Args:
        value: ``FILE.py:NAME``, naming an AlgorithmSpec, or an agent factory (registered under NAME).

    Returns:
        The name to audit the agent by.

    Raises:
        ValueError: The file cannot be loaded, or NAME is neither an AlgorithmSpec nor callable.
    """
    from dpkit.algorithms.spec import AlgorithmSpec
    from dpkit.audits.rl import register_agent
    from dpkit.loading import FileFunction, load_object, parse_reference

    obj = load_object("--agent", value)
    if isinstance(obj, AlgorithmSpec):
        return register_agent(obj)
    if not callable(obj):
        raise ValueError(f"--agent {value!r} is neither an AlgorithmSpec nor an agent factory")
    # a picklable reference: process-pool workers import the file themselves
    return register_agent(FileFunction("--agent", value), name=parse_reference("--agent", value)[1])


def audit_algorithm(options: AlgorithmOptions) -> int:
    """Audit ``options.algorithm`` (its default setting at ``sigma``, ``observer``, …) at every position of the
    changed user that matters (or at ``position``) through the front door :func:`dpkit.audit`; print it, return the
    exit status.

    The options are those of ``dpkit audit`` (already checked to belong to this form). Before the audit, a first
    batch of runs times it: the expected time is printed on stderr, and an audit expected to take longer than
    ``max_time`` is refused.

    Args:
        options: The ALGORITHM form's options, as given.

    Returns:
        The exit status: 1 for a violation of the declaration, 0 otherwise.

    Raises:
        ValueError: An unknown algorithm, attack or position, a size above its limit, a bad value of an option,
            or an audit expected to take longer than ``max_time``.
    """
    from dpkit.algorithms.executors import make_executor
    from dpkit.audits.rl import default_setting, plan_probe_runs, positions
    from dpkit.audits.rl.candidates import RlAttack
    from dpkit.audits.rl.registry import audited

    from .timing import announced, expected_time, planned_workers

    algorithm, position = options.algorithm, options.position
    audited(algorithm, what="ALGORITHM")
    # the option's string becomes the member, once ("lr" is the white-box attack's other name)
    attack = check_member("attack", {"lr": "white-box"}.get(options.attack, options.attack), RlAttack)
    n_episodes, n_runs, n_horizon = _sizes(options)
    setting = default_setting(
        algorithm,
        sigma=sigma_choice(options.sigma),
        observer=options.observer,
        episodes=n_episodes,
        epsilon=options.epsilon,
        delta=options.delta,
        env=options.env,
        horizon=n_horizon,
        **({} if position is None else {"position": _position(position)}),
    )
    probed = list(positions(setting)) if position is None else [setting.position]
    confidence = accountant.check_probability("confidence", options.confidence)  # checked in this order
    executor = rl_executor(options.executor, algorithm)
    workers = None if options.workers is None else accountant.check_count("workers", options.workers)
    run = RlRuns(
        runs=n_runs,
        seed=check_index("seed", options.seed),
        attack=attack,
        confidence=confidence,
        executor=executor,
        workers=workers,
        scheduler=options.scheduler,
        max_time=options.max_time,
        as_json=options.as_json,
    )
    if options.sequential:
        from .rl_sequential import audit_algorithm_sequential

        return audit_algorithm_sequential(setting, probed, run)
    n_probe = plan_probe_runs(setting, n_runs, attack) if position is None else 0  # the plan probe's, pilots included
    with make_executor(run.executor, workers=run.workers, scheduler=run.scheduler) as pool:
        timing = {"runs": n_runs, "positions": len(probed), "probe": n_probe, "seed": run.seed}
        note = expected_time(setting, max_time=run.max_time, **timing, **planned_workers(pool))
        total = 2 * (n_runs * len(probed) + n_probe)
        with progress_bar(f"auditing {algorithm} at {len(probed)} position(s)", total) as bar:
            advance = announced(note, bar)
            result = audit(
                setting,
                positions=probed,
                runs=n_runs,
                seed=run.seed,
                attack=attack,
                alpha=round(1.0 - run.confidence, 12),
                executor=pool,
                progress=advance,
            )
    out = result.to_dict()
    exit_code = 1 if result.verdict == Verdict.VIOLATION else 0
    if run.as_json:
        emit_json(out)
        return exit_code
    print_rl_audit(result, setting=setting, runs=n_runs, title=f"Audit of {algorithm}")
    return exit_code


def _sizes(options: AlgorithmOptions) -> tuple[int | None, int, int | None]:
    """The checked episodes, runs (default 4000) and horizon, each refused above its limit before anything runs."""
    from dpkit.algorithms.limits import AUDIT_LIMITS, LIMITS, above_limit

    n_episodes = None if options.episodes is None else accountant.check_count("episodes", options.episodes)
    n_runs = 4000 if options.runs is None else accountant.check_count("runs", options.runs)
    n_horizon = None if options.horizon is None else accountant.check_count("horizon", options.horizon)
    sizes = (
        ("episodes", n_episodes, AUDIT_LIMITS["episodes"], "users: every run plays them all"),
        ("runs", n_runs, AUDIT_LIMITS["runs"], "each a whole run"),
        ("horizon", n_horizon, LIMITS["horizon"], "steps of every episode"),
    )
    for name, value, limit, why in sizes:
        if value is not None and value > limit:  # before anything is built or run
            raise ValueError(f"{above_limit(f'--{name}', value, limit)} ({why})")
    return n_episodes, n_runs, n_horizon


def _position(value: str) -> str | int:
    """``--position``: a name, or a 0-based index given as a number."""
    text = value.strip()
    return int(text) if text.isdigit() else text
