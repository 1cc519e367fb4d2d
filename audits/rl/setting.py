"""The setting of an RL audit: which algorithm, σ, observer, users, relation and position of the changed user; the
two neighbouring datasets; the registered declaration and the σ the claim needs, read from the *registered* agent;
and one audited run (:func:`rl_release`), the unit the executors run. :mod:`dpkit.audits.rl` audits these
settings and re-exports everything here."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpkit.accountant.algorithm_ledgers import Allocation
from dpkit.accountant.declarations import PrivacyDeclaration
from dpkit.accountant.sensitivity import Relation
from dpkit.accountant.validation import check_choice, check_count, check_index, check_positive, check_probability
from dpkit.algorithms import registry
from dpkit.algorithms.envs.from_gymnasium import is_external
from dpkit.algorithms.episodes import SIGMA_CHOICES, check_sigma
from dpkit.algorithms.executors import spawn_seeds
from dpkit.algorithms.limits import AUDIT_LIMITS
from dpkit.algorithms.spec import AlgorithmSpec

from . import registry as audit_registry
from .observers import ObservedRun, default_positions
from .plan_worlds import PLAN_WORLDS
from .worlds import AuditWorld

__all__ = [
    "CLAIM_ALLOCATIONS",
    "MAX_EPISODES",
    "MAX_RUNS",
    "POSITIONS",
    "RlDataset",
    "RlSetting",
    "audited_algorithms",
    "audited_spec",
    "audit_hook",
    "declared_sensitivities",
    "default_setting",
    "implementation_declaration",
    "make_setting_agent",
    "neighbouring_datasets",
    "observers",
    "positions",
    "probe_plan",
    "registered_declaration",
    "rl_release",
    "setting_claim_sigmas",
    "setting_world",
    "validate_runs",
]

POSITIONS: tuple[str, ...] = ("first", "middle", "last")
#: The allocations a claim's σ may be read at (:class:`RlSetting`): both meet the target (ε, δ).
CLAIM_ALLOCATIONS: tuple[str, ...] = ("tight", "optimal")
#: The most runs per dataset an RL audit accepts (each is a whole run of the algorithm; 10⁶ already takes hours).
MAX_RUNS = AUDIT_LIMITS["runs"]
#: The most users K an audited run may have.
MAX_EPISODES = AUDIT_LIMITS["episodes"]
#: The runs an algorithm with a batched observer (``observe_batch``) simulates in one call: enough that numpy's
#: per-call cost is spread thin, few enough that a chunk's arrays stay small.
BATCH_RUNS = 256


def audited_algorithms() -> tuple[str, ...]:
    """The registered algorithms that can be audited (they have an :class:`~dpkit.algorithms.spec.AuditSpec`:
    :mod:`dpkit.audits.rl.registry`).

    Returns:
        Their names.
    """
    return audit_registry.audited_algorithms()


def observers(algorithm: str) -> tuple[str, ...]:
    """The observers of ``algorithm``'s audit; the first is the default.

    Args:
        algorithm: The registered algorithm.

    Returns:
        The observers' names.
    """
    return audit_registry.audit_spec(algorithm).observers


def audited_spec(setting: RlSetting) -> AlgorithmSpec:
    """The registered spec of the setting's algorithm (one that registers an audit).

    Args:
        setting: The audit's setting.

    Returns:
        The algorithm's spec.
    """
    return audit_registry.audited(setting.algorithm)


def audit_hook(setting: RlSetting, name: str) -> Callable[..., Any] | None:
    """The loaded hook ``name`` of the setting's algorithm's audit (``world``, ``observe``, ``positions``…).

    Args:
        setting: The audit's setting.
        name: The hook (a field of :class:`~dpkit.algorithms.spec.AuditSpec`).

    Returns:
        The callable, or ``None`` if the audit does not give it.
    """
    return audit_registry.audit_spec(setting.algorithm).hook(name, owner=setting.algorithm)


#: A position given by index: ``k=3`` is the fourth user.
_INDEX_NAME = re.compile(r"k=\d+")


def positions(setting: RlSetting) -> dict[str, tuple[int, float]]:
    """The positions of the changed user a default audit of ``setting`` probes.

    The algorithm's own (its AuditSpec's ``positions`` hook: e.g. the tree counters' powers of two), else the first,
    middle and last user (:func:`~dpkit.audits.rl.observers.default_positions`). Every name also works as
    ``position``, as does ``k=<index>`` or an index.

    Args:
        setting: The audit's setting.

    Returns:
        Name → (0-based index, share).

    Raises:
        TypeError: If the algorithm's positions hook does not return a non-empty mapping.
    """
    hook = audit_hook(setting, "positions")
    named = (hook or default_positions)(setting)
    if not isinstance(named, Mapping) or not named:
        raise TypeError(f"{setting.algorithm}'s positions hook must return a non-empty mapping, got {named!r}")
    return {str(k): (int(v[0]), float(v[1])) for k, v in named.items()}


# --------------------------------------------------------------------------------------------
# Settings and datasets


@dataclass(frozen=True)
class RlSetting:
    """Everything a run of an RL audit depends on (hashable and picklable).

    ``sigma`` is ``"paper"``, ``"tight"``, ``"optimal"``, a number (every release's σ; for RLSVI the equivalent
    σ of its declaration, which rescales β) or a mapping {release: σ, or one σ per step} (kept as sorted pairs).
    ``claim_allocation`` says at which of dpkit's allocations of the registered declaration the claim's σ is read
    (``"tight"``, or ``"optimal"``, the default when ``sigma="optimal"``): both meet the target, and each pair's
    allowance is its μ at that allocation — never at the σ the implementation reports.
    ``states``/``actions``/``horizon`` size the tabular
    environment, ``state_dim``/``control_dim``/``horizon`` the LQ system (drawn from ``env_seed``).
    ``options`` go to the algorithm. ``position`` is where the changed user sits among the
    ``episodes`` users; the others are drawn from ``users_seed``. ``implementation`` replaces the
    registered agent factory (:func:`dpkit.algorithms.simulation.make_agent`): a callable with its signature
    ``(name, env, episodes, rng, *, epsilon, delta, sigma, **options)`` — e.g. a subclass of the seed
    algorithm with a bug in it; it must be picklable (defined at module level) for process pools.
    """

    algorithm: str
    observer: str
    episodes: int = 8
    position: str | int = "first"
    epsilon: float = 8.0
    delta: float = 1e-5
    sigma: str | float = "tight"
    #: the neighbouring relation (a string given is converted to the member)
    relation: Relation = Relation.REPLACE_ONE
    #: the allocation whose σ the claim is read at: ``"tight"``, or ``"optimal"`` (the default when ``sigma`` is)
    claim_allocation: str | None = None
    states: int = 2
    actions: int = 2
    horizon: int = 4
    state_dim: int = 2
    control_dim: int = 1
    env_seed: int = 0
    users_seed: int = 0
    options: tuple[tuple[str, Any], ...] = ()
    implementation: Callable[..., Any] | None = None
    #: the tabular MDP of the audit world: "" (the audit's own uniform MDP) or a user's (gymnasium:ID…, FILE.py:NAME)
    env: str = ""
    #: the audit world: "" (the algorithm's own) or a plan probe's world where plans move
    #: (:data:`~dpkit.audits.rl.plan_worlds.PLAN_WORLDS`)
    world: str = ""

    def __post_init__(self) -> None:
        audit = audit_registry.audit_spec(self.algorithm)
        if self.env:
            from dpkit.algorithms.envs.catalog import check_environment, external_sizes

            if audited_spec(self).lq or not is_external(check_environment(self.env)):
                raise ValueError(
                    f"env must be a user's tabular environment (gymnasium:ID…, FILE.py:NAME) for {self.algorithm}'s "
                    f"audit, got {self.env!r}"
                )
            check_count("horizon", self.horizon)
            s_, a_ = external_sizes(self.env, self.horizon)
            object.__setattr__(self, "states", s_)
            object.__setattr__(self, "actions", a_)
        check_choice("observer", self.observer, audit.observers)
        if self.world:
            check_choice("world", self.world, tuple(PLAN_WORLDS))
            if self.env:
                raise ValueError(f"a plan world is the audit's own MDP: give world or env, got both ({self.world!r})")
        check_count("episodes", self.episodes)
        if self.episodes > MAX_EPISODES:
            raise ValueError(
                f"episodes must be <= {MAX_EPISODES:,} for an audit (every run plays them all), got {self.episodes:,}"
            )
        if self.episodes < 2:
            raise ValueError(f"episodes must be >= 2 (the changed user and at least one other), got {self.episodes}")
        if isinstance(self.position, (bool, np.bool_)) or not isinstance(self.position, (str, int, np.integer)):
            raise TypeError(f"position must be a name or a 0-based index, got {self.position!r}")
        if isinstance(self.position, (int, np.integer)):
            check_index("position", self.position)
            if self.position >= self.episodes:
                raise ValueError(
                    f"position must be a user's 0-based index < episodes = {self.episodes}, got {self.position}"
                )
            object.__setattr__(self, "position", int(self.position))
        elif not _INDEX_NAME.fullmatch(self.position):
            check_choice("position", self.position, tuple(positions(self)))
        elif int(self.position[2:]) >= self.episodes:
            raise ValueError(f"position {self.position!r} is beyond the {self.episodes} users")
        check_positive("epsilon", self.epsilon)
        check_probability("delta", self.delta)
        if isinstance(self.sigma, Mapping):
            for k, v in self.sigma.items():
                if np.ndim(v) > 1:
                    raise ValueError(f"sigma[{k!r}] must be one σ or one per step, got {v!r}")
            pairs = ((k, v if np.ndim(v) == 0 else tuple(float(x) for x in np.ravel(v))) for k, v in self.sigma.items())
            object.__setattr__(self, "sigma", tuple(sorted(pairs)))
        if isinstance(self.sigma, str):
            check_choice("sigma", self.sigma, SIGMA_CHOICES)
        elif isinstance(self.sigma, tuple):
            for name, value in self.sigma:
                for v in value if isinstance(value, tuple) else (value,):
                    check_sigma(f"sigma[{name!r}]", v)
        else:
            check_sigma("sigma", self.sigma)
        if self.claim_allocation is None:
            object.__setattr__(self, "claim_allocation", "optimal" if self.sigma == Allocation.OPTIMAL else "tight")
        check_choice("claim_allocation", self.claim_allocation, CLAIM_ALLOCATIONS)
        if self.relation != Relation.REPLACE_ONE:
            raise ValueError(
                f"relation must be 'replace_one', got {self.relation!r}: the RL audits change one user into another "
                "(LDP and RLSVI's relation are replace-one by definition; add/remove is not audited here)"
            )
        object.__setattr__(self, "relation", Relation.REPLACE_ONE)
        for name in ("states", "actions", "horizon", "state_dim", "control_dim"):
            check_count(name, getattr(self, name))
        check_index("env_seed", self.env_seed)
        check_index("users_seed", self.users_seed)
        if self.implementation is not None and not callable(self.implementation):
            raise TypeError(
                f"implementation must be a callable agent factory, got {type(self.implementation).__name__}"
            )

    @property
    def index(self) -> int:
        """The 0-based episode of the changed user."""
        if isinstance(self.position, int):
            return self.position
        if _INDEX_NAME.fullmatch(self.position):
            return int(self.position[2:])
        return positions(self)[self.position][0]

    @property
    def share(self) -> float:
        """The share of the declared mechanisms that hold the changed user at this position (1 at the worst-placed
        user): the declared μ here is the ledger's μ × sqrt(share)."""
        hook = audit_hook(self, "positions")
        share = (hook or default_positions)(self, self.index)
        if not isinstance(share, (int, float)):
            raise TypeError(f"{self.algorithm}'s positions hook must give a number for an index, got {share!r}")
        return float(share)

    @property
    def white_box(self) -> bool:
        return self.observer in audit_registry.audit_spec(self.algorithm).white_box

    def to_dict(self) -> dict[str, Any]:
        """The setting as plain data (JSON-ready).

        Returns:
            Every field (``options`` and a ``sigma`` of pairs as tables, the implementation as ``module:name``).
        """
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k not in ("options", "implementation")}
        out["options"] = dict(self.options)
        impl = self.implementation
        out["implementation"] = None if impl is None else f"{impl.__module__}:{impl.__qualname__}"
        if isinstance(self.sigma, tuple):
            out["sigma"] = dict(self.sigma)
        return out


