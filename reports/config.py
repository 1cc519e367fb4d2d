"""The configuration of a report: which algorithms, at which sizes and privacy levels, audited how.

A report is described by a TOML file (read with :mod:`tomllib`); :func:`load_config` reads and
validates the *whole* file before anything is computed, so a bad file costs nothing and writes
nothing. Every error is a :class:`ValueError` that names the offending key, e.g.
``algorithm[1].audit.runs``. ``reports/default.toml`` (package data) is the default.

Top level::

    title = "…"            # optional
    seed = 0               # base seed: regret seeds seed … seed + seeds − 1; environments, audits, RLSVI: seed
    seeds = 5              # regret runs per algorithm and σ
    workers = 2            # processes for the regret runs (1: everything in this process)
    deltas = [1e-10, …]    # optional: the δ grid of the ε(δ) curves (the algorithm's δ is always added)

    [quick]                # what --quick shrinks to (each a cap)
    episodes = 150
    seeds = 2
    audit_runs = 200
    audit_episodes = 8     # caps [algorithm.audit] episodes where one is given

    [[algorithm]]
    name = "ldp-ucrl-vtr"  # one of the five private seed algorithms
    env = "riverswim"      # riverswim, riverswim-inhomogeneous, tabular; lq for private-ofu-rl
    states = 2             # tabular: S (and actions A, horizon H = 2S unless given)
    episodes = 2000        # K of the regret runs (and of the ledger: tree counters, RLSVI)
    epsilon = 1.0          # target ε (optional for rlsvi: the paper's own ε(δ))
    delta = 0.1
    episode_grid = […]     # rlsvi only, optional: the K of the per-run privacy figure

    [algorithm.audit]
    enabled = true
    sigma = "tight"        # paper, tight or a number
    observer = "…"         # optional: the audit's default observer otherwise
    runs = 4000            # runs on each of the two neighbouring datasets
    episodes = 8           # optional: users per run (default: the audit's own small setting)
    position = "first"     # where the changed user sits: first, middle or last
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from dpkit.accountant.validation import check_choice, check_count, check_index, check_positive, check_probability
from dpkit.algorithms.registry import ALGORITHM_NAMES, declare
from dpkit.algorithms.simulation import LQ_ALGORITHMS, SIMULATED_ENVIRONMENTS, Experiment
from dpkit.loading import parse_data, read_text_file

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_DELTAS",
    "POSITIONS",
    "AuditConfig",
    "AlgorithmConfig",
    "QuickConfig",
    "ReportConfig",
    "load_config",
    "parse_config",
]

#: The name under which the shipped default configuration is recorded.
DEFAULT_CONFIG = "default"
#: δ of the ε(δ) curves unless the config gives ``deltas``.
DEFAULT_DELTAS: tuple[float, ...] = tuple(10.0**-e for e in range(10, 0, -1))
POSITIONS: tuple[str, ...] = ("first", "middle", "last")
_SIGMA_WORDS = ("paper", "tight")


@dataclass(frozen=True)
class AuditConfig:
    """How one algorithm is audited (``dpkit.audits.rl.audit_algorithm``, i.e. ``dpkit audit ALGORITHM``).

    The audit runs in its own small setting (``dpkit.audits.rl.default_setting``: a few users, where the
    canaries realise most of the declared sensitivity) at the algorithm's target (ε, δ);
    ``episodes`` (None: the audit's default) is the number of users per run.
    """

    enabled: bool = True
    sigma: str | float = "tight"
    observer: str | None = None
    runs: int = 4000
    episodes: int | None = None
    position: str = "first"

    def to_dict(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "sigma": self.sigma,
            "observer": self.observer,
            "runs": self.runs,
            "episodes": self.episodes,
            "position": self.position,
        }


@dataclass(frozen=True)
class AlgorithmConfig:
    """One algorithm of the report: its environment, sizes, target (ε, δ) and audit."""

    name: str
    episodes: int
    delta: float
    epsilon: float | None = None
    env: str = "riverswim"
    states: int = 2
    actions: int = 2
    horizon: int | None = None
    state_dim: int = 2
    control_dim: int = 1
    episode_grid: tuple[int, ...] | None = None
    audit: AuditConfig = field(default_factory=AuditConfig)

    @property
    def lq(self) -> bool:
        """Whether the algorithm runs on an LQ system (else a tabular MDP)."""
        return self.name in LQ_ALGORITHMS

    def experiment(self, sigma: str | float, env_seed: int) -> Experiment:
        """The regret experiment of this algorithm at ``sigma`` (paper, tight or a number)."""
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
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "env": self.env,
            "episodes": self.episodes,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "states": self.states,
            "actions": self.actions,
            "horizon": self.horizon,
            "state_dim": self.state_dim,
            "control_dim": self.control_dim,
            "episode_grid": None if self.episode_grid is None else list(self.episode_grid),
            "audit": self.audit.to_dict(),
        }


@dataclass(frozen=True)
class QuickConfig:
    """The caps ``--quick`` puts on a report's sizes."""

    episodes: int = 150
    seeds: int = 2
    audit_runs: int = 200
    audit_episodes: int = 8

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "seeds": self.seeds,
            "audit_runs": self.audit_runs,
            "audit_episodes": self.audit_episodes,
        }


