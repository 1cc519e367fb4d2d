"""Privacy declarations of algorithms: what an algorithm releases about one user, and what its paper claims.

An algorithm *declares* what it releases about one user (:class:`PrivacyDeclaration` of
:class:`DeclaredRelease`, some composed jointly: :class:`JointRelease`);
:func:`~dpkit.accountant.algorithm_ledgers.algorithm_ledger` interprets it under a neighbouring relation and an
accounting method (:mod:`dpkit.accountant.algorithm_ledgers`). What each reading means:
docs/explanation/seed-ledgers.md (Declarations, in the code).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .flags import (
    INFORMATIVE_DELTA,
    SEVERITIES,
    Flag,
    tree_depth_flag,
    uninformative_delta_flag,
    users_informative_delta,
)
from .ledger import EventRelease, GaussianRelease, Ledger, Release
from .memo import cached_declaration, clear_declaration_caches
from .numerics import round_up
from .sensitivity import RELATIONS, Relation, ReleaseNoise, check_relation
from .validation import (
    ArgumentTypeError,
    check_choice,
    check_count,
    check_nonnegative,
    check_positive,
    check_probability,
    check_unit_interval,
    enum_values,
)

__all__ = [
    "SEVERITIES",
    "MECHANISMS",
    "ReleaseMechanism",
    "Flag",
    "DeclaredRelease",
    "JointRelease",
    "PrivacyDeclaration",
    "cached_declaration",
    "clear_declaration_caches",
    "tree_depth_flag",
    "INFORMATIVE_DELTA",
    "declared_users",
    "informative_delta",
    "users_informative_delta",
    "uninformative_delta_flag",
]


class ReleaseMechanism(enum.StrEnum):
    """The mechanisms a declared release may use: Gaussian noise (ℓ2 sensitivity, σ) or Laplace noise (ℓ1, scale b)."""

    GAUSSIAN = "gaussian"
    LAPLACE = "laplace"


#: The values of :class:`ReleaseMechanism`.
MECHANISMS: tuple[str, ...] = enum_values(ReleaseMechanism)
#: The declaration parameters that may hold the number of users K, in the order they are read.
_USER_KEYS: tuple[str, ...] = ("users", "episodes")


@dataclass(frozen=True)
class DeclaredRelease:
    """One kind of Gaussian release that sees one user's data.

    ``count`` is the number of Gaussian mechanisms of this kind whose input contains the user: a counter kept for
    each of H steps is H·m with H ``step_factors``, or m for a vector counter (docs/explanation/seed-ledgers.md).

    ``sensitivity_add_remove`` is ``None`` where the relation does not apply (local DP is defined on any two data
    of one user: replace-one). ``paper_count`` is the count the paper's accounting used, when it differs (e.g. its
    tree depth).
    """

    name: str
    statistic: str
    count: int
    sensitivity_add_remove: float | None
    sensitivity_replace_one: float
    paper_sensitivity: float
    sigma_paper: float
    noise: str = "iid"
    paper_count: int | None = None
    notes: tuple[str, ...] = ()
    mechanism: str = "gaussian"
    sampling_rate: float | None = None
    step_factors: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        check_choice(f"{self.name}.mechanism", self.mechanism, MECHANISMS)
        if self.sampling_rate is not None:
            object.__setattr__(
                self, "sampling_rate", check_unit_interval(f"{self.name}.sampling_rate", self.sampling_rate)
            )
        if not isinstance(self.name, str):
            raise ArgumentTypeError(f"release name must be a non-empty string, got {self.name!r}")
        if not self.name.strip():
            raise ValueError(f"release name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "count", check_count(f"{self.name}.count", self.count))
        if self.sensitivity_add_remove is not None:
            object.__setattr__(
                self,
                "sensitivity_add_remove",
                check_positive(f"{self.name}.sensitivity_add_remove", self.sensitivity_add_remove),
            )
        for attr in ("sensitivity_replace_one", "paper_sensitivity", "sigma_paper"):
            object.__setattr__(self, attr, check_positive(f"{self.name}.{attr}", getattr(self, attr)))
        check_choice(f"{self.name}.noise", self.noise, enum_values(ReleaseNoise))
        if self.paper_count is not None:
            object.__setattr__(self, "paper_count", check_count(f"{self.name}.paper_count", self.paper_count))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "step_factors", _check_step_factors(self.name, self.step_factors, self.count))

    @property
    def steps(self) -> int:
        """The number of steps the release's mechanisms are split into (1 without ``step_factors``)."""
        return len(self.step_factors) or 1

    @property
    def count_per_step(self) -> int:
        """The mechanisms of each step: ``count`` / :attr:`steps`."""
        return self.count // self.steps

    def step_sensitivities(self, relation: Relation | str) -> tuple[float, ...]:
        """The sensitivity of each step's mechanisms under ``relation``.

        The release's (worst-step) sensitivity times each step's factor (rounded up), one value without
        ``step_factors``; 0 where a step's statistic is the same for every user (it needs no noise).

        Args:
            relation: the neighbouring relation, "add_remove" or "replace_one".

        Returns:
            One sensitivity per step (a single one without ``step_factors``).

        Raises:
            ValueError: an unknown relation, or one the release has no sensitivity under.
        """
        delta = self.sensitivity(relation)
        if not self.step_factors:
            return (delta,)
        return tuple(delta if f == 1.0 else round_up(delta * f) if f > 0.0 else 0.0 for f in self.step_factors)

    def step_sigmas(self, sigma: float | Sequence[float] | None = None) -> tuple[float, ...]:
        """σ of each step: ``sigma`` (one number for every step, or one per step), σ_paper when ``None``.

        Args:
            sigma: one σ (>= 0) for every step, one per step, or None for σ_paper.

        Returns:
            One σ per step (:attr:`steps` of them).

        Raises:
            ArgumentTypeError: ``sigma`` neither a number nor a sequence of numbers.
            ValueError: a negative σ, or a sequence whose length is not the number of steps.
        """
        if sigma is None:
            return (self.sigma_paper,) * self.steps
        if isinstance(sigma, (str, bytes)) or not (np.ndim(sigma) == 0 or isinstance(sigma, (Sequence, np.ndarray))):
            raise ArgumentTypeError(f"{self.name}: σ must be a number or one per step, got {sigma!r}")
        if np.ndim(sigma) == 0:
            return (check_nonnegative(f"{self.name}.sigma", sigma),) * self.steps
        values = tuple(np.ravel(np.asarray(sigma, dtype=object))) if np.ndim(sigma) == 1 else None
        if values is None or len(values) != self.steps:
            raise ValueError(f"{self.name}: give one σ or one per step ({self.steps}), got {sigma!r}")
        return tuple(check_nonnegative(f"{self.name}.sigma[{i}]", v) for i, v in enumerate(values))

    def sensitivity(self, relation: Relation | str) -> float:
        """The ℓ2 sensitivity under ``relation`` (of the worst step, where the release has ``step_factors``).

        Args:
            relation: the neighbouring relation, "add_remove" or "replace_one".

        Returns:
            ``sensitivity_add_remove`` or ``sensitivity_replace_one``.

        Raises:
            ValueError: an unknown relation, or add/remove for a release without an add/remove sensitivity.
        """
        relation = check_relation(relation)
        value = self.sensitivity_add_remove if relation == Relation.ADD_REMOVE else self.sensitivity_replace_one
        if value is None:
            raise ValueError(f"release {self.name!r} has no sensitivity under {relation}")
        return value

    @property
    def is_gaussian(self) -> bool:
        """Whether the release is a plain Gaussian mechanism (no subsampling): its μ is exact and sums in μ²."""
        return self.mechanism == ReleaseMechanism.GAUSSIAN and self.sampling_rate is None

    def gaussian(self, relation: Relation | str, *, sigma: float | None = None) -> GaussianRelease:
        """This release as a :class:`~dpkit.accountant.ledger.GaussianRelease` (σ_paper unless given).

        A Laplace or subsampled release is not one (use :meth:`release`), nor is one split into steps of different
        sensitivities (use :meth:`releases`).

        Args:
            relation: the neighbouring relation its sensitivity is taken under.
            sigma: the noise scale σ (None: σ_paper).

        Returns:
            The :class:`~dpkit.accountant.ledger.GaussianRelease` of :attr:`count` mechanisms.

        Raises:
            ValueError: a Laplace or subsampled release, per-step sensitivities, or a relation without a
                sensitivity.
        """
        self._one_step()
        if not self.is_gaussian:
            raise ValueError(
                f"release {self.name!r} is a {'subsampled ' if self.sampling_rate is not None else ''}"
                f"{self.mechanism} mechanism, not a plain Gaussian one: it has no single μ"
            )
        return GaussianRelease(
            self.name, self.sensitivity(relation), self.sigma_paper if sigma is None else sigma, self.count
        )

    def release(self, relation: Relation | str, *, sigma: float | None = None) -> Release:
        """This release as one ledger entry under ``relation``.

        A :class:`~dpkit.accountant.ledger.GaussianRelease`, or an :class:`~dpkit.accountant.ledger.EventRelease` of
        the Laplace or Poisson-subsampled mechanism (its noise scale over the relation's sensitivity, stated under
        ``relation``).

        Args:
            relation: the neighbouring relation its sensitivity is taken under.
            sigma: the noise scale (σ, or the Laplace scale b; None: σ_paper).

        Returns:
            The ledger entry of :attr:`count` mechanisms.

        Raises:
            ValueError: per-step sensitivities (use :meth:`releases`), or a relation without a sensitivity.
        """
        self._one_step()
        relation = check_relation(relation)
        return self._entry(
            self.name, relation, self.sensitivity(relation), self.sigma_paper if sigma is None else sigma
        )

    def releases(
        self, relation: Relation | str, *, sigma: float | Sequence[float] | None = None
    ) -> tuple[Release, ...]:
        """This release as ledger entries under ``relation``, one per step (:meth:`release` without ``step_factors``).

        Step h's :attr:`count_per_step` mechanisms at its sensitivity and its σ; a step of sensitivity 0 releases
        nothing private and has no entry.

        Args:
            relation: the neighbouring relation the sensitivities are taken under.
            sigma: one σ for every step, one per step, or None for σ_paper.

        Returns:
            The ledger entries, in step order (the steps of sensitivity 0 left out).

        Raises:
            ArgumentTypeError: ``sigma`` neither a number nor a sequence of numbers.
            ValueError: a negative σ, a number of σ other than the steps', or a relation without a sensitivity.
        """
        sigmas = self.step_sigmas(sigma)
        relation = check_relation(relation)
        if not self.step_factors:
            return (self.release(relation, sigma=sigmas[0]),)
        return tuple(
            self._entry(f"{self.name}[h={h}]", relation, delta, s, self.count_per_step)
            for h, (delta, s) in enumerate(zip(self.step_sensitivities(relation), sigmas), start=1)
            if delta > 0.0
        )

    def _one_step(self) -> None:
        if self.step_factors and len(set(self.step_factors)) > 1:
            raise ValueError(
                f"release {self.name!r} has per-step sensitivities (step_factors): it is {self.steps} ledger entries, "
                "use releases()"
            )

    def _entry(self, name: str, relation: Relation, delta: float, scale: float, count: int | None = None) -> Release:
        count = self.count if count is None else count
        if self.is_gaussian:
            return GaussianRelease(name, delta, scale, count)
        from .events import Event, GaussianEvent, LaplaceEvent, PoissonSampledEvent

        leaf: Event
        if self.mechanism == ReleaseMechanism.GAUSSIAN:
            leaf = GaussianEvent.from_sigma(scale, sensitivity=delta, relation=relation)
        else:  # Laplace: ε = Δ/b per release, Δ under the relation already (2C apart under replace-one)
            unit = 1.0 if relation == Relation.ADD_REMOVE else 2.0
            leaf = LaplaceEvent(unit * scale / delta, relation=relation)
        event = leaf if self.sampling_rate is None else PoissonSampledEvent(self.sampling_rate, leaf)
        return EventRelease(name, event, count)