@dataclass(frozen=True)
class RlDataset:
    """D (``which`` = 0) or D′ (``which`` = 1) of a setting: the canary ``which`` at the changed position."""

    setting: RlSetting
    which: int

    def __post_init__(self) -> None:
        if self.which not in (0, 1):
            raise ValueError(f"which must be 0 (D) or 1 (D′), got {self.which!r}")


def neighbouring_datasets(setting: RlSetting) -> tuple[RlDataset, RlDataset]:
    """D and D′ of ``setting``: the same users except at ``setting.position``.

    Args:
        setting: The audit's setting.

    Returns:
        The two datasets.

    Raises:
        ValueError: If ``setting`` is not an :class:`RlSetting`.
    """
    if not isinstance(setting, RlSetting):
        raise ValueError(f"setting must be an RlSetting, got {type(setting).__name__}")
    return RlDataset(setting, 0), RlDataset(setting, 1)


def setting_world(setting: RlSetting) -> AuditWorld:
    """The registered algorithm's audit world of a setting (its canaries live with it).

    Args:
        setting: The audit's setting.

    Returns:
        (environment, users of D with the changed user absent, (canary 0, canary 1)).
    """
    return _world_at(setting, registry.generation())


@functools.lru_cache(maxsize=32)
def _world_at(setting: RlSetting, generation: int) -> AuditWorld:
    # keyed on the registry's generation: an algorithm registered again under the same name is read afresh
    world = audit_hook(setting, "world")
    assert world is not None
    env, users, canaries = world(setting)  # a plugin's world may be a plain triple
    return AuditWorld(env, users, (canaries[0], canaries[1]))


