"""The configuration of a report: which algorithms, at which sizes and privacy levels, audited how.

:func:`load_config` reads a TOML file (default: ``reports/default.toml``) and validates it *whole* before anything
runs; an error names its key. Every key: see docs/reference/config.md.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from dpkit.accountant.sensitivity import Relation
from dpkit.accountant.validation import check_positive, check_probability
from dpkit.algorithms import registry
from dpkit.algorithms.envs.catalog import EXTERNAL_FORMS, external_sizes
from dpkit.algorithms.envs.from_gymnasium import is_external
from dpkit.algorithms.limits import (
    AUDIT_LIMITS,
    LIMITS,
    MAX_DELTAS,
    MAX_ENTRIES,
    MAX_GRID_POINTS,
    MAX_STEPS,
    check_releases,
)
from dpkit.algorithms.registry import declare
from dpkit.algorithms.simulation import SIMULATED_ENVIRONMENTS, Experiment, check_options
from dpkit.audit_modes import AuditMode
from dpkit.data_files import parse_data, read_text_file, shown

from .files import LedgerFile
from .messages import BlamedKeyError, first_error

if TYPE_CHECKING:
    from dpkit.accountant.events import Event
    from dpkit.accountant.ledger import Ledger

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_DELTAS",
    "POSITIONS",
    "AUDIT_MODES",
    "AuditMode",
    "SEQUENTIAL_MIN_RUNS",
    "AuditConfig",
    "AlgorithmConfig",
    "LedgerConfig",
    "LEDGER_KINDS",
    "QuickConfig",
    "ReportConfig",
    "load_config",
    "config_schema",
    "parse_config",
]

#: The name under which the shipped default configuration is recorded.
DEFAULT_CONFIG = "default"
#: δ of the ε(δ) curves unless the config gives ``deltas``.
DEFAULT_DELTAS: tuple[float, ...] = tuple(10.0**-e for e in range(10, 0, -1))
POSITIONS: tuple[str, ...] = ("first", "middle", "last")


#: The modes of :class:`AuditMode` a report audits in (one run with canaries is the front door's, not a report's).
AUDIT_MODES: tuple[str, ...] = (AuditMode.FIXED.value, AuditMode.SEQUENTIAL.value)
#: The fewest runs per dataset of a sequential audit (``dpkit.audits.sequential_plan.MIN_RUNS``, written out so that
#: reading a config imports no audit; a test keeps them equal).
SEQUENTIAL_MIN_RUNS = 200
#: What a ``[[ledger]]`` entry's file holds: a ledger file (``[[release]]``) or an event file.
LEDGER_KINDS: tuple[str, ...] = ("ledger file", "event file")
_SIGMA_WORDS = ("paper", "tight")


class _Model(BaseModel):
    """A config table: immutable, unknown keys refused, no silent coercion (``"5"`` is not 5, 2.5 not 2); a vocabulary
    (a StrEnum: its schema lists the values) is kept as the plain string read."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, use_enum_values=True)


