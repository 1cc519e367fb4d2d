"""Privacy declarations of algorithms and their ledgers: the paper's σ beside the σ really needed.

An algorithm *declares* what it releases about one user (:class:`DeclaredRelease`: the statistic,
how many mechanisms see the user, the sensitivity under add/remove and under replace-one, the paper's
sensitivity and the paper's noise scale; a release is Gaussian unless it says ``mechanism="laplace"``,
and may be Poisson-subsampled at ``sampling_rate``, as DP-SGD steps are). The declaration is data, written next to
the algorithm in :mod:`dpkit.algorithms`; :func:`algorithm_ledger` interprets it under a neighbouring
relation and an accounting method and returns an :class:`AlgorithmLedger`:

* the ε (at the target δ) that the paper's σ really achieves with the sensitivities of the chosen
  relation — exactly where every release is a Gaussian mechanism, through the method's reading of the
  events otherwise (pld by default: a subsampled or Laplace release has no closed form);
* σ_tight: the paper's σ of every release multiplied by the smallest common factor that meets the
  target (so the paper's allocation between releases is kept), and the noise ratio σ_paper/σ_tight;
* the same readings at an *informative* δ (:func:`informative_delta`: min(10⁻⁵, 1/K) for K users): at the
  papers' δ (often 0.1) the exact ε is often 0, true and useless, while a δ that protects individuals is at
  most 1/K; the ledger gives the ε of the paper's σ and of σ_tight there, with the same accountant, and the
  μ of both (plain Gaussian ledgers only);
* flags: a paper sensitivity below the relation's (typically one that holds only for add/remove
  while the paper states replace-one), a paper σ that misses the target, and whatever the
  declaration raised itself (the classic bound used at ε >= 1 per release, a tree depth that
  differs from the schedule's exact count, ...).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .accountants import make_accountant
from .calibration import calibrate_ledger_scale
from .ledger import EventRelease, GaussianRelease, Ledger, Release
from .numerics import round_up
from .sensitivity import RELATIONS, check_relation
from .validation import (
    ArgumentTypeError,
    check_choice,
    check_count,
    check_positive,
    check_probability,
    check_unit_interval,
)

__all__ = [
    "SEVERITIES",
    "MECHANISMS",
    "Flag",
    "DeclaredRelease",
    "PrivacyDeclaration",
    "AlgorithmLedger",
    "algorithm_ledger",
    "tree_depth_flag",
    "INFORMATIVE_DELTA",
    "declared_users",
    "informative_delta",
]

SEVERITIES: tuple[str, ...] = ("error", "warning", "info")
_NOISE_KINDS = ("iid", "symmetric")
#: The mechanisms a declared release may use: Gaussian noise (ℓ2 sensitivity, σ) or Laplace noise (ℓ1, scale b).
MECHANISMS: tuple[str, ...] = ("gaussian", "laplace")
#: The informative δ when the number of users K is unknown (and its cap when K is known): 10⁻⁵.
INFORMATIVE_DELTA: float = 1e-5
#: The declaration parameters that may hold the number of users K, in the order they are read.
_USER_KEYS: tuple[str, ...] = ("users", "episodes")


@dataclass(frozen=True)
class Flag:
    """A finding about a paper's accounting: ``code`` is stable, ``message`` is for people."""

    code: str
    message: str
    severity: str = "warning"
    release: str | None = None

    def __post_init__(self) -> None:
        check_choice("severity", self.severity, SEVERITIES)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "severity": self.severity, "release": self.release, "message": self.message}