def make_setting_agent(setting: RlSetting, rng: np.random.Generator, env: Any) -> Any:
    """An agent of the setting on ``env``, at the setting's σ.

    Args:
        setting: The audit's setting.
        rng: The agent's generator.
        env: The environment.

    Returns:
        The implementation under test when the setting names one, else the registered algorithm's agent.
    """
    from dpkit.algorithms.simulation import make_agent

    s = setting
    sigma = dict(s.sigma) if isinstance(s.sigma, tuple) else s.sigma
    factory = make_agent if s.implementation is None else s.implementation
    return factory(s.algorithm, env, s.episodes, rng, epsilon=s.epsilon, delta=s.delta, sigma=sigma, **dict(s.options))


def _checked(setting: RlSetting, agent: Any) -> PrivacyDeclaration:
    """The agent's declaration, once it is seen to follow the protocol and to declare the setting's target."""
    missing = [a for a in ("declaration", "sigmas", "plan", "update") if not hasattr(agent, a)]
    if missing or not isinstance(agent.declaration, PrivacyDeclaration):
        raise TypeError(
            f"the agent {setting.algorithm!r} builds ({type(agent).__name__}) does not follow the protocol: it needs "
            f"plan, update, sigmas and a PrivacyDeclaration as declaration (missing: {', '.join(missing) or 'none'})"
        )
    d = agent.declaration
    if not (math.isclose(d.epsilon, setting.epsilon, rel_tol=1e-12) and math.isclose(d.delta, setting.delta)):
        raise ValueError(
            f"the agent {setting.algorithm!r} declares (ε, δ) = ({d.epsilon:g}, {d.delta:g}), not the audit's target "
            f"({setting.epsilon:g}, {setting.delta:g}): a declaration is judged at the target it was built for"
        )
    names = sorted(r.name for r in d.releases)
    if sorted(agent.sigmas) != names:
        raise ValueError(
            f"the agent {setting.algorithm!r} uses σ for {sorted(agent.sigmas)} but declares the releases {names}"
        )
    return d