def _sigma(value: object) -> str | float:
    """``paper``, ``tight`` or a finite number >= 0."""
    if isinstance(value, str):
        if value not in _SIGMA_WORDS:
            raise ValueError(f"must be 'paper', 'tight' or a number >= 0, got {shown(value)}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"must be 'paper', 'tight' or a number >= 0, got {shown(value)}")
    if value < 0:
        raise ValueError(f"must be >= 0, got {value!r}")
    return float(value)


def _report_mode(value: object) -> object:
    """``fixed`` or ``sequential``: the modes of :class:`AuditMode` a report audits in."""
    if value not in AUDIT_MODES:
        raise ValueError(f"must be 'fixed' or 'sequential', got {shown(value)}")
    return value


def _number(value: object) -> float:
    """An int or float (not a bool, not a string) as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"must be a finite number, got {shown(value)}")
    return float(value)


Count = Annotated[StrictInt, Field(ge=1)]


#: The sizes of a run, each a count >= 1 of at most its limit (:data:`dpkit.algorithms.limits.LIMITS`, in the schema).
Episodes = Annotated[StrictInt, Field(ge=1, le=LIMITS["episodes"])]
Seeds = Annotated[StrictInt, Field(ge=1, le=LIMITS["seeds"])]
States = Annotated[StrictInt, Field(ge=1, le=LIMITS["states"])]
Actions = Annotated[StrictInt, Field(ge=1, le=LIMITS["actions"])]
Horizon = Annotated[StrictInt, Field(ge=1, le=LIMITS["horizon"])]
StateDim = Annotated[StrictInt, Field(ge=1, le=LIMITS["state_dim"])]
ControlDim = Annotated[StrictInt, Field(ge=1, le=LIMITS["control_dim"])]
Workers = Annotated[StrictInt, Field(ge=1, le=LIMITS["workers"])]
#: The runs of an audit (>= 6: train, selection and evaluation splits) and its users (>= 2), at most their limits.
AuditRuns = Annotated[StrictInt, Field(ge=6, le=AUDIT_LIMITS["runs"])]
AuditEpisodes = Annotated[StrictInt, Field(ge=2, le=AUDIT_LIMITS["episodes"])]
FiniteNumber = Annotated[float, Field(allow_inf_nan=False), BeforeValidator(_number)]


class AuditConfig(_Model):
    """How one algorithm is audited (``dpkit.audits.rl.audit_registered_algorithm``, i.e. ``dpkit audit ALGORITHM``).

    The audit runs in its own small setting (``dpkit.audits.rl.default_setting``: a few users, where the
    canaries realise most of the declared sensitivity) at the algorithm's target (ε, δ);
    ``episodes`` (None: the audit's default) is the number of users per run. ``mode`` is ``fixed`` (``runs`` runs
    on each dataset at each position) or ``sequential`` (``dpkit audit ALGORITHM --sequential``: the same setting,
    runs and seed, in batches that stop at the first violation; each position's budget is at most 1.3 × ``runs``,
    and ``runs`` must be at least :data:`SEQUENTIAL_MIN_RUNS`).
    """

    model_config = ConfigDict(
        **_Model.model_config,
        json_schema_extra={  # the schema states the sequential audit's fewest runs too
            "if": {"properties": {"mode": {"const": "sequential"}}, "required": ["mode"]},
            "then": {"properties": {"runs": {"minimum": SEQUENTIAL_MIN_RUNS}}},
        },
    )

    enabled: StrictBool = True
    sigma: Annotated[str | float, BeforeValidator(_sigma)] = "tight"
    observer: StrictStr | None = None
    runs: AuditRuns = 4000
    episodes: AuditEpisodes | None = None
    #: where the changed user sits: a name of the algorithm's positions, ``k=INDEX`` or an index; None (default):
    #: every position that matters, each at its share of α
    position: StrictStr | Annotated[StrictInt, Field(ge=0, le=AUDIT_LIMITS["episodes"] - 1)] | None = None
    #: fixed (default) or sequential (:class:`AuditMode`)
    mode: Annotated[Literal[AuditMode.FIXED, AuditMode.SEQUENTIAL], BeforeValidator(_report_mode)] = Field(
        default=AuditMode.FIXED, validate_default=True
    )

    @model_validator(mode="after")
    def _enough_runs(self) -> AuditConfig:
        if self.mode == AuditMode.SEQUENTIAL and self.runs < SEQUENTIAL_MIN_RUNS:
            why = f"must be >= {SEQUENTIAL_MIN_RUNS} for a sequential audit (mode = 'sequential'), got {self.runs}"
            raise BlamedKeyError("runs", why)
        return self

    def to_dict(self) -> dict[str, Any]:
        """The audit's configuration as plain data (JSON-ready).

        Returns:
            Its fields.
        """
        return {
            "enabled": self.enabled,
            "sigma": self.sigma,
            "observer": self.observer,
            "runs": self.runs,
            "episodes": self.episodes,
            "position": self.position,
            "mode": self.mode,
        }


class AlgorithmConfig(_Model):
    """One algorithm of the report: its environment, sizes, target (ε, δ) and audit."""

    name: StrictStr
    episodes: Episodes
    delta: FiniteNumber
    epsilon: FiniteNumber | None = None
    env: StrictStr = ""  # "": the algorithm's own default (lq for the LQ algorithms, riverswim otherwise)
    states: States = 2
    actions: Actions = 2
    horizon: Horizon | None = None
    state_dim: StateDim = 2
    control_dim: ControlDim = 1
    episode_grid: Annotated[tuple[Episodes, ...], Field(min_length=1, max_length=MAX_GRID_POINTS)] | None = None
    #: the regret runs' agent options (its factory's keywords, e.g. ``preset = "learning"``), checked on one agent
    options: dict[StrictStr, StrictStr | StrictBool | StrictInt | StrictFloat] = Field(default_factory=dict)
    #: one sentence the regret section prints beside its table: why this world and these options
    regret_note: StrictStr | None = None
    audit: AuditConfig = Field(default_factory=AuditConfig)

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        choices = registry.names(private=True)
        if name not in choices:
            close = difflib.get_close_matches(name, choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"must be one of {', '.join(choices)}, got {shown(name)}{hint}")
        return name

    @field_validator("episode_grid")
    @classmethod
    def _sorted(cls, grid: tuple[int, ...] | None) -> tuple[int, ...] | None:
        return None if grid is None else tuple(sorted(set(grid)))

    @model_validator(mode="after")
    def _consistent(self) -> AlgorithmConfig:
        if not self.env:
            object.__setattr__(self, "env", "lq" if self.lq else "riverswim")
        if self.env not in SIMULATED_ENVIRONMENTS and not is_external(self.env):
            raise BlamedKeyError(
                "env",
                f"must be one of {', '.join(SIMULATED_ENVIRONMENTS)}, or {' or '.join(EXTERNAL_FORMS)}, got "
                f"{shown(self.env)}",
            )
        if is_external(self.env):  # a user's environment: its model fixes S and A
            if self.lq:
                raise BlamedKeyError("env", f"{self.name} runs on an LQ system, not on {shown(self.env)}")
            try:
                s_, a_ = external_sizes(self.env, self.horizon or 1)
            except ValueError as err:
                raise BlamedKeyError("env", str(err)) from None
            for key, value in (("states", s_), ("actions", a_)):
                if key in self.model_fields_set and getattr(self, key) != value:
                    raise BlamedKeyError(key, f"{self.env} has {key} = {value}, got {getattr(self, key)}")
                object.__setattr__(self, key, value)
        from dpkit.audits.rl.registry import audit_of

        if self.audit.enabled and audit_of(self.spec) is None:
            raise BlamedKeyError("audit", f"{self.name} registers no audit: set audit.enabled = false")
        if self.episode_grid is not None and "rlsvi" not in self.spec.report.sections:
            raise BlamedKeyError("episode_grid", f"applies to rlsvi (its per-run privacy figure) only, not {self.name}")
        try:
            check_probability("delta", self.delta)
            if self.epsilon is not None:
                check_positive("epsilon", self.epsilon)
            elif self.spec.default_epsilon is None:
                raise ValueError(f"{self.name} needs a target epsilon")
            for sigma in _SIGMA_WORDS:  # the two regret experiments: sizes, environment, σ
                self.experiment(sigma, 0)
            if self.options:
                check_options(self.experiment(_SIGMA_WORDS[0], 0))
            if self.episode_grid is not None and max(self.episode_grid) > self.episodes:
                raise ValueError(
                    f"episode_grid must not exceed episodes = {self.episodes}, got {max(self.episode_grid)}"
                )
        except ValueError as err:
            raise BlamedKeyError("", f"({self.name}): {err}") from None
        if self.audit.enabled and self.audit.position is not None:
            from dpkit.audits.rl import default_setting

            a = self.audit
            try:
                default_setting(self.name, **self.audit_overrides(), position=a.position)
            except (ValueError, TypeError) as err:
                raise BlamedKeyError("audit.position", str(err)) from None
        return self

    def audit_overrides(self) -> dict[str, Any]:
        """The fields of the audit's setting this entry sets (``dpkit.audits.rl.default_setting``).

        Returns:
            σ, observer, users per run, and — on a user's environment — the environment and its horizon.
        """
        a = self.audit
        out: dict[str, Any] = {"sigma": a.sigma, "observer": a.observer, "episodes": a.episodes}
        if is_external(self.env):
            out |= {"env": self.env, "horizon": self.horizon or 2 * self.states}
        return out

    @property
    def spec(self) -> registry.AlgorithmSpec:
        """The algorithm's registration (:mod:`dpkit.algorithms.registry`)."""
        return registry.get(self.name, private=True)

    @property
    def lq(self) -> bool:
        """Whether the algorithm runs on an LQ system (else a tabular MDP)."""
        return self.spec.lq

    def experiment(self, sigma: str | float, env_seed: int) -> Experiment:
        """The regret experiment of this algorithm at ``sigma``.

        Args:
            sigma: ``"paper"``, ``"tight"`` or a number.
            env_seed: The seed of the environment's draw.

        Returns:
            The experiment the regret runs simulate.
        """
        return Experiment(
            algorithm=self.name,
            env=self.env,
            episodes=self.episodes,
            states=self.states,
            actions=self.actions,
            horizon=self.horizon,
            epsilon=self.epsilon,
            delta=self.delta,
            sigma=sigma,
            state_dim=self.state_dim,
            control_dim=self.control_dim,
            env_seed=env_seed,
            options=tuple(sorted(self.options.items())),
        )

    def to_dict(self) -> dict[str, Any]:
        """The algorithm's entry as plain data (JSON-ready).

        Returns:
            Its fields, its audit's as a table.
        """
        grid = None if self.episode_grid is None else list(self.episode_grid)
        return self.model_dump() | {"episode_grid": grid, "options": dict(self.options), "audit": self.audit.to_dict()}


class QuickConfig(_Model):
    """The caps ``--quick`` puts on a report's sizes (a sequential audit keeps at least the
    :data:`SEQUENTIAL_MIN_RUNS` runs it needs)."""

    episodes: Episodes = 150
    seeds: Seeds = 2
    audit_runs: AuditRuns = 200
    audit_episodes: AuditEpisodes = 8

    def to_dict(self) -> dict[str, Any]:
        """The ``--quick`` caps as plain data (JSON-ready).

        Returns:
            Its fields.
        """
        return {
            "episodes": self.episodes,
            "seeds": self.seeds,
            "audit_runs": self.audit_runs,
            "audit_episodes": self.audit_episodes,
        }


Delta = Annotated[float, Field(gt=0.0, lt=1.0, allow_inf_nan=False), BeforeValidator(_number)]
_NO_ENTRY = "is required unless ledger is given: a config needs at least one [[algorithm]] or [[ledger]] entry"


def _is_dp_event(data: object) -> bool:
    """Whether parsed JSON is dp-accounting's DpEvent form (module and class names), which states no relation."""
    return isinstance(data, dict) and ("module_name" in data or "class_name" in data)


def read_target(path: Path, relation: Relation | str | None = None) -> tuple[str, Ledger | Event]:
    """Read a ledger or event file.

    Args:
        path: A ledger file (TOML or JSON, a ``release`` table) or an event file (dpkit's event JSON or a DpEvent).
        relation: The neighbouring relation, for DpEvent files only.

    Returns:
        ``("ledger file", Ledger)`` or ``("event file", Event)``.

    Raises:
        BlamedKeyError: If ``relation`` is given for a file that is not a DpEvent.
        ValueError: If the file cannot be read as either (a TOML file must be a ledger file).
    """
    from dpkit.accountant.interop import load_event

    text = read_text_file(path, "ledger or event file")  # bounded: size cap, UTF-8, a regular file
    toml = path.suffix.lower() == ".toml"
    data = parse_data(text, toml=toml, what=f"file {str(path)!r}")  # nesting bounded
    if isinstance(data, dict) and "release" in data:
        if relation is not None:
            raise BlamedKeyError(
                "relation", "applies to DpEvent files only, not a ledger file (its Δ carry their relation)"
            )
        try:
            ledger = LedgerFile.model_validate(data).ledger()
        except ValidationError as err:
            raise ValueError(first_error(err)) from None
        check_releases("the file", ledger)
        return "ledger file", ledger
    if toml:
        raise ValueError("a TOML file must be a ledger file (a [[release]] array); an event file is JSON")
    if relation is not None and not _is_dp_event(data):
        raise BlamedKeyError("relation", "applies to DpEvent files only (dpkit's event JSON states its own relation)")
    event = load_event(text, relation=relation)
    check_releases("the file", event)
    return "event file", event


class LedgerConfig(_Model):
    """A ledger or event file reported beside the algorithms: what its noise certifies at δ, against an
    optional claimed ε, for an optional number of users K.

    ``file`` is as written in the config (relative to the config's folder); :attr:`path` is it resolved, and
    the file is read and validated when the entry is (:meth:`target` returns its ledger or event without
    reading it again). ``delta`` lies in (0, 1): δ = 1 certifies ε = 0 for every mechanism, which is not a
    useful target. ``relation`` is for DpEvent files, which state none (they are read under add_remove
    otherwise); a ledger file's Δ and dpkit's event JSON carry their own.
    """

    name: StrictStr
    file: StrictStr
    delta: Delta
    epsilon: FiniteNumber | None = None
    users: Count | None = None
    relation: Relation | None = None
    _path: str = PrivateAttr(default="")
    _kind: str = PrivateAttr(default="")
    _target: Any = PrivateAttr(default=None)

    @field_validator("name")
    @classmethod
    def _named(cls, name: str) -> str:
        if not name.strip():
            raise ValueError(f"must be a non-empty string, got {shown(name)}")
        return name

    @model_validator(mode="after")
    def _read(self, info: ValidationInfo) -> LedgerConfig:
        if self.epsilon is not None and not self.epsilon > 0.0:
            raise BlamedKeyError("epsilon", f"must be > 0, got {self.epsilon!r}")
        base = (info.context or {}).get("base") if info is not None else None
        path = (Path(base) if base is not None else Path.cwd()) / self.file
        try:
            kind, target = read_target(path.resolve(), self.relation)
        except BlamedKeyError:
            raise
        except ValueError as err:
            raise BlamedKeyError("file", f"{shown(self.file)}: {err}") from None
        self._path, self._kind, self._target = str(path.resolve()), kind, target
        return self

    @property
    def path(self) -> str:
        """The file's absolute path (``file`` resolved against the config's folder)."""
        return self._path

    @property
    def kind(self) -> str:
        """``"ledger file"`` or ``"event file"`` (:data:`LEDGER_KINDS`)."""
        return self._kind

    def target(self) -> Ledger | Event:
        """The ledger (a ledger file) or event (an event file) the entry names, as read when it was validated.

        Returns:
            The :class:`~dpkit.accountant.ledger.Ledger` or the event.
        """
        target: Ledger | Event = self._target
        return target

    def to_dict(self) -> dict[str, Any]:
        """The ledger entry as plain data (JSON-ready).

        Returns:
            Its fields (the file as written and as resolved).
        """
        return {
            "name": self.name,
            "file": self.file,
            "path": self.path,
            "kind": self.kind,
            "delta": self.delta,
            "epsilon": self.epsilon,
            "users": self.users,
            "relation": self.relation,
        }


class ReportConfig(_Model):
    """A whole report: global seeds and workers, the ε(δ) grid, the algorithms and the ledger files.

    ``algorithm`` and ``ledger`` (the TOML arrays of tables ``[[algorithm]]`` and ``[[ledger]]``) are read into
    :attr:`algorithms` and :attr:`ledgers`; at least one entry is needed in all. ``source`` and ``is_quick``
    are not keys of the file: they record where it came from.
    """

    model_config = ConfigDict(
        **_Model.model_config,
        json_schema_extra={"anyOf": [{"required": ["algorithm"]}, {"required": ["ledger"]}]},
    )

    # given, each array is non-empty; one of the two is needed (checked by _one_entry_each)
    algorithms: Annotated[
        tuple[AlgorithmConfig, ...], Field(alias="algorithm", min_length=1, max_length=MAX_ENTRIES)
    ] = ()
    ledgers: Annotated[tuple[LedgerConfig, ...], Field(alias="ledger", min_length=1, max_length=MAX_ENTRIES)] = ()
    title: StrictStr = "dpkit privacy report"
    seed: Annotated[StrictInt, Field(ge=0)] = 0  # not a size: any seed is drawn from as cheaply
    seeds: Seeds = 3
    workers: Workers = 1
    deltas: Annotated[tuple[Delta, ...], Field(min_length=1, max_length=MAX_DELTAS)] = DEFAULT_DELTAS
    plugins: Annotated[tuple[StrictStr, ...], Field(max_length=MAX_ENTRIES)] = ()
    quick: QuickConfig = Field(default_factory=QuickConfig)
    source: Annotated[str, Field(exclude=True)] = DEFAULT_CONFIG
    is_quick: Annotated[bool, Field(exclude=True)] = False

    @field_validator("deltas")
    @classmethod
    def _deltas(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        """Sorted, each once (after validation, so an error names the δ's own place in the file)."""
        return tuple(sorted(set(value)))

    @model_validator(mode="after")
    def _one_entry_each(self) -> ReportConfig:
        if not self.algorithms and not self.ledgers:
            raise BlamedKeyError("algorithm", _NO_ENTRY)
        names = [a.name for a in self.algorithms]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise BlamedKeyError(
                "algorithm", f"{shown(duplicated[0])} appears more than once (one entry per algorithm)"
            )
        for i, entry in enumerate(self.ledgers):
            if entry.name in names:
                taken = "an algorithm" if entry.name in names[: len(self.algorithms)] else "another ledger"
                raise BlamedKeyError(
                    f"ledger[{i}].name",
                    f"{shown(entry.name)} is taken by {taken} entry (names of algorithm and ledger entries differ)",
                )
            names.append(entry.name)
        for i, a in enumerate(self.algorithms):  # the total work of its runs, as dpkit simulate bounds it
            experiment = a.experiment("paper", 0)
            runs = a.episodes * self.seeds + sum(a.episode_grid or ())  # regret runs (per σ) and RLSVI runs
            steps = runs * experiment.steps_per_episode
            if steps > MAX_STEPS:
                raise BlamedKeyError(
                    f"algorithm[{i}]",
                    f"({a.name}): (episodes × seeds + Σ episode_grid) × horizon = {steps:,} steps is above the "
                    f"limit of {MAX_STEPS:,}: lower episodes, seeds or horizon",
                )
        return self

    def shrunk(self) -> ReportConfig:
        """The ``--quick`` version: episodes, seeds and audit sizes capped by :attr:`quick`.

        Returns:
            A new configuration.
        """
        q = self.quick
        algorithms = []
        for a in self.algorithms:
            episodes = min(a.episodes, q.episodes)
            grid = a.episode_grid
            if grid is not None and max(grid) > episodes:  # keep the points below the cap, end at the cap
                grid = tuple(sorted({k for k in grid if k < episodes} | {episodes}))
            audit_episodes = a.audit.episodes if a.audit.episodes is None else min(a.audit.episodes, q.audit_episodes)
            runs = min(a.audit.runs, q.audit_runs)
            if (
                a.audit.mode == AuditMode.SEQUENTIAL
            ):  # not below the runs a sequential audit needs (its runs are at least that)
                runs = max(runs, SEQUENTIAL_MIN_RUNS)
            audit = a.audit.model_copy(update={"runs": runs, "episodes": audit_episodes})
            algorithms.append(a.model_copy(update={"episodes": episodes, "episode_grid": grid, "audit": audit}))
        return self.model_copy(  # ledger entries have nothing to shrink: they are kept as they are
            update={"algorithms": tuple(algorithms), "seeds": min(self.seeds, q.seeds), "is_quick": True}
        )

    def to_dict(self) -> dict[str, Any]:
        """The whole configuration as plain data (JSON-ready).

        Returns:
            Its fields, every entry's as a table.
        """
        return {
            "source": self.source,
            "quick": self.is_quick,
            "title": self.title,
            "seed": self.seed,
            "seeds": self.seeds,
            "workers": self.workers,
            "deltas": list(self.deltas),
            "plugins": list(self.plugins),
            "quick_caps": self.quick.to_dict(),
            "algorithms": [a.to_dict() for a in self.algorithms],
            "ledgers": [entry.to_dict() for entry in self.ledgers],
        }


def parse_config(data: Mapping[str, Any], source: str = DEFAULT_CONFIG) -> ReportConfig:
    """Validate a parsed TOML document and build the :class:`ReportConfig`.

    Args:
        data: The parsed TOML document.
        source: Where it was read from, for the messages and for resolving relative files.

    Returns:
        The validated configuration.

    Raises:
        ValueError: Naming the first bad key (unknown, wrong type, out of range, or rejected by its experiment).
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"a config must be a table, got {shown(data)}")
    for key in ("algorithm", "ledger"):
        if key in data and not (isinstance(data[key], list) and data[key]):
            raise ValueError(f"{key} must be a non-empty array of tables ([[{key}]]), got {shown(data[key])}")
    for key in ("algorithm", "ledger", "plugins"):  # before any entry is read: each may load or read a file
        if isinstance(data.get(key), list) and len(data[key]) > MAX_ENTRIES:
            raise ValueError(f"{key} has {len(data[key]):,} entries, above the limit of {MAX_ENTRIES}")
    if "algorithm" not in data and "ledger" not in data:
        raise ValueError(f"algorithm {_NO_ENTRY}")
    if "source" in data or "is_quick" in data or "algorithms" in data or "ledgers" in data:
        bad = next(k for k in ("source", "is_quick", "algorithms", "ledgers") if k in data)
        raise ValueError(f"unknown key {bad!r}")
    data = dict(data)
    base = Path.cwd() if source == DEFAULT_CONFIG else Path(source).resolve().parent
    if "plugins" in data:
        data["plugins"] = load_plugins(data["plugins"], base)
    try:
        config = ReportConfig.model_validate(
            {**data, "source": source}, by_alias=True, by_name=False, context={"base": str(base)}
        )
    except ValidationError as err:
        raise ValueError(first_error(err)) from None
    for i, a in enumerate(config.algorithms):  # the ledger's parameters (the same as dpkit ledger's)
        try:
            declare(a.name, a.epsilon, a.delta, **ledger_parameters(a, config.seed))
        except ValueError as err:
            raise ValueError(f"algorithm[{i}] ({a.name}): {err}") from None
    return config


def _plugin_specs(reference: str) -> tuple[registry.AlgorithmSpec, ...]:
    """The AlgorithmSpecs named by ``FILE.py:NAME`` (an absolute path) or ``module:NAME``."""
    import importlib

    from dpkit.loading import load_object

    path, _, name = reference.rpartition(":")
    if path.endswith(".py"):
        obj = load_object("plugins", reference)
    else:
        try:
            obj = getattr(importlib.import_module(path), name)
        except (ImportError, AttributeError) as err:
            raise ValueError(f"cannot load {reference!r}: {type(err).__name__}: {err}") from None
    if callable(obj) and not isinstance(obj, registry.AlgorithmSpec):  # a user's agent factory (either protocol)
        from dpkit.audits.rl.user_agents import agent_spec
        from dpkit.loading import FileFunction

        factory = FileFunction("plugins", reference) if path.endswith(".py") else obj  # workers load it again
        try:
            obj = agent_spec(factory, name=name)
        except TypeError as err:
            raise ValueError(f"{reference!r}: {err}") from None
    specs = (obj,) if isinstance(obj, registry.AlgorithmSpec) else obj
    if (
        not isinstance(specs, (tuple, list))
        or not specs
        or not all(isinstance(x, registry.AlgorithmSpec) for x in specs)
    ):
        raise ValueError(
            f"{reference!r} must name an AlgorithmSpec, a non-empty sequence of them, or an agent factory following "
            "the messages or the billboard protocol"
        )
    return tuple(specs)


def plugin_names(references: tuple[str, ...]) -> frozenset[str]:
    """The names of the algorithms ``references`` register.

    Args:
        references: The plugins' references (``FILE.py:NAME`` or ``module:NAME``).

    Returns:
        The algorithms' names.
    """
    return frozenset(spec.name for reference in references for spec in _plugin_specs(reference))


def register_plugins(references: tuple[str, ...]) -> None:
    """Register the algorithms of ``references`` in this process: what a report's worker processes run first.

    Args:
        references: The references as :func:`load_plugins` returns them (file-loaded specs cannot be pickled).
    """
    for reference in references:
        for spec in _plugin_specs(reference):
            if spec.name in registry.names() and registry.get(spec.name) is spec:
                continue
            registry.register(spec, replace=registry.is_runtime(spec.name))


def load_plugins(value: object, base: Path) -> tuple[str, ...]:
    """Check ``plugins``, register their algorithms here, and return the references with files made absolute.

    Args:
        value: The config's ``plugins``: a list of ``FILE.py:NAME`` or ``module:NAME``.
        base: The folder ``FILE.py`` paths are relative to (the config's).

    Returns:
        The references, files absolute (so that workers can load them again).

    Raises:
        ValueError: If ``value`` is not such a list, a reference does not load, or its name is already taken.
    """
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"plugins must be a list of strings FILE.py:NAME or module:NAME, got {shown(value)}")
    out = []
    for i, reference in enumerate(value):
        path, sep, name = reference.rpartition(":")
        if not sep or not path or not name.isidentifier():
            raise ValueError(f"plugins[{i}] must be FILE.py:NAME or module:NAME, got {reference!r}")
        if path.endswith(".py"):
            reference = f"{(base / path).resolve()}:{name}"
        try:
            for spec in _plugin_specs(reference):
                if spec.name in registry.names() and not registry.is_runtime(spec.name):
                    raise ValueError(f"{spec.name!r} is already registered by dpkit or an installed plugin")
            register_plugins((reference,))
        except ValueError as err:
            raise ValueError(f"plugins[{i}]: {err}") from None
        out.append(reference)
    return tuple(out)


def config_schema() -> dict[str, Any]:
    """The JSON schema of a report configuration, generated from the models (``reports/config.schema.json``).

    Returns:
        The schema, as plain data.
    """
    schema = ReportConfig.model_json_schema(by_alias=True, mode="validation")
    for name in ("source", "is_quick"):
        schema["properties"].pop(name, None)
    schema["title"] = "dpkit report configuration"
    return schema


def load_config(path: str | Path | None = None) -> ReportConfig:
    """Read and validate a TOML report configuration.

    Args:
        path: The TOML file; None reads the shipped default.

    Returns:
        The validated configuration.

    Raises:
        ValueError: If the file cannot be read or a key is bad (the message names the file and the key).
    """
    if path is None:
        text = resources.files("dpkit.reports").joinpath("default.toml").read_text(encoding="utf-8")
        source = DEFAULT_CONFIG
    else:
        p = Path(path)
        source = str(p)
        text = read_text_file(p, "config file")  # bounded: size cap, UTF-8, a regular file (not /dev/zero)
    data = parse_data(text, toml=True, what=f"config file {source!r}")  # nesting depth bounded
    assert isinstance(data, Mapping)  # a TOML document is a table
    try:
        return parse_config(data, source)
    except ValueError as err:
        raise ValueError(f"config {source!r}: {err}") from None


def ledger_parameters(a: AlgorithmConfig, env_seed: int) -> dict[str, Any]:
    """The parameters of ``dpkit.algorithms.registry.declare`` that describe the algorithm as the regret runs use it.

    Args:
        a: The algorithm's entry.
        env_seed: The seed of the environment's draw.

    Returns:
        The declaration's parameters (as ``dpkit ledger`` takes them), sizes from the environment the runs face.

    Raises:
        ValueError: If the algorithm registers no ``ledger_parameters``.
    """
    hook = a.spec.hook("ledger_parameters")
    if hook is None:
        raise ValueError(f"{a.name} registers no ledger_parameters: it cannot be reported")
    return dict(hook(a, env_seed))
