"""``dpkit audit ALGORITHM``: an RL algorithm's audit against its own privacy declaration."""

from __future__ import annotations

from dpkit import accountant
from dpkit.accountant.validation import check_choice, check_index
from dpkit.audits.verdicts import Verdict
from dpkit.facade import audit
from dpkit.render import emit_json, progress_bar

from .audit_rl_tables import print_rl_audit
from .options import rl_executor, sigma_choice


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


def audit_algorithm(
    *,
    algorithm: str,
    sigma: str,
    observer: str | None,
    runs: float | None,
    episodes: float | None,
    position: str | None,
    env: str | None,
    horizon: float | None,
    max_time: float,
    epsilon: float | None,
    delta: float | None,
    confidence: float,
    attack: str,
    executor: str,
    workers: float | None,
    scheduler: str | None,
    seed: float,
    sequential: bool,
    as_json: bool,
) -> int:
    """Audit ``algorithm`` (its default setting at ``sigma``, ``observer``, …) at every position of the changed user
    that matters (or at ``position``) through the front door :func:`dpkit.audit`; print it, return the exit status.

    The options are those of ``dpkit audit`` (already checked to belong to this form). Before the audit, a first
    batch of runs times it: the expected time is printed on stderr, and an audit expected to take longer than
    ``max_time`` is refused.

    Args:
        algorithm: ALGORITHM, a registered algorithm's name (an ``--agent`` already registered).
        sigma: ``--sigma``: ``paper``, ``tight``, ``optimal`` or a number.
        observer: ``--observer``, what the attacker sees (None: the white-box one).
        runs: ``--runs``, runs per dataset (None: 4000).
        episodes: ``--episodes``, the users K (None: the algorithm's default).
        position: ``--position``, where the changed user sits (None: every position that matters).
        env: ``--env``, a user's tabular environment (None: the audit's own).
        horizon: ``--horizon``, the episodes' horizon H (with ``env``).
        max_time: ``--max-time``, the longest expected time accepted, in seconds.
        epsilon: ``--epsilon``, the target the declaration is audited at (None: the algorithm's).
        delta: ``--delta``, the δ of that target (None: the algorithm's).
        confidence: ``--confidence``, 1 − α.
        attack: ``--attack``: ``auto``, ``white-box`` (``lr``) or ``learned``.
        executor: ``--executor``: where the runs go.
        workers: ``--workers``, the pool's size (None: the executor's default).
        scheduler: ``--scheduler``, a Dask scheduler's address, or None.
        seed: ``--seed``.
        sequential: ``--sequential``: the anytime-valid audit, stopping once the evidence is certain.
        as_json: ``--json``: print one JSON object instead of the tables.

    Returns:
        The exit status: 1 for a violation of the declaration, 0 otherwise.

    Raises:
        ValueError: An unknown algorithm, attack or position, a size above its limit, a bad value of an option,
            or an audit expected to take longer than ``max_time``.
    """
    from dpkit.algorithms import registry
    from dpkit.algorithms.executors import make_executor
    from dpkit.algorithms.limits import AUDIT_LIMITS, LIMITS, above_limit
    from dpkit.audits.rl import RL_ATTACKS, default_setting, plan_probe_runs, positions

    from .audit_timing import announced, expected_time, planned_workers

    registry.get(algorithm, audited=True, what="ALGORITHM")
    attack = {"lr": "white-box"}.get(attack, attack)
    check_choice("attack", attack, RL_ATTACKS)
    n_episodes = None if episodes is None else accountant.check_count("episodes", episodes)
    n_runs = 4000 if runs is None else accountant.check_count("runs", runs)
    n_horizon = None if horizon is None else accountant.check_count("horizon", horizon)
    sizes = (
        ("episodes", n_episodes, AUDIT_LIMITS["episodes"], "users: every run plays them all"),
        ("runs", n_runs, AUDIT_LIMITS["runs"], "each a whole run"),
        ("horizon", n_horizon, LIMITS["horizon"], "steps of every episode"),
    )
    for name, value, limit, why in sizes:
        if value is not None and value > limit:  # before anything is built or run
            raise ValueError(f"{above_limit(f'--{name}', value, limit)} ({why})")
    setting = default_setting(
        algorithm,
        sigma=sigma_choice(sigma),
        observer=observer,
        episodes=n_episodes,
        epsilon=epsilon,
        delta=delta,
        env=env,
        horizon=n_horizon,
        **({} if position is None else {"position": _position(position)}),
    )
    probed = list(positions(setting)) if position is None else [setting.position]
    confidence = accountant.check_probability("confidence", confidence)
    name = rl_executor(executor, algorithm)
    n_workers = None if workers is None else accountant.check_count("workers", workers)
    n_seed = check_index("seed", seed)
    if sequential:
        from .audit_rl_sequential import audit_algorithm_sequential

        return audit_algorithm_sequential(
            setting,
            probed,
            runs=n_runs,
            seed=n_seed,
            attack=attack,
            confidence=confidence,
            executor=name,
            workers=n_workers,
            scheduler=scheduler,
            max_time=max_time,
            as_json=as_json,
        )
    n_probe = plan_probe_runs(setting, n_runs, attack) if position is None else 0  # the plan probe's, pilots included
    with make_executor(name, workers=n_workers, scheduler=scheduler) as pool:
        timing = {"runs": n_runs, "positions": len(probed), "probe": n_probe, "seed": n_seed}
        note = expected_time(setting, max_time=max_time, **timing, **planned_workers(pool))
        total = 2 * (n_runs * len(probed) + n_probe)
        with progress_bar(f"auditing {algorithm} at {len(probed)} position(s)", total) as bar:
            advance = announced(note, bar)
            result = audit(
                setting,
                positions=probed,
                runs=n_runs,
                seed=n_seed,
                attack=attack,
                alpha=round(1.0 - confidence, 12),
                executor=pool,
                progress=advance,
            )
    out = result.to_dict()
    exit_code = 1 if result.verdict == Verdict.VIOLATION else 0
    if as_json:
        emit_json(out)
        return exit_code
    print_rl_audit(result, setting=setting, runs=n_runs, title=f"Audit of {algorithm}")
    return exit_code


def _position(value: str) -> str | int:
    """``--position``: a name, or a 0-based index given as a number."""
    text = value.strip()
    return int(text) if text.isdigit() else text