def registered_declaration(setting: RlSetting) -> PrivacyDeclaration:
    """The declaration of the *registered* agent (never the implementation under test) at the setting's target.

    Args:
        setting: The audit's setting.

    Returns:
        The privacy declaration.
    """
    return _registered_declaration_at(setting, registry.generation())


@functools.lru_cache(maxsize=32)
def _registered_declaration_at(setting: RlSetting, generation: int) -> PrivacyDeclaration:
    env = setting_world(setting)[0]
    agent = make_setting_agent(replace(setting, implementation=None), np.random.default_rng(0), env)
    return _checked(setting, agent)


def setting_claim_sigmas(setting: RlSetting) -> dict[str, float]:
    """The σ of every release that the claim (the target (ε, δ)) needs.

    dpkit's own σ_tight (the exact accountant's calibration) of the registered declaration under the setting's
    relation — never the σ an implementation reports, so no agent can raise its own allowance by declaring a small σ.

    Args:
        setting: The audit's setting.

    Returns:
        σ by release.
    """
    return dict(_claim_sigmas_at(setting, registry.generation()))


@functools.lru_cache(maxsize=32)
def _claim_sigmas_at(setting: RlSetting, generation: int) -> dict[str, float]:
    from dpkit.algorithms.episodes import resolve_sigmas

    allocation = setting.claim_allocation or "tight"
    return resolve_sigmas(registered_declaration(setting), allocation, relation=setting.relation)


