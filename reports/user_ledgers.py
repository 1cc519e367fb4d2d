"""The report's section for one ``[[ledger]]`` entry: a user's ledger file or event file.

:func:`ledger_section` gathers, as plain JSON-ready data, what the report shows about the file: its
releases (or its event), the assessment of :func:`dpkit.accountant.assessment.assess_ledger` (every method's
ε at δ, the certified ε, the informative δ, the noise a claim needs, flags), the ε(δ) curves of every
accounting method (:func:`method_curves`, the same shape as the algorithms' curves) and the ``dpkit``
command that prints the same numbers. Nothing is computed here that the accountant does not compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpkit.accountant import VARIANTS, Ledger, compare_methods
from dpkit.accountant.assessment import assess_ledger
from dpkit.accountant.events import Event, describe
from dpkit.accountant.sensitivity import Relation

from .config import LedgerConfig
from .texts import METHOD_LABELS

__all__ = ["ledger_section", "method_curves", "ledger_file_command"]


def method_curves(
    target: Ledger | Event, grid: Sequence[float], *, relation: Relation | str, sigma: str
) -> dict[str, Any]:
    """ε(δ) of every accounting variant for a ledger or an event at each δ of ``grid``.

    Args:
        target: The ledger or event.
        grid: The δ values (sorted, each once).
        relation: The neighbouring relation, recorded as given.
        sigma: Which noise, recorded as given: ``paper`` for an algorithm's declared releases, ``file`` for a
            user's file.

    Returns:
        The ``methods`` (None where a method gives no ε) and ``refusals`` (why), with μ and ρ of a Gaussian ledger
        (None for anything else).
    """
    deltas = sorted(set(grid))
    methods: dict[str, list[float | None]] = {key: [] for key, _, _ in VARIANTS}
    refusals: dict[str, list[str | None]] = {key: [] for key, _, _ in VARIANTS}
    for delta in deltas:
        cmp = compare_methods(target, delta)
        for key, _, _ in VARIANTS:
            methods[key].append(cmp.epsilons[key])
            refusals[key].append(cmp.refusals.get(key))
    gaussian = isinstance(target, Ledger) and target.is_gaussian
    return {
        "sigma": sigma,
        "relation": relation,
        "mu": target.mu if isinstance(target, Ledger) and gaussian else None,
        "rho": target.rho if isinstance(target, Ledger) and gaussian else None,
        "deltas": deltas,
        "methods": methods,
        "labels": {key: METHOD_LABELS[key] for key in methods},
        "refusals": refusals,
    }


def _arg(value: float | int) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


def ledger_file_command(entry: LedgerConfig) -> list[str]:
    """``dpkit`` arguments that print every method's ε at the entry's δ (``--json`` gives the same numbers).

    Args:
        entry: The ``[[ledger]]`` entry; its ``FILE`` is as the config gives it (relative to the config's folder).

    Returns:
        ``dpkit ledger FILE --delta D`` for a ledger file, ``dpkit methods --event FILE --delta D [--relation R]``
        for an event file, as a list of arguments.
    """
    if entry.kind == "ledger file":
        return ["ledger", entry.file, "--delta", _arg(entry.delta)]
    args = ["methods", "--event", entry.file, "--delta", _arg(entry.delta)]
    if entry.relation is not None:
        args += ["--relation", entry.relation]
    return args


def ledger_section(entry: LedgerConfig, deltas: Sequence[float]) -> dict[str, Any]:
    """Everything the report shows about one ``[[ledger]]`` entry, as plain JSON-ready data.

    Args:
        entry: The entry.
        deltas: The report's δ grid (the entry's δ is added).

    Returns:
        ``name``, ``file`` (as the config gives it), ``kind`` (``ledger file`` or ``event file``), ``relation``,
        ``description`` (one line), ``releases`` (a ledger file's, else None), ``event`` (an event file's, else
        None), the entry's ``delta``, ``epsilon`` (the claim, or None) and ``users``, ``assessment``
        (:meth:`~dpkit.accountant.assessment.LedgerAssessment.to_dict`), ``epsilon_curves``
        (:func:`method_curves`) and ``command`` (:func:`ledger_file_command`).

    Raises:
        TypeError: If ``entry`` is not a :class:`~dpkit.reports.config.LedgerConfig`.
    """
    if not isinstance(entry, LedgerConfig):
        raise TypeError(f"entry must be a LedgerConfig, got {type(entry).__name__}")
    target = entry.target()
    assessment = assess_ledger(target, delta=entry.delta, epsilon=entry.epsilon, users=entry.users)
    return {
        "name": entry.name,
        "file": entry.file,
        "kind": entry.kind,
        "relation": target.relation,
        "description": describe(target.event if isinstance(target, Ledger) else target),
        "releases": target.to_dicts() if isinstance(target, Ledger) else None,
        "event": None if isinstance(target, Ledger) else target.to_dict(),
        "delta": entry.delta,
        "epsilon": entry.epsilon,
        "users": entry.users,
        "assessment": assessment.to_dict(),
        "epsilon_curves": method_curves(target, [*deltas, entry.delta], relation=target.relation, sigma="file"),
        "command": ledger_file_command(entry),
    }