@dataclass(frozen=True)
class JointRelease:
    """Releases of one declaration whose differences cannot all reach their sensitivities at once.

    Per mechanism (the releases share their ``count``) the group is one Gaussian mechanism of
    μ = ``bound(relation, sigmas)``, which the ledger composes instead of the separate Δᵢ/σᵢ (the reasoning:
    docs/explanation/seed-ledgers.md). ``description`` says why (one sentence, shown with the ledger).
    """

    releases: tuple[str, ...]
    bound: Callable[[str, tuple[float, ...]], float] = field(compare=False)
    description: str = ""

    def __post_init__(self) -> None:
        names = tuple(self.releases)
        if len(names) < 2 or len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"a joint release names at least two distinct releases, got {self.releases!r}")
        if not callable(self.bound):
            raise ArgumentTypeError(f"bound must be callable, got {type(self.bound).__name__}")
        object.__setattr__(self, "releases", names)

    @property
    def name(self) -> str:
        """The ledger entry's name: the releases joined by ' + '."""
        return " + ".join(self.releases)

    def mu(self, relation: Relation | str, sigmas: Sequence[float]) -> float:
        """μ of one mechanism of each release at ``sigmas`` (``releases`` order); ∞ where a σ is 0.

        Args:
            relation: the neighbouring relation, passed to ``bound``.
            sigmas: one σ per release, in ``releases`` order.

        Returns:
            The group's μ per mechanism (``math.inf`` where a σ is <= 0).
        """
        values = tuple(float(s) for s in sigmas)
        if any(s <= 0.0 for s in values):
            return math.inf
        return float(self.bound(relation, values))

    def optimal_ratios(self, relation: Relation | str) -> tuple[float, ...]:
        """The σ pattern (in ``releases`` order, first 1) that minimises Σᵢ σᵢ² per unit of μ².

        The group's share of the optimal allocation. μ² is homogeneous of degree −2, so the cost at a fixed μ is
        (Σᵢ tᵢ²)·μ(t)², minimised over the ratios t (one free ratio: a bounded scalar search in log space).

        Args:
            relation: the neighbouring relation, passed to ``bound``.

        Returns:
            The ratios (1, t), t the optimal σ₂/σ₁.

        Raises:
            ValueError: a group of more than two releases.
        """
        if len(self.releases) != 2:
            raise ValueError("optimal ratios are computed for joint releases of two releases")
        from scipy import optimize

        def cost(log_t: float) -> float:
            t = math.exp(log_t)
            return math.log1p(t * t) + 2.0 * math.log(self.mu(relation, (1.0, t)))

        best = optimize.minimize_scalar(cost, bounds=(-8.0, 8.0), method="bounded", options={"xatol": 1e-10})
        return (1.0, math.exp(float(best.x)))


