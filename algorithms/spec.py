"""What an algorithm registers: one :class:`AlgorithmSpec` says everything the rest of dpkit reads about it.

The simulation, the ledgers, the audits, the reports and their config read the spec, so adding an algorithm from
outside dpkit touches one place (see :mod:`dpkit.algorithms.registry`). Its callables are *entry points*: a
callable, or a string ``"package.module:attr"`` imported when first used (:func:`load`). :class:`AuditSpec` says
how the RL audits run the algorithm — a plugin's in its spec, a built-in's registered on the audits' side
(:mod:`dpkit.audits.rl.registry`), as the algorithms never import the audits — and :class:`ReportSpec` what a
report says about it. The protocols each entry point follows: docs/explanation/observers.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EntryPoint", "ENVIRONMENT_KINDS", "REPORT_SECTIONS", "AuditSpec", "ReportSpec", "AlgorithmSpec", "load"]

#: A callable, or the string ``"package.module:attr"`` naming one.
EntryPoint = str | Callable[..., Any]
#: What an algorithm runs on: a tabular MDP (:mod:`dpkit.algorithms.envs.tabular`) or an LQ system.
ENVIRONMENT_KINDS: tuple[str, ...] = ("tabular", "lq")
#: The report's optional sections: ``tree`` (the binary-tree counters' depth, p-sums and σ, for algorithms
#: whose releases are counters), ``rlsvi`` (RLSVI's inherent-noise privacy: the paper's closed form, the
#: same ρ read exactly, and the ε measured on runs, per K).
REPORT_SECTIONS: tuple[str, ...] = ("tree", "rlsvi")


def load(entry_point: EntryPoint, *, what: str = "entry point") -> Callable[..., Any]:
    """The callable an entry point names (``"module:attr"``, attributes dotted), or the callable itself.

    Args:
        entry_point: A callable, or the string ``"package.module:attr"`` naming one.
        what: How the entry point is called in the errors.

    Returns:
        The callable.

    Raises:
        ValueError: Not a callable or ``"module:attr"``, or its module or attribute cannot be loaded.
        TypeError: What it names is not callable.

    Examples:
        >>> load("math:sqrt")(9.0)
        3.0
    """
    if callable(entry_point):
        return entry_point
    if not isinstance(entry_point, str) or entry_point.count(":") != 1:
        raise ValueError(f"{what} must be a callable or 'package.module:attr', got {entry_point!r}")
    module_name, attr = entry_point.split(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"{what} {entry_point!r} cannot be loaded: {err}") from None
    if not callable(obj):
        raise TypeError(f"{what} {entry_point!r} is not callable (got {type(obj).__name__})")
    return obj


def _check_entry_point(name: str, value: object, *, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not (callable(value) or (isinstance(value, str) and value.count(":") == 1)):
        raise TypeError(f"{name} must be a callable or 'package.module:attr', got {value!r}")


def _names(name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):  # type: ignore[attr-defined]
        raise TypeError(f"{name} must be a tuple of non-empty strings, got {value!r}")
    return tuple(value)  # type: ignore[arg-type]


@dataclass(frozen=True)
class AuditSpec:
    """How the RL audits (:mod:`dpkit.audits.rl`) run the algorithm on neighbouring users.

    Attributes:
        observers: What an observer under the privacy model sees, the first being the default.
        white_box: Those of them whose rows are whitened residuals and signals (the exact log-likelihood-ratio attack
            applies); the others are black-box views.
        world: ``world(setting)`` → (environment, users, (canary 0, canary 1)).
        observe: ``observe(run, rng)`` → one run's row (:mod:`dpkit.audits.rl.observers`).
        defaults: The fields of the default audit setting (:func:`dpkit.audits.rl.default_setting`: sizes at which the
            canaries realise most of the declared sensitivity).
        closed_form: ``closed_form(setting)``: the paper's own closed-form ε, if it has one, reported beside the audit.
        canaries: Which assumption each canary exercises.
        one_run: ``one_run(run, rng)``: a one-run audit's scores (:mod:`dpkit.audits.rl.one_run`) — one run whose users
            are all canaries, user k canary ``run.coins[k]``, returning (one score per user: higher when canary 1 is the
            likelier, computed from what the observer ``run.observer`` sees and never from the coins; the observer's
            name); without it, an agent of the local-DP messages protocol is scored from its messages.
        positions: ``positions(setting)``: the positions of the changed user a default audit probes, name → (0-based
            index, the share of the declared mechanisms that hold her there) — e.g.
            :func:`~dpkit.audits.rl.observers.tree_positions`; without it, the first, middle and last user with share 1
            (:func:`~dpkit.audits.rl.observers.default_positions`).
        plan_probe: ``plan_probe(setting)``: the members of its *plan probe* — changes of the audit setting (``world``,
            ``position``, ``options``…), one per world where a planner on anything but the billboard serves the users
            after the changed one other plans under D than under D′
            (:func:`~dpkit.audits.rl.plan_worlds.tabular_plan_probe`); a default audit tries each on pilot runs and
            audits the one whose plans differed most as a neighbouring pair of its own (:mod:`dpkit.audits.rl.plans`);
            without it (or with none), no probe.
        observe_batch: ``observe_batch(run, rngs)``: many runs at once — one row per Generator of ``rngs``, row i
            exactly what ``observe(run, rngs[i])`` returns (the algorithm simulates its runs along a leading run axis);
            the audits hand it their runs in chunks. Without it, the runs go one by one through ``observe``.

    Raises:
        TypeError: A field of the wrong kind (names, entry points).
        ValueError: No observer, or ``white_box`` names an observer the audit does not have.
    """

    observers: tuple[str, ...]
    white_box: tuple[str, ...]
    world: EntryPoint
    observe: EntryPoint
    defaults: Mapping[str, Any] = field(default_factory=dict)
    closed_form: EntryPoint | None = None
    canaries: str = ""
    one_run: EntryPoint | None = None
    positions: EntryPoint | None = None
    plan_probe: EntryPoint | None = None
    observe_batch: EntryPoint | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "observers", _names("observers", self.observers))
        object.__setattr__(self, "white_box", _names("white_box", self.white_box))
        if not self.observers:
            raise ValueError("an audit needs at least one observer")
        stray = sorted(set(self.white_box) - set(self.observers))
        if stray:
            raise ValueError(f"white_box names observers the audit does not have: {stray}")
        _check_entry_point("world", self.world, optional=False)
        _check_entry_point("observe", self.observe, optional=False)
        _check_entry_point("closed_form", self.closed_form)
        _check_entry_point("one_run", self.one_run)
        _check_entry_point("positions", self.positions)
        _check_entry_point("plan_probe", self.plan_probe)
        _check_entry_point("observe_batch", self.observe_batch)
        object.__setattr__(self, "defaults", dict(self.defaults))

    def hook(self, name: str, *, owner: str = "the audit") -> Callable[..., Any] | None:
        """The loaded callable of the audit's field ``name``.

        Args:
            name: A hook of the audit (``world``, ``observe``, ``observe_batch``, ``one_run``, ``positions``…).
            owner: Whose audit it is, for the error of an entry point that cannot be loaded.

        Returns:
            The callable, or ``None`` if the field is not given.
        """
        value = getattr(self, name, None)
        return None if value is None else load(value, what=f"{owner}'s {name}")


@dataclass(frozen=True)
class ReportSpec:
    """What a report says about the algorithm.

    Attributes:
        assumptions: The assumptions under which its declared sensitivities hold, one sentence each.
        sections: Its optional sections (:data:`REPORT_SECTIONS`).

    Raises:
        TypeError: A field that is not a tuple of non-empty strings.
        ValueError: An unknown section.
    """

    assumptions: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "assumptions", _names("assumptions", self.assumptions))
        object.__setattr__(self, "sections", _names("sections", self.sections))
        unknown = sorted(set(self.sections) - set(REPORT_SECTIONS))
        if unknown:
            raise ValueError(f"sections must be among {', '.join(REPORT_SECTIONS)}, got {unknown}")


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm, as dpkit knows it.

    Only ``name`` and ``entry_point`` are required: an algorithm without ``declaration`` and ``audit`` is a non-private
    baseline (simulated, never ledgered, audited or reported); one with an ``audit`` but no ``declaration`` is audited
    against its agents' declarations (a user's agent: ``dpkit audit --agent``) but has no ledger or report of its own.
    The protocols of the entry points: docs/explanation/observers.md.

    Attributes:
        name: The registered name (no spaces).
        entry_point: ``entry_point(name, env, episodes, rng, *, epsilon, delta, sigma, **options)`` → an agent.
        environment: What it runs on (:data:`ENVIRONMENT_KINDS`).
        summary: One line about it.
        declaration: ``declaration(epsilon, delta, parameters)`` → its ``PrivacyDeclaration``.
        required: The parameters its declaration needs.
        optional: The parameters its declaration may take.
        default_epsilon: ``default_epsilon(delta, parameters)`` → its ε when none is targeted.
        ledger_parameters: ``ledger_parameters(sizes, env_seed)`` → its declaration's parameters for a regret run.
        audit: How the RL audits run it, for an algorithm registered outside dpkit (a plugin, a user's agent); ``None``
            for the built-ins, whose audits are registered on the audits' side (:mod:`dpkit.audits.rl.registry`),
            and for an algorithm that is not audited.
        report: What a report says about it.

    Raises:
        TypeError: A field of the wrong kind.
        ValueError: A bad name or environment, or a ``default_epsilon`` without a declaration.
    """

    name: str
    entry_point: EntryPoint
    environment: str = "tabular"
    summary: str = ""
    declaration: EntryPoint | None = None
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    default_epsilon: EntryPoint | None = None
    ledger_parameters: EntryPoint | None = None
    audit: AuditSpec | None = None
    report: ReportSpec = field(default_factory=ReportSpec)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or self.name != self.name.strip() or " " in self.name:
            raise ValueError(f"an algorithm's name must be a non-empty string without spaces, got {self.name!r}")
        _check_entry_point("entry_point", self.entry_point, optional=False)
        if self.environment not in ENVIRONMENT_KINDS:
            raise ValueError(f"environment must be one of {', '.join(ENVIRONMENT_KINDS)}, got {self.environment!r}")
        for name in ("declaration", "default_epsilon", "ledger_parameters"):
            _check_entry_point(name, getattr(self, name))
        object.__setattr__(self, "required", _names("required", self.required))
        object.__setattr__(self, "optional", _names("optional", self.optional))
        if self.audit is not None and not isinstance(self.audit, AuditSpec):
            raise TypeError(f"audit must be an AuditSpec, got {type(self.audit).__name__}")
        if not isinstance(self.report, ReportSpec):
            raise TypeError(f"report must be a ReportSpec, got {type(self.report).__name__}")
        if self.declaration is None and self.default_epsilon is not None:
            raise ValueError(f"{self.name} has no declaration: it has no ε of its own")

    @property
    def private(self) -> bool:
        """Whether the algorithm registers its declaration (so it has a ledger and can be reported).

        An audit-only spec (a user's agent) declares its releases through its agents instead.
        """
        return self.declaration is not None

    @property
    def lq(self) -> bool:
        """Whether the algorithm runs on LQ systems."""
        return self.environment == "lq"

    def make_agent(self) -> Callable[..., Any]:
        """The agent factory (the entry point, loaded).

        Returns:
            The factory.
        """
        return load(self.entry_point, what=f"{self.name}'s entry_point")

    def hook(self, name: str) -> Callable[..., Any] | None:
        """The loaded callable of the spec's field ``name``.

        Args:
            name: A field of the spec (``declaration``, ``default_epsilon``, ``ledger_parameters``…).

        Returns:
            The callable, or ``None`` if the field is not given.
        """
        value = getattr(self, name, None)
        return None if value is None else load(value, what=f"{self.name}'s {name}")
