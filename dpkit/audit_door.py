"""The dispatch of :func:`dpkit.audit`, the front door: which audit of :mod:`dpkit.audits` a target and a mode
call, with the options checked against that function's own (an option it does not take is a TypeError naming it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpkit.audit_modes import AuditMode

__all__ = [
    "SETTING_OPTIONS",
    "audit_registered",
    "audit_release",
    "call_checked",
    "is_agent",
    "keywords",
    "refuse",
]

#: What a setting of an RL audit may be given (the fields of :class:`dpkit.audits.rl.setting.RlSetting`).
SETTING_OPTIONS = (
    "observer", "episodes", "epsilon", "delta", "sigma", "relation", "claim_allocation", "states", "actions",
    "horizon", "state_dim", "control_dim", "env_seed", "users_seed", "options", "implementation", "env", "world",
)  # fmt: skip


def is_agent(target: Any, datasets: tuple[Any, ...], options: dict[str, Any]) -> bool:
    """Whether a target that is no name nor setting is an agent: a class or spec, or a callable given neither
    datasets nor a release's options.

    Args:
        target: What :func:`dpkit.audit` was given.
        datasets: Its positional datasets.
        options: Its options.

    Returns:
        True for an agent (a class, an AlgorithmSpec, a factory), False for a release function.

    Examples:
        >>> is_agent(print, (), {}), is_agent(print, ([0], [1]), {}), is_agent(print, (), {"claim": None})
        (True, False, False)
    """
    from dpkit.algorithms.spec import AlgorithmSpec

    if isinstance(target, (type, AlgorithmSpec)):
        return True
    return callable(target) and not datasets and "pairs" not in options and "claim" not in options


def call_checked(function: Callable[..., Any], what: str, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
    """``function(*args, **options)`` once every option is one of its keywords.

    Args:
        function: The audit function beneath the door.
        what: The audit's name in an error.
        args: Its positional arguments.
        options: Its keyword options.

    Returns:
        What ``function`` returns.

    Raises:
        TypeError: An option ``function`` does not take, named.
    """
    refuse(options, keywords(function, skip=len(args)), what)
    return function(*args, **options)


def keywords(function: Callable[..., Any], *, skip: int = 0, extra: tuple[str, ...] = ()) -> list[str] | None:
    """The options ``function`` takes past its first ``skip`` arguments, with ``extra``.

    Args:
        function: A function.
        skip: How many of its leading arguments are given positionally.
        extra: Options to allow besides.

    Returns:
        The names, or ``None`` (anything) when ``function`` takes ``**options`` of its own.

    Examples:
        >>> keywords(lambda a, b=1, *, c=2: None, skip=1, extra=("d",))
        ['b', 'c', 'd']
    """
    import inspect

    params = inspect.signature(function).parameters.values()
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    named = [p.name for p in params if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD][skip:]
    return named + [p.name for p in params if p.kind == inspect.Parameter.KEYWORD_ONLY] + list(extra)


def refuse(options: dict[str, Any], allowed: list[str] | None, what: str) -> None:
    """Refuse an option that does not apply.

    Args:
        options: The options given.
        allowed: The options that apply (``None``: every option).
        what: The audit's name in the error.

    Raises:
        TypeError: The first option not in ``allowed``, named, with those that are.
    """
    bad = [] if allowed is None else sorted(set(options) - set(allowed))
    if bad:
        raise TypeError(f"{what} takes no option {bad[0]!r} (its options: {', '.join(sorted(set(allowed or ())))})")


def audit_release(
    release: Callable[..., Any], datasets: tuple[Any, ...], mode: AuditMode, options: dict[str, Any]
) -> Any:
    """A release function's audit: one pair, several (``pairs=``), or one run with canaries.

    Args:
        release: ``release(dataset, rng, n)``.
        datasets: Two (a neighbouring pair), none (with ``pairs=``) or, in mode ``one-run``, at most one.
        mode: ``fixed``, ``sequential`` or ``one-run``.
        options: The options of :func:`dpkit.audits.engine.audit_pair`, :func:`dpkit.audits.sequential.audit_sequential`
            or :func:`dpkit.audits.one_run.audit_one_run_target`, and ``pairs``.

    Returns:
        An AuditResult, SequentialResult, PairsResult or OneRunResult.

    Raises:
        TypeError: Datasets or an option the audit in ``mode`` does not take.
    """
    if mode == AuditMode.ONE_RUN:
        from dpkit.audits.one_run import audit_one_run_target

        if len(datasets) > 1:
            raise TypeError(
                f"a one-run audit of a release takes one dataset (the other users) and canaries=…, got {len(datasets)}"
            )
        if datasets:
            if "dataset" in options:
                raise TypeError("the dataset is given twice: as an argument and as dataset=…")
            options = {**options, "dataset": datasets[0]}
        return call_checked(audit_one_run_target, "a one-run audit of a release", (release,), options)
    if "pairs" in options:
        from dpkit.audits.engine import audit_pair, audit_pairs

        if datasets:
            raise TypeError(f"give the datasets as pairs=… or as two arguments, not both (got {len(datasets)})")
        pairs, rest = options.pop("pairs"), dict(options)
        what = f"a {mode} audit of a release's pairs"
        if mode == AuditMode.SEQUENTIAL:
            from dpkit.audits.sequential import audit_sequential

            refuse(rest, keywords(audit_sequential, skip=4, extra=("claim",)), what)
        else:
            refuse(rest, keywords(audit_pair, skip=4, extra=("claim",)), what)
        return audit_pairs(release, pairs, sequential=mode == AuditMode.SEQUENTIAL, **rest)
    if len(datasets) != 2:
        raise TypeError(f"a {mode} audit of a release takes two datasets (or pairs=…), got {len(datasets)}")
    if mode == AuditMode.SEQUENTIAL:
        from dpkit.audits.sequential import audit_sequential

        return call_checked(audit_sequential, "a sequential audit of a release", (release, *datasets), options)
    from dpkit.audits.engine import audit_pair

    return call_checked(audit_pair, "a fixed audit of a release", (release, *datasets), options)


def audit_registered(target: Any, mode: AuditMode, options: dict[str, Any]) -> Any:
    """A registered algorithm's (or a setting's) audit, in ``mode``.

    Args:
        target: A registered algorithm's name, or an :class:`~dpkit.audits.rl.setting.RlSetting`.
        mode: ``fixed``, ``sequential`` or ``one-run``.
        options: The setting's fields (for a name: :data:`SETTING_OPTIONS`), ``position`` or ``positions``, and the
            options of :func:`dpkit.audits.rl.audit_positions`,
            :func:`dpkit.audits.rl.sequential.audit_positions_sequential` or
            :func:`dpkit.audits.rl.one_run.audit_one_run`.

    Returns:
        An RlPositionsResult, RlSequentialResult or RlOneRunResult.

    Raises:
        ValueError: An unknown algorithm (the registry's "did you mean …?"), or mode ``one-run`` for a setting.
        TypeError: An option the audit in ``mode`` does not take, or both ``position`` and ``positions``.
    """
    from dpkit.audits.rl.setting import RlSetting

    if mode == AuditMode.ONE_RUN:
        from dpkit.audits.rl.one_run import audit_one_run

        if isinstance(target, RlSetting):
            raise ValueError("mode 'one-run' audits an algorithm by name (its one run is its own setting)")
        return call_checked(audit_one_run, "a one-run audit of an algorithm", (target,), options)
    if mode == AuditMode.SEQUENTIAL:
        from dpkit.audits.rl.sequential import audit_positions_sequential

        function: Callable[..., Any] = audit_positions_sequential
    else:
        from dpkit.audits.rl import audit_positions

        function = audit_positions
    allowed = keywords(function, skip=1, extra=("position", "positions"))
    if allowed is not None:
        allowed.remove("positions_to_probe")
    if isinstance(target, str):
        from dpkit.audits.rl import default_setting
        from dpkit.audits.rl.registry import audited

        refuse(options, None if allowed is None else allowed + list(SETTING_OPTIONS), f"a {mode} audit of an algorithm")
        audited(target)  # an unknown name: the registry's "did you mean …?"
        fields = {k: options.pop(k) for k in SETTING_OPTIONS if k in options}
        target = default_setting(target, **fields)
    else:  # an RlSetting has its fields already
        refuse(options, allowed, f"a {mode} audit of an RlSetting")
    where = {}
    if "position" in options and "positions" in options:
        raise TypeError("give position=… or positions=…, not both")
    if "position" in options:
        where["positions_to_probe"] = [options.pop("position")]
    elif "positions" in options:
        where["positions_to_probe"] = list(options.pop("positions"))
    return function(target, **where, **options)
