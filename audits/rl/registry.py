"""Which registered algorithms can be audited, and how: the audits' side of a registration.

An algorithm registers its agents, declaration and report in :mod:`dpkit.algorithms.registry`; how the RL audits run
it (an :class:`~dpkit.algorithms.spec.AuditSpec`: its world, observers, positions, plan probe, one-run scores) is
registered here, so that :mod:`dpkit.algorithms` never names an observer, a world or an attack. A built-in's audit
module ends with ``AUDITS``, algorithm name → audit spec (:data:`BUILTIN_MODULES` lists those modules, one line per
module). An algorithm registered from outside dpkit (a plugin, a user's agent) brings its audit in its own spec
(``AlgorithmSpec.audit``), which is read first.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from types import MappingProxyType

from dpkit.accountant.validation import ArgumentTypeError
from dpkit.algorithms import registry
from dpkit.algorithms.spec import AlgorithmSpec, AuditSpec

from . import ldp_ucrl_vtr, linopt, ofu_rl, rlsvi

__all__ = ["BUILTIN_MODULES", "BUILTIN_AUDITS", "audit_of", "audited_algorithms", "audited", "audit_spec"]

#: The audit modules of the built-in algorithms; each defines ``AUDITS``, algorithm name → audit spec.
BUILTIN_MODULES = (ldp_ucrl_vtr, linopt, ofu_rl, rlsvi)
#: The built-in algorithms' audits, by algorithm name.
BUILTIN_AUDITS: Mapping[str, AuditSpec] = MappingProxyType(
    {name: audit for module in BUILTIN_MODULES for name, audit in module.AUDITS.items()}
)


def audit_of(spec: AlgorithmSpec) -> AuditSpec | None:
    """How the RL audits run the algorithm of ``spec``: the audit its spec brings, else the one registered here.

    A runtime registration that replaces a built-in (a mutant of it, in the tests) keeps the built-in's audit unless
    it brings its own.

    Args:
        spec: A registered algorithm's spec.

    Returns:
        Its audit spec, or ``None`` if it is not audited.
    """
    return spec.audit if spec.audit is not None else BUILTIN_AUDITS.get(spec.name)


def audited_algorithms() -> tuple[str, ...]:
    """The registered algorithms that can be audited, in registration order.

    Returns:
        Their names.

    Examples:
        >>> "rlsvi" in audited_algorithms()
        True
    """
    return tuple(name for name in registry.names() if audit_of(registry.get(name)) is not None)


def audited(name: str, *, what: str = "algorithm") -> AlgorithmSpec:
    """The spec of ``name``, an algorithm that can be audited.

    Args:
        name: The registered name.
        what: How the name is called in the error (``"algorithm"``).

    Returns:
        The spec.

    Raises:
        TypeError: ``name`` is not a string (an ``ArgumentTypeError``).
        ValueError: An unknown name, or one that cannot be audited: the error lists the choices and the closest one.
    """
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{what} must be a string, got {type(name).__name__}")
    choices = audited_algorithms()
    if name not in choices:
        close = difflib.get_close_matches(name, choices, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        shown = name if len(name) <= 60 else name[:57] + "..."
        raise ValueError(f"{what} must be one of {', '.join(choices)}; got {shown!r}{hint}")
    return registry.get(name)


def audit_spec(name: str, *, what: str = "algorithm") -> AuditSpec:
    """The audit spec of ``name``, an algorithm that can be audited.

    Args:
        name: The registered name.
        what: How the name is called in the error (``"algorithm"``).

    Returns:
        Its audit spec.

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: An unknown name, or one that cannot be audited.
    """
    audit = audit_of(audited(name, what=what))
    assert audit is not None  # audited() admits only algorithms with an audit
    return audit