@dataclass(frozen=True)
class ReportConfig:
    """A whole report: global seeds and workers, the ε(δ) grid and the algorithms."""

    algorithms: tuple[AlgorithmConfig, ...]
    title: str = "dpkit privacy report"
    seed: int = 0
    seeds: int = 3
    workers: int = 1
    deltas: tuple[float, ...] = DEFAULT_DELTAS
    quick: QuickConfig = field(default_factory=QuickConfig)
    source: str = DEFAULT_CONFIG
    is_quick: bool = False

    def shrunk(self) -> ReportConfig:
        """The ``--quick`` version: episodes, seeds and audit sizes capped by :attr:`quick`."""
        q = self.quick
        algorithms = []
        for a in self.algorithms:
            episodes = min(a.episodes, q.episodes)
            grid = a.episode_grid
            if grid is not None and max(grid) > episodes:  # keep the points below the cap, end at the cap
                grid = tuple(sorted({k for k in grid if k < episodes} | {episodes}))
            audit_episodes = a.audit.episodes if a.audit.episodes is None else min(a.audit.episodes, q.audit_episodes)
            audit = replace(a.audit, runs=min(a.audit.runs, q.audit_runs), episodes=audit_episodes)
            algorithms.append(replace(a, episodes=episodes, episode_grid=grid, audit=audit))
        return replace(self, algorithms=tuple(algorithms), seeds=min(self.seeds, q.seeds), is_quick=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "quick": self.is_quick,
            "title": self.title,
            "seed": self.seed,
            "seeds": self.seeds,
            "workers": self.workers,
            "deltas": list(self.deltas),
            "quick_caps": self.quick.to_dict(),
            "algorithms": [a.to_dict() for a in self.algorithms],
        }


# -- reading and validation ------------------------------------------------------------------------