@dataclass(frozen=True)
class DeclaredRelease:
    """One kind of Gaussian release that sees one user's data.

    ``count`` is the number of Gaussian mechanisms of this kind whose input contains the user
    (e.g. H messages, or H counters × m p-sums). ``sensitivity_add_remove`` is ``None`` where the
    relation does not apply (local DP is defined on any two data of one user: replace-one).
    ``paper_count`` is the count the paper's accounting used, when it differs (e.g. its tree depth).
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
        check_choice(f"{self.name}.noise", self.noise, _NOISE_KINDS)
        if self.paper_count is not None:
            object.__setattr__(self, "paper_count", check_count(f"{self.name}.paper_count", self.paper_count))
        object.__setattr__(self, "notes", tuple(self.notes))

    def sensitivity(self, relation: str) -> float:
        """The ℓ2 sensitivity under ``relation``."""
        relation = check_relation(relation)
        value = self.sensitivity_add_remove if relation == "add_remove" else self.sensitivity_replace_one
        if value is None:
            raise ValueError(f"release {self.name!r} has no sensitivity under {relation}")
        return value

    @property
    def is_gaussian(self) -> bool:
        """Whether the release is a plain Gaussian mechanism (no subsampling): its μ is exact and sums in μ²."""
        return self.mechanism == "gaussian" and self.sampling_rate is None

    def gaussian(self, relation: str, *, sigma: float | None = None) -> GaussianRelease:
        """This release as a :class:`~dpkit.accountant.ledger.GaussianRelease` (σ_paper unless given); a
        Laplace or subsampled release is not one (ValueError: use :meth:`release`)."""
        if not self.is_gaussian:
            raise ValueError(
                f"release {self.name!r} is a {'subsampled ' if self.sampling_rate is not None else ''}"
                f"{self.mechanism} mechanism, not a plain Gaussian one: it has no single μ"
            )
        return GaussianRelease(
            self.name, self.sensitivity(relation), self.sigma_paper if sigma is None else sigma, self.count
        )

    def release(self, relation: str, *, sigma: float | None = None) -> Release:
        """This release as a ledger entry under ``relation``: a :class:`~dpkit.accountant.ledger.GaussianRelease`,
        or an :class:`~dpkit.accountant.ledger.EventRelease` of the Laplace or Poisson-subsampled mechanism (its
        noise scale over the relation's sensitivity, stated under ``relation``)."""
        if self.is_gaussian:
            return self.gaussian(relation, sigma=sigma)
        from .events import Event, GaussianEvent, LaplaceEvent, PoissonSampledEvent

        scale = self.sigma_paper if sigma is None else sigma
        delta = self.sensitivity(relation)
        leaf: Event
        if self.mechanism == "gaussian":
            leaf = GaussianEvent.from_sigma(scale, sensitivity=delta, relation=relation)
        else:  # Laplace: ε = Δ/b per release, Δ under the relation already (2C apart under replace-one)
            unit = 1.0 if relation == "add_remove" else 2.0
            leaf = LaplaceEvent(unit * scale / delta, relation=relation)
        event = leaf if self.sampling_rate is None else PoissonSampledEvent(self.sampling_rate, leaf)
        return EventRelease(self.name, event, self.count)


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

    def ledger(self, *, relation: str | None = None, scale: float = 1.0) -> Ledger:
        """The releases as a :class:`~dpkit.accountant.ledger.Ledger` at σ_paper × ``scale``."""
        relation = self._relation(relation)
        scale = check_positive("scale", scale)
        return Ledger(tuple(r.release(relation, sigma=r.sigma_paper * scale) for r in self.releases))

    def _relation(self, relation: str | None) -> str:
        relation = self.paper_relation if relation is None else check_relation(relation)
        if relation not in self.relations:
            raise ValueError(
                f"{self.algorithm}'s privacy is defined only under {', '.join(self.relations)}; got relation "
                f"{relation!r}"
            )
        return relation


@dataclass(frozen=True)
class AlgorithmLedger:
    """A declaration interpreted under one relation and method, at the declared target (ε, δ)."""

    declaration: PrivacyDeclaration
    relation: str
    method: str
    epsilon_achieved_by_paper_sigma: float
    mu_at_paper_sigma: float | None  # None where a release is not a plain Gaussian (no single μ)
    scale: float
    flags: tuple[Flag, ...]
    #: :func:`informative_delta` of the declaration, and the ε there of the paper's σ and of σ_tight (same accountant)
    delta_informative: float = INFORMATIVE_DELTA
    epsilon_at_informative_delta_by_paper_sigma: float = math.nan
    epsilon_at_informative_delta_by_tight_sigma: float = math.nan
    mu_at_tight_sigma: float | None = None  # None where a release is not a plain Gaussian (no single μ)

    @property
    def noise_ratio(self) -> float:
        """σ_paper/σ_tight: how many times more noise the paper adds than the target needs."""
        return 1.0 / self.scale

    @property
    def sigmas_tight(self) -> tuple[float, ...]:
        """σ_tight of each release: σ_paper × the common calibrated factor (rounded up)."""
        return tuple(round_up(r.sigma_paper * self.scale) for r in self.declaration.releases)

    @property
    def sigma_paper(self) -> float | dict[str, float]:
        """The paper's σ: one number when every release shares it, else a mapping name → σ."""
        return _common([r.sigma_paper for r in self.declaration.releases], self.declaration.releases)

    @property
    def sigma_tight(self) -> float | dict[str, float]:
        """σ_tight: one number when every release shares it, else a mapping name → σ."""
        return _common(list(self.sigmas_tight), self.declaration.releases)

    def to_dict(self) -> dict[str, Any]:
        d = self.declaration
        releases = []
        for r, tight in zip(d.releases, self.sigmas_tight):
            releases.append(
                {
                    "name": r.name,
                    "statistic": r.statistic,
                    "count": r.count,
                    "paper_count": r.paper_count if r.paper_count is not None else r.count,
                    "sensitivity_add_remove": r.sensitivity_add_remove,
                    "sensitivity_replace_one": r.sensitivity_replace_one,
                    "sensitivity": r.sensitivity(self.relation),
                    "paper_sensitivity": r.paper_sensitivity,
                    "noise": r.noise,
                    "mechanism": r.mechanism,
                    "sampling_rate": r.sampling_rate,
                    "sigma_paper": r.sigma_paper,
                    "sigma_tight": tight,
                    "notes": list(r.notes),
                }
            )
        return {
            "algorithm": d.algorithm,
            "privacy_model": d.privacy_model,
            "paper": d.paper,
            "relation": self.relation,
            "paper_relation": d.paper_relation,
            "method": self.method,
            "epsilon": d.epsilon,
            "delta": d.delta,
            "parameters": dict(d.parameters),
            "releases": releases,
            "sigma_paper": self.sigma_paper,
            "sigma_tight": self.sigma_tight,
            "noise_ratio": self.noise_ratio,
            "epsilon_claimed_by_paper": d.paper_epsilon if d.paper_epsilon is not None else d.epsilon,
            "epsilon_achieved_by_paper_sigma": self.epsilon_achieved_by_paper_sigma,
            "mu_at_paper_sigma": self.mu_at_paper_sigma,
            "users": declared_users(d),
            "delta_informative": self.delta_informative,
            "epsilon_at_informative_delta_by_paper_sigma": self.epsilon_at_informative_delta_by_paper_sigma,
            "epsilon_at_informative_delta_by_tight_sigma": self.epsilon_at_informative_delta_by_tight_sigma,
            "mu_at_tight_sigma": self.mu_at_tight_sigma,
            "flags": [f.to_dict() for f in self.flags],
            "notes": list(d.notes),
        }


def declared_users(declaration: PrivacyDeclaration) -> int | None:
    """K, the number of users (episodes) of ``declaration``: its parameter ``users``, else ``episodes``, when
    that is a positive integer; ``None`` when the declaration does not say (e.g. a local-DP ledger, which
    does not depend on K)."""
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

    A δ above 1/K allows a mechanism that publishes one of the K users' data outright; the papers' δ
    (often 0.1) is far above it, and there the exact ε is often 0. The ledger, the report and the audits
    give ε at this δ beside the ε at the paper's δ.
    """
    if not isinstance(declaration, PrivacyDeclaration):
        raise ArgumentTypeError(f"declaration must be a PrivacyDeclaration, got {type(declaration).__name__}")
    users = declared_users(declaration)
    return INFORMATIVE_DELTA if users is None else min(INFORMATIVE_DELTA, 1.0 / users)


def _common(values: list[float], releases: tuple[DeclaredRelease, ...]) -> float | dict[str, float]:
    if all(v == values[0] for v in values):
        return values[0]
    return {r.name: v for r, v in zip(releases, values)}


def tree_depth_flag(paper_depth: int, *, exact_depth: int, schedule: str, counters: str) -> Flag:
    """The flag for a tree depth m that differs from the schedule's exact count of p-sums per item."""
    under = paper_depth < exact_depth
    return Flag(
        "tree-depth-mismatch",
        f"{counters}: the paper's tree depth m = {paper_depth} differs from the {exact_depth} noisy p-sums that "
        f"contain one user under the {schedule} schedule"
        + (
            " (it under-counts: the paper's σ is too small)."
            if under
            else " (it over-counts: sound, but it costs noise)."
        ),
        "error" if under else "info",
    )


def _relation_flags(declaration: PrivacyDeclaration, relation: str) -> list[Flag]:
    flags = []
    for r in declaration.releases:
        ours = r.sensitivity(relation)
        if r.paper_sensitivity < ours * (1 - 1e-12):
            holds = (
                " It is the add/remove sensitivity."
                if r.sensitivity_add_remove is not None
                and r.paper_sensitivity >= r.sensitivity_add_remove * (1 - 1e-12)
                else ""
            )
            flags.append(
                Flag(
                    "paper-sensitivity-too-small",
                    f"{r.name}: the paper's sensitivity {r.paper_sensitivity:.6g} is below the "
                    f"{relation.replace('_', '-')} "
                    f"sensitivity {ours:.6g}.{holds}",
                    "error",
                    r.name,
                )
            )
        elif r.paper_sensitivity > ours * (1 + 1e-12):
            flags.append(
                Flag(
                    "paper-sensitivity-loose",
                    f"{r.name}: the paper's sensitivity {r.paper_sensitivity:.6g} exceeds the "
                    f"{relation.replace('_', '-')} "
                    f"sensitivity {ours:.6g} (sound, but it costs noise).",
                    "info",
                    r.name,
                )
            )
        if (
            r.paper_count is not None
            and r.paper_count != r.count
            and not any(f.code == "tree-depth-mismatch" for f in declaration.flags)
        ):
            under = r.paper_count < r.count
            flags.append(
                Flag(
                    "count-mismatch",
                    f"{r.name}: the paper counts {r.paper_count} releases per user where the schedule makes {r.count}"
                    + (" (it under-counts)." if under else " (it over-counts: sound, but it costs noise)."),
                    "error" if under else "info",
                    r.name,
                )
            )
    return flags


def algorithm_ledger(
    declaration: PrivacyDeclaration,
    *,
    relation: str | None = None,
    method: str | None = None,
    conversion: str | None = None,
) -> AlgorithmLedger:
    """Interpret ``declaration`` under ``relation`` (default: the paper's) and ``method`` (default: exact for a
    declaration of plain Gaussian releases, pld otherwise).

    Computes the ε (at the declared δ) that the paper's σ achieves, the smallest common factor on
    the paper's σ that meets the declared (ε, δ), and the flags; and, with the same accountant, the ε of the
    paper's σ and of σ_tight at :func:`informative_delta`, and the μ of both (plain Gaussian ledgers).
    """
    if not isinstance(declaration, PrivacyDeclaration):
        raise ArgumentTypeError(f"declaration must be a PrivacyDeclaration, got {type(declaration).__name__}")
    if method is None:
        method = "exact" if all(r.is_gaussian for r in declaration.releases) else "pld"
    relation = declaration._relation(relation)
    acc = make_accountant(method, conversion=conversion)
    paper = declaration.ledger(relation=relation)
    achieved = acc.epsilon(paper, declaration.delta).epsilon
    scale = calibrate_ledger_scale(paper, declaration.epsilon, declaration.delta, method=method, conversion=conversion)
    flags = list(declaration.flags) + _relation_flags(declaration, relation)
    if achieved > declaration.epsilon:
        flags.append(
            Flag(
                "paper-sigma-insufficient",
                f"under {relation.replace('_', '-')} neighbours the paper's σ gives ε = {achieved:.6g} at δ = "
                f"{declaration.delta:.3g} ({acc.label}), above the target ε = {declaration.epsilon:.6g}.",
                "error",
            )
        )
    if not math.isfinite(achieved):  # pragma: no cover - guarded by the accountants
        raise ArithmeticError("non-finite ε")
    mu = paper.mu if paper.is_gaussian else None
    # at the σ_tight the ledger shows (AlgorithmLedger.sigmas_tight: rounded up)
    tight = Ledger(tuple(r.release(relation, sigma=round_up(r.sigma_paper * scale)) for r in declaration.releases))
    delta_inf = informative_delta(declaration)
    return AlgorithmLedger(
        declaration,
        relation,
        acc.label,
        achieved,
        mu,
        scale,
        tuple(flags),
        delta_informative=delta_inf,
        epsilon_at_informative_delta_by_paper_sigma=acc.epsilon(paper, delta_inf).epsilon,
        epsilon_at_informative_delta_by_tight_sigma=acc.epsilon(tight, delta_inf).epsilon,
        mu_at_tight_sigma=tight.mu if tight.is_gaussian else None,
    )