@dataclass(frozen=True)
class PrivacyDeclaration:
    """What an algorithm releases about one user, and what its paper claims for it."""

    algorithm: str
    privacy_model: str
    paper: str
    paper_relation: str
    epsilon: float
    delta: float
    releases: tuple[DeclaredRelease, ...]
    parameters: Mapping[str, Any] = field(default_factory=dict)
    paper_epsilon: float | None = None
    relations: tuple[str, ...] = RELATIONS
    flags: tuple[Flag, ...] = ()
    notes: tuple[str, ...] = ()
    #: groups of releases composed jointly (:class:`JointRelease`): their pairs cannot attain every Δ at once
    joint: tuple[JointRelease, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_probability("delta", self.delta))
        object.__setattr__(self, "paper_relation", check_relation(self.paper_relation))
        releases = tuple(self.releases)
        if not releases or not all(isinstance(r, DeclaredRelease) for r in releases):
            raise ValueError(f"a declaration needs at least one DeclaredRelease, got {releases!r}")
        object.__setattr__(self, "releases", releases)
        object.__setattr__(self, "relations", tuple(check_relation(r) for r in self.relations))
        object.__setattr__(self, "flags", tuple(self.flags))
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "parameters", dict(self.parameters))
        if self.paper_epsilon is not None:
            object.__setattr__(self, "paper_epsilon", check_positive("paper_epsilon", self.paper_epsilon))
        object.__setattr__(self, "joint", tuple(self.joint))
        by_name = {r.name: r for r in releases}
        seen: set[str] = set()
        for group in self.joint:
            if not isinstance(group, JointRelease):
                raise ArgumentTypeError(f"joint must hold JointRelease groups, got {type(group).__name__}")
            unknown = [n for n in group.releases if n not in by_name]
            if unknown or seen & set(group.releases):
                raise ValueError(
                    f"joint group {group.name!r}: unknown or repeated releases {unknown or group.releases}"
                )
            seen |= set(group.releases)
            members = [by_name[n] for n in group.releases]
            if len({r.count for r in members}) != 1 or any(r.step_factors or not r.is_gaussian for r in members):
                raise ValueError(
                    f"joint group {group.name!r}: its releases must be plain Gaussian mechanisms of one count and "
                    "no per-step sensitivities"
                )

    def joint_group(self, name: str) -> JointRelease | None:
        """The :class:`JointRelease` that holds release ``name``, if any.

        Args:
            name: the name of one of the declaration's releases.

        Returns:
            Its joint group, or None when it is composed on its own.
        """
        return next((g for g in self.joint if name in g.releases), None)

    def optimal_pattern(self, relation: Relation | str) -> dict[str, tuple[float, ...]]:
        """The σ pattern of the optimal allocation, up to one common factor.

        sqrt(Δ) per release and step (:data:`~dpkit.accountant.algorithm_ledgers.OPTIMAL_OBJECTIVE`), and for a joint
        group its own optimal ratios scaled as one release of variance σ₁²Σtᵢ² and μ² = μ(t)²/σ₁² (so that its
        variance share is proportional to sqrt(μ(t)²Σtᵢ²)).

        Args:
            relation: the neighbouring relation, "add_remove" or "replace_one".

        Returns:
            Release name → its pattern, one value per step.

        Raises:
            ValueError: a relation the declaration is not defined under.
        """
        relation = self._relation(relation)
        out = {r.name: tuple(math.sqrt(d) for d in r.step_sensitivities(relation)) for r in self.releases}
        for group in self.joint:
            t = group.optimal_ratios(relation)
            norm2 = math.fsum(x * x for x in t)
            first = (group.mu(relation, t) ** 2 * norm2) ** 0.25 / math.sqrt(norm2)
            out.update({n: (first * x,) for n, x in zip(group.releases, t)})
        return out

    def ledger(
        self,
        *,
        relation: Relation | str | None = None,
        scale: float = 1.0,
        sigmas: Mapping[str, float | Sequence[float]] | None = None,
    ) -> Ledger:
        """The releases as a :class:`~dpkit.accountant.ledger.Ledger` at σ_paper × ``scale``, or at ``sigmas``
        (release name → one σ, or one σ per step), one entry per step of a release with per-step sensitivities.

        Args:
            relation: the neighbouring relation (None: the paper's).
            scale: the factor on every σ_paper (> 0); 1 by default.
            sigmas: release name → σ (one, or one per step), instead of ``scale``.

        Returns:
            The :class:`~dpkit.accountant.ledger.Ledger`.

        Raises:
            ValueError: both ``scale`` and ``sigmas``, ``sigmas`` not naming exactly the releases, a scale not positive,
                a relation the declaration is not defined under, or a joint group with a σ <= 0.
        """
        relation = self._relation(relation)
        if sigmas is not None:
            if scale != 1.0:
                raise ValueError(f"give either scale or sigmas, got scale = {scale!r} and sigmas")
            names = [r.name for r in self.releases]
            if not isinstance(sigmas, Mapping) or sorted(sigmas) != sorted(names):
                raise ValueError(f"sigmas must map exactly the releases {names} to σ, got {sigmas!r}")
            return self._entries(relation, {r.name: sigmas[r.name] for r in self.releases})
        scale = check_positive("scale", scale)
        return self._entries(relation, {r.name: r.sigma_paper * scale for r in self.releases})

    def _entries(self, relation: Relation, sigmas: Mapping[str, Any]) -> Ledger:
        """The ledger at ``sigmas``: one entry per release and step, and one per joint group (a Gaussian release at its
        first release's σ whose sensitivity gives the group's μ per mechanism; it scales as the group's σ do)."""
        entries: list[Release] = []
        for r in self.releases:
            group = self.joint_group(r.name)
            if group is None:
                entries.extend(r.releases(relation, sigma=sigmas[r.name]))
            elif r.name == group.releases[0]:
                values = tuple(float(np.ravel(sigmas[n])[0]) for n in group.releases)
                mu = group.mu(relation, values)
                if math.isinf(mu):
                    raise ValueError(f"joint group {group.name!r} needs σ > 0 for every release, got {values!r}")
                # at its first release's σ (its magnitude, so that scaling the ledger keeps the doubles' range)
                entries.append(GaussianRelease(group.name, mu * values[0], values[0], r.count))
        return Ledger(tuple(entries))

    def _relation(self, relation: Relation | str | None) -> Relation:
        relation = check_relation(self.paper_relation if relation is None else relation)
        if relation not in self.relations:
            raise ValueError(
                f"{self.algorithm}'s privacy is defined only under {', '.join(self.relations)}; got relation "
                f"'{relation}'"
            )
        return relation