class _Table:
    """A TOML table being read: typed getters that name the key, and a check for unknown keys."""

    def __init__(self, data: Mapping[str, Any], path: str) -> None:
        self.data, self.path = data, path
        self.used: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def _get(self, name: str, default: Any, required: bool) -> Any:
        self.used.add(name)
        if name not in self.data:
            if required:
                raise ValueError(f"{self.key(name)} is required")
            return default
        return self.data[name]

    def integer(self, name: str, default: Any = None, *, required: bool = False, minimum: int = 1) -> Any:
        if name not in self.data:
            return self._get(name, default, required)
        value = self._get(name, default, required)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{self.key(name)} must be an integer, got {value!r}")
        if value < minimum:
            raise ValueError(f"{self.key(name)} must be >= {minimum}, got {value!r}")
        return value

    def number(self, name: str, default: Any = None, *, required: bool = False) -> Any:
        if name not in self.data:
            return self._get(name, default, required)
        value = self._get(name, default, required)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{self.key(name)} must be a finite number, got {value!r}")
        return float(value)

    def string(
        self, name: str, default: Any = None, *, required: bool = False, choices: tuple[str, ...] | None = None
    ) -> Any:
        if name not in self.data:
            return self._get(name, default, required)
        value = self._get(name, default, required)
        if not isinstance(value, str):
            raise ValueError(f"{self.key(name)} must be a string, got {value!r}")
        if choices is not None and value not in choices:
            raise ValueError(f"{self.key(name)} must be one of {', '.join(choices)}, got {value!r}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self._get(name, default, False)
        if not isinstance(value, bool):
            raise ValueError(f"{self.key(name)} must be true or false, got {value!r}")
        return value

    def table(self, name: str) -> _Table:
        value = self._get(name, {}, False)
        if not isinstance(value, Mapping):
            raise ValueError(f"{self.key(name)} must be a table, got {value!r}")
        return _Table(value, self.key(name))

    def finish(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise ValueError(
                f"unknown key {self.key(unknown[0])!r}"
                + (f" (and {', '.join(repr(self.key(k)) for k in unknown[1:])})" if len(unknown) > 1 else "")
            )


def _audit(t: _Table) -> AuditConfig:
    sigma_value = t._get("sigma", "tight", False)
    if isinstance(sigma_value, str):
        if sigma_value not in _SIGMA_WORDS:
            raise ValueError(f"{t.key('sigma')} must be 'paper', 'tight' or a number >= 0, got {sigma_value!r}")
        sigma: str | float = sigma_value
    else:
        number = t.number("sigma")
        if number < 0:
            raise ValueError(f"{t.key('sigma')} must be >= 0, got {number!r}")
        sigma = number
    observer = t.string("observer")
    cfg = AuditConfig(
        enabled=t.boolean("enabled", True),
        sigma=sigma,
        observer=observer,
        runs=t.integer("runs", 4000, minimum=6),
        episodes=t.integer("episodes", None, minimum=2),
        position=t.string("position", "first", choices=POSITIONS),
    )
    t.finish()
    return cfg


def _algorithm(t: _Table) -> AlgorithmConfig:
    name = t.string("name", required=True, choices=ALGORITHM_NAMES)
    lq = name in LQ_ALGORITHMS
    env = t.string("env", "lq" if lq else "riverswim", choices=SIMULATED_ENVIRONMENTS)
    grid = t._get("episode_grid", None, False)
    if grid is not None:
        if name != "rlsvi":
            raise ValueError(f"{t.key('episode_grid')} applies to rlsvi only, not {name}")
        if (
            not isinstance(grid, list)
            or not grid
            or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in grid)
        ):
            raise ValueError(f"{t.key('episode_grid')} must be a non-empty list of integers >= 1, got {grid!r}")
        grid = tuple(sorted(set(grid)))
    cfg = AlgorithmConfig(
        name=name,
        env=env,
        episodes=t.integer("episodes", required=True),
        delta=t.number("delta", required=True),
        epsilon=t.number("epsilon"),
        states=t.integer("states", 2),
        actions=t.integer("actions", 2),
        horizon=t.integer("horizon"),
        state_dim=t.integer("state_dim", 2),
        control_dim=t.integer("control_dim", 1),
        episode_grid=grid,
        audit=_audit(t.table("audit")),
    )
    t.finish()
    try:
        check_probability("delta", cfg.delta)
        if cfg.epsilon is not None:
            check_positive("epsilon", cfg.epsilon)
        elif name != "rlsvi":
            raise ValueError(f"{name} needs a target epsilon")
        for sigma in _SIGMA_WORDS:  # the two regret experiments: sizes, environment, σ
            cfg.experiment(sigma, 0)
        if cfg.episode_grid is not None and max(cfg.episode_grid) > cfg.episodes:
            raise ValueError(f"episode_grid must not exceed episodes = {cfg.episodes}, got {max(cfg.episode_grid)}")
    except ValueError as err:
        raise ValueError(f"{t.path} ({name}): {err}") from None
    return cfg


def _quick(t: _Table) -> QuickConfig:
    d = QuickConfig()
    cfg = QuickConfig(
        episodes=t.integer("episodes", d.episodes),
        seeds=t.integer("seeds", d.seeds),
        audit_runs=t.integer("audit_runs", d.audit_runs, minimum=6),
        audit_episodes=t.integer("audit_episodes", d.audit_episodes, minimum=2),
    )
    t.finish()
    return cfg


def parse_config(data: Mapping[str, Any], source: str = DEFAULT_CONFIG) -> ReportConfig:
    """Validate a parsed TOML document and build the :class:`ReportConfig`.

    Raises ``ValueError`` naming the first bad key (unknown, of the wrong type, out of range, or
    an algorithm setting that its experiment or ledger rejects).
    """
    t = _Table(data, "")
    title = t.string("title", "dpkit privacy report")
    seed = t.integer("seed", 0, minimum=0)
    seeds = t.integer("seeds", 3)
    workers = t.integer("workers", 1)
    deltas_value = t._get("deltas", None, False)
    if deltas_value is None:
        deltas = DEFAULT_DELTAS
    else:
        if (
            not isinstance(deltas_value, list)
            or not deltas_value
            or any(isinstance(d, bool) or not isinstance(d, (int, float)) or not 0.0 < d < 1.0 for d in deltas_value)
        ):
            raise ValueError(f"deltas must be a non-empty list of numbers in (0, 1), got {deltas_value!r}")
        deltas = tuple(sorted({float(d) for d in deltas_value}))
    quick = _quick(t.table("quick"))
    items = t._get("algorithm", None, True)
    if not isinstance(items, list) or not items:
        raise ValueError(f"algorithm must be a non-empty array of tables ([[algorithm]]), got {items!r}")
    algorithms = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ValueError(f"algorithm[{i}] must be a table, got {item!r}")
        algorithms.append(_algorithm(_Table(item, f"algorithm[{i}]")))
    t.finish()
    names = [a.name for a in algorithms]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise ValueError(f"algorithm: {duplicated[0]!r} appears more than once (one entry per algorithm)")
    for i, a in enumerate(algorithms):  # the ledger's parameters (the same as dpkit ledger's)
        try:
            declare(a.name, a.epsilon, a.delta, **ledger_parameters(a, seed))
        except ValueError as err:
            raise ValueError(f"algorithm[{i}] ({a.name}): {err}") from None
    return ReportConfig(
        algorithms=tuple(algorithms),
        title=title,
        seed=check_index("seed", seed),
        seeds=check_count("seeds", seeds),
        workers=check_count("workers", workers),
        deltas=deltas,
        quick=quick,
        source=source,
    )


def load_config(path: str | Path | None = None) -> ReportConfig:
    """Read and validate a TOML report configuration; ``None`` reads the shipped default."""
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


# -- what the ledger of an algorithm is given ------------------------------------------------------


def ledger_parameters(a: AlgorithmConfig, env_seed: int) -> dict[str, Any]:
    """The parameters of ``dpkit.algorithms.registry.declare`` (and of ``dpkit ledger``) that describe
    the algorithm as the regret runs use it: sizes from the environment the runs face.

    LDP-UCRL-VTR runs under its ``experiment`` reading (§6: rewards divided by H, ‖φ_V‖ <= sqrt(S));
    Private-LinOpt's d = S²A is the dimension of the one-hot linear-mixture features; Private-OFU-RL's
    γ is the control bound of the LQ system drawn from ``env_seed``.
    """
    check_choice("algorithm", a.name, ALGORITHM_NAMES)
    if a.lq:
        import numpy as np

        from dpkit.algorithms.envs.lq import random_lq

        system = random_lq(a.state_dim, a.control_dim, a.horizon or 10, np.random.default_rng(env_seed))
        return {"episodes": a.episodes, "horizon": system.horizon, "gamma": float(system.gamma)}
    horizon = a.horizon if a.horizon is not None else 2 * a.states
    if a.name == "ldp-ucrl-vtr":
        return {"horizon": horizon, "states": a.states, "reading": "experiment"}
    if a.name == "rlsvi":
        return {"states": a.states, "actions": a.actions, "horizon": horizon, "episodes": a.episodes}
    return {"episodes": a.episodes, "horizon": horizon, "dim": a.states**2 * a.actions}