def declared_sensitivities(setting: RlSetting) -> dict[str, Any]:
    """The ℓ2 sensitivity Δ of every release under the setting's relation, as the *registered* agent declares it.

    Args:
        setting: The audit's setting.

    Returns:
        Δ by release: one number, or one per step (a tuple); the implementation under test cannot raise it.
    """
    out: dict[str, Any] = {}
    for r in registered_declaration(setting).releases:
        steps = r.step_sensitivities(setting.relation)
        out[r.name] = steps if r.steps > 1 and len(set(steps)) > 1 else r.sensitivity(setting.relation)
    return out


def implementation_declaration(setting: RlSetting) -> tuple[PrivacyDeclaration, dict[str, float]]:
    """The declaration and σ of the implementation under test (what it says it does).

    Args:
        setting: The audit's setting.

    Returns:
        Its declaration, and σ by release.
    """
    agent = make_setting_agent(setting, np.random.default_rng(0), setting_world(setting)[0])
    return _checked(setting, agent), dict(agent.sigmas)


def rl_release(dataset: RlDataset, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` independent runs of the whole algorithm on ``dataset`` (a release function for the executors).

    Each run draws from its own child of ``rng``.

    Args:
        dataset: The dataset (:func:`neighbouring_datasets`).
        rng: The runs' generator.
        n: The number of runs.

    Returns:
        One row per run: the observer's view (white-box: whitened residuals r then signals a; black-box: the
        encoded actions or policies), then μ of the run's releases at the σ used and at the claim's σ.

    Raises:
        ValueError: If ``dataset`` is not an :class:`RlDataset`.
    """
    if not isinstance(dataset, RlDataset):
        raise ValueError(f"dataset must be an RlDataset, got {type(dataset).__name__}")
    from threadpoolctl import threadpool_limits

    # one BLAS thread per run: the runs are parallel already, and BLAS threads spinning beside other work made the
    # dense algebra of a run (LDP-UCRL-VTR's Gram solves) several times slower on two cores
    with threadpool_limits(limits=1, user_api="blas"):
        return _release(dataset, rng, n)


def _release(dataset: RlDataset, rng: np.random.Generator, n: int, *, batched: bool = True) -> np.ndarray:
    s = dataset.setting
    observe = audit_hook(s, "observe")
    assert observe is not None
    run = ObservedRun(
        setting=s,
        which=dataset.which,
        world=setting_world(s),
        index=s.index,
        white_box=s.white_box,
        claim_sigmas=setting_claim_sigmas(s),
        sensitivities=declared_sensitivities(s),
        make_agent=functools.partial(make_setting_agent, s),
    )
    children = rng.spawn(check_count("n", n))
    batch = audit_hook(s, "observe_batch") if batched else None
    if batch is None:  # one run at a time (bench/rl_throughput.py measures this path against the batches)
        return np.stack([observe(run, child) for child in children])
    return np.concatenate(
        [batch(run, children[i : i + BATCH_RUNS]) for i in range(0, len(children), BATCH_RUNS)], axis=0
    )


def default_setting(algorithm: str, **overrides: Any) -> RlSetting:
    """The audit setting used by ``dpkit audit ALGORITHM``: small sizes at which the canaries realise most of Δ.

    Args:
        algorithm: The registered algorithm (one that registers an audit).
        **overrides: Fields of :class:`RlSetting` to replace.

    Returns:
        The setting.

    Raises:
        ValueError: If the algorithm is unknown or registers no audit, or an override is invalid.
    """
    audit = audit_registry.audit_spec(algorithm)
    base: dict[str, Any] = {"algorithm": algorithm, "observer": audit.observers[0], **audit.defaults}
    base.update({k: v for k, v in overrides.items() if v is not None})
    if "options" in overrides and isinstance(overrides["options"], Mapping):
        base["options"] = tuple(sorted(overrides["options"].items()))
    return RlSetting(**base)


def validate_runs(runs: object) -> int:
    """Check the runs per dataset of an RL audit.

    Args:
        runs: The runs per dataset asked for.

    Returns:
        ``runs`` as an int: a whole number from 6 (the train, selection and evaluation splits) to :data:`MAX_RUNS`.

    Raises:
        ValueError: If ``runs`` is not a whole number, below 6 or above :data:`MAX_RUNS`.
    """
    n = check_count("runs", runs)
    if n < 6:
        raise ValueError(f"runs must be >= 6 (train, selection and evaluation splits), got {n}")
    if n > MAX_RUNS:
        raise ValueError(f"runs must be <= {MAX_RUNS:,} (each run is a whole run of the algorithm), got {n:,}")
    return n


def probe_plan(
    setting: RlSetting, positions_to_probe: Sequence[str | int] | None, seed: int
) -> list[tuple[RlSetting, int]]:
    """The settings of an audit of several positions, each with a seed of its own.

    One independent stream per position; one position alone keeps the audit's own seed.

    Args:
        setting: The audit's setting.
        positions_to_probe: The positions (names or indices); None: every position of :func:`positions`.
        seed: The audit's seed.

    Returns:
        (setting at the position, its seed) per position, in order.

    Raises:
        ValueError: If ``setting`` is not an :class:`RlSetting` or ``positions_to_probe`` is empty.
    """
    if not isinstance(setting, RlSetting):
        raise ValueError(f"setting must be an RlSetting, got {type(setting).__name__}")
    names: list[str | int] = list(positions(setting)) if positions_to_probe is None else list(positions_to_probe)
    if not names:
        raise ValueError("positions_to_probe must name at least one position")
    seeds = [seed] if len(names) == 1 else [int(c.generate_state(1)[0]) for c in spawn_seeds(seed, len(names))]
    return [(replace(setting, position=name), child) for name, child in zip(names, seeds, strict=True)]