def declared_users(declaration: PrivacyDeclaration) -> int | None:
    """K, the number of users (episodes) of ``declaration``: its parameter ``users``, else ``episodes``, when
    that is a positive integer; ``None`` when the declaration does not say (e.g. a local-DP ledger, which
    does not depend on K).

    Args:
        declaration: the :class:`PrivacyDeclaration`.

    Returns:
        K, or None.
    """
    for key in _USER_KEYS:
        value = declaration.parameters.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isfinite(value) and value >= 1 and float(value).is_integer():
            return int(value)
    return None


def informative_delta(declaration: PrivacyDeclaration) -> float:
    """The δ at which an ε protects individuals: min(10⁻⁵, 1/K) for the declaration's K users
    (:func:`declared_users`), and 10⁻⁵ (:data:`INFORMATIVE_DELTA`) when K is unknown.

    Args:
        declaration: the :class:`PrivacyDeclaration`.

    Returns:
        min(10⁻⁵, 1/K), or 10⁻⁵.

    Raises:
        ArgumentTypeError: ``declaration`` is not a PrivacyDeclaration.
    """
    if not isinstance(declaration, PrivacyDeclaration):
        raise ArgumentTypeError(f"declaration must be a PrivacyDeclaration, got {type(declaration).__name__}")
    return users_informative_delta(declared_users(declaration))


def _check_step_factors(name: str, factors: object, count: int) -> tuple[float, ...]:
    """``step_factors`` validated: each step's sensitivity over the worst step's, in [0, 1] with largest 1, and a
    number of steps that divides ``count``."""
    if isinstance(factors, np.ndarray) and factors.ndim == 1:
        factors = factors.tolist()
    if isinstance(factors, (str, bytes)) or not isinstance(factors, Sequence):
        raise ArgumentTypeError(f"{name}.step_factors must be a sequence of numbers, got {factors!r}")
    values = tuple(check_unit_interval(f"{name}.step_factors[{i}]", f) for i, f in enumerate(factors))
    if not values:
        return ()
    if count % len(values):
        raise ValueError(f"{name}.count = {count} is not a multiple of its {len(values)} steps (step_factors)")
    if abs(max(values) - 1.0) > 1e-12:
        raise ValueError(
            f"{name}.step_factors must have largest value 1 (the release's sensitivity is its worst step's), "
            f"got {values!r}"
        )
    return tuple(1.0 if abs(v - 1.0) <= 1e-12 else v for v in values)
