"""Algorithm ledgers: a privacy declaration interpreted under a relation and a method, at its target (ε, δ).

:func:`algorithm_ledger` reads a :class:`~dpkit.accountant.declarations.PrivacyDeclaration` and returns its
:class:`AlgorithmLedger`: the ε the paper's σ achieves, σ_tight, the optimal allocation (:data:`OPTIMAL_OBJECTIVE`),
the same at the informative δ, and flags. What each reading means: docs/explanation/seed-ledgers.md.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

from .accountants import AccountingMethod, make_accountant
from .calibration import calibrate_ledger_scale
from .declarations import DeclaredRelease, PrivacyDeclaration, declared_users, informative_delta
from .flags import INFORMATIVE_DELTA, Flag, uninformative_delta_flag
from .numerics import round_up
from .sensitivity import Relation
from .validation import ArgumentTypeError, check_member, enum_values

__all__ = [
    "OPTIMAL_OBJECTIVE",
    "AlgorithmLedger",
    "ALLOCATIONS",
    "Allocation",
    "algorithm_ledger",
]


#: What the ``optimal`` allocation minimises, and under which constraint.
OPTIMAL_OBJECTIVE: str = (
    "the total noise variance Σᵢ nᵢσᵢ² over the user's mechanisms (nᵢ mechanisms of sensitivity Δᵢ at σᵢ, one σ "
    "per release and step) at the same Gaussian composition μ² = Σᵢ nᵢΔᵢ²/σᵢ²: σᵢ ∝ sqrt(Δᵢ), scaled by one "
    "common factor calibrated to the target as σ_tight is; a step of sensitivity 0 gets no noise"
)


@dataclass(frozen=True)
class AlgorithmLedger:
    """A declaration interpreted under one relation and method, at the declared target (ε, δ).

    Three noise allocations meet the target: the paper's σ (``paper``), the paper's σ pattern times one common
    factor (``tight``: :attr:`sigmas_tight`) and the allocation that minimises the total noise variance
    (``optimal``: :attr:`sigmas_optimal`, :data:`OPTIMAL_OBJECTIVE`; plain Gaussian declarations only, ``None``
    otherwise with the reason in :attr:`optimal_note`).
    """

    declaration: PrivacyDeclaration
    relation: str
    method: str
    epsilon_achieved_by_paper_sigma: float
    mu_at_paper_sigma: float | None  # None where a release is not a plain Gaussian (no single μ)
    scale: float
    flags: tuple[Flag, ...]
    #: :func:`~dpkit.accountant.declarations.informative_delta` of the declaration, and the ε there of the paper's σ
    #: and of σ_tight (same accountant)
    delta_informative: float = INFORMATIVE_DELTA
    epsilon_at_informative_delta_by_paper_sigma: float = math.nan
    epsilon_at_informative_delta_by_tight_sigma: float = math.nan
    mu_at_tight_sigma: float | None = None  # None where a release is not a plain Gaussian (no single μ)
    #: the common factor on the optimal pattern sqrt(Δᵢ) (None: no optimal allocation, see ``optimal_note``)
    optimal_scale: float | None = None
    optimal_note: str = ""
    epsilon_at_informative_delta_by_optimal_sigma: float | None = None
    mu_at_optimal_sigma: float | None = None

    @property
    def noise_ratio(self) -> float:
        """σ_paper/σ_tight: how many times more noise the paper adds than the target needs."""
        return 1.0 / self.scale

    @property
    def sigmas_tight(self) -> tuple[float, ...]:
        """σ_tight of each release: σ_paper × the common calibrated factor (rounded up)."""
        return tuple(round_up(r.sigma_paper * self.scale) for r in self.declaration.releases)

    @property
    def sigmas_optimal(self) -> tuple[tuple[float, ...], ...] | None:
        """σ_optimal of each release and step: the common factor × sqrt(Δ of the step) (rounded up), 0 where the
        step's sensitivity is 0; ``None`` without an optimal allocation."""
        if self.optimal_scale is None:
            return None
        pattern = self.declaration.optimal_pattern(self.relation)
        return tuple(_optimal_sigmas(pattern[r.name], self.optimal_scale) for r in self.declaration.releases)

    @property
    def sigma_paper(self) -> float | dict[str, float]:
        """The paper's σ: one number when every release shares it, else a mapping name → σ."""
        return _common([r.sigma_paper for r in self.declaration.releases], self.declaration.releases)

    @property
    def sigma_tight(self) -> float | dict[str, float]:
        """σ_tight: one number when every release shares it, else a mapping name → σ."""
        return _common(list(self.sigmas_tight), self.declaration.releases)

    @property
    def sigma_optimal(self) -> float | dict[str, float | list[float]] | None:
        """σ_optimal: one number when every release and step shares it, else a mapping name → σ (one number, or
        one per step); ``None`` without an optimal allocation."""
        sigmas = self.sigmas_optimal
        if sigmas is None:
            return None
        flat = {v for per_step in sigmas for v in per_step}
        if len(flat) == 1:
            return flat.pop()
        return {r.name: _one_or_list(per_step) for r, per_step in zip(self.declaration.releases, sigmas)}

    def noise_variance(self, allocation: Allocation | str) -> float | None:
        """The total noise variance Σᵢ nᵢσᵢ² of one allocation: what the optimal allocation minimises.

        See :data:`OPTIMAL_OBJECTIVE`.

        Args:
            allocation: "paper", "tight" or "optimal" (:data:`ALLOCATIONS`).

        Returns:
            The variance summed over every mechanism and step, or None for "optimal" without an optimal allocation.

        Raises:
            ValueError: an unknown allocation.
        """
        allocation = check_member("allocation", allocation, Allocation)
        releases = self.declaration.releases
        if allocation == Allocation.OPTIMAL:
            if self.sigmas_optimal is None:
                return None
            per_step = self.sigmas_optimal
        else:
            common = [r.sigma_paper for r in releases] if allocation == Allocation.PAPER else list(self.sigmas_tight)
            per_step = tuple((c,) * r.steps for r, c in zip(releases, common))
        return math.fsum(r.count_per_step * s * s for r, steps in zip(releases, per_step) for s in steps)

    def to_dict(self) -> dict[str, Any]:
        """The ledger as plain data: what ``dpkit ledger --json`` prints and a report holds.

        Returns:
            The declaration's fields, each release with its sensitivities and its σ of every allocation, the
            allocations' σ and noise variance, the ε and μ of each at the target and the informative δ, the flags
            (as dicts), the notes and the joint groups.
        """
        d = self.declaration
        releases = []
        optimal = self.sigmas_optimal
        for i, (r, tight) in enumerate(zip(d.releases, self.sigmas_tight)):
            releases.append(
                {
                    "name": r.name,
                    "statistic": r.statistic,
                    "count": r.count,
                    "paper_count": r.paper_count if r.paper_count is not None else r.count,
                    "sensitivity_add_remove": r.sensitivity_add_remove,
                    "sensitivity_replace_one": r.sensitivity_replace_one,
                    "sensitivity": r.sensitivity(self.relation),
                    "steps": r.steps,
                    "step_sensitivities": list(r.step_sensitivities(self.relation)),
                    "paper_sensitivity": r.paper_sensitivity,
                    "noise": r.noise,
                    "mechanism": r.mechanism,
                    "sampling_rate": r.sampling_rate,
                    "sigma_paper": r.sigma_paper,
                    "sigma_tight": tight,
                    "sigma_optimal": None if optimal is None else _one_or_list(optimal[i]),
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
            "sigma_optimal": self.sigma_optimal,
            "noise_ratio": self.noise_ratio,
            "optimal_allocation": {
                "objective": OPTIMAL_OBJECTIVE,
                "computed": optimal is not None,
                "note": self.optimal_note,
            },
            "noise_variance": {a: self.noise_variance(a) for a in ALLOCATIONS},
            "epsilon_claimed_by_paper": d.paper_epsilon if d.paper_epsilon is not None else d.epsilon,
            "epsilon_achieved_by_paper_sigma": self.epsilon_achieved_by_paper_sigma,
            "mu_at_paper_sigma": self.mu_at_paper_sigma,
            "users": declared_users(d),
            "delta_informative": self.delta_informative,
            "epsilon_at_informative_delta_by_paper_sigma": self.epsilon_at_informative_delta_by_paper_sigma,
            "epsilon_at_informative_delta_by_tight_sigma": self.epsilon_at_informative_delta_by_tight_sigma,
            "epsilon_at_informative_delta_by_optimal_sigma": self.epsilon_at_informative_delta_by_optimal_sigma,
            "mu_at_tight_sigma": self.mu_at_tight_sigma,
            "mu_at_optimal_sigma": self.mu_at_optimal_sigma,
            "flags": [f.to_dict() for f in self.flags],
            "notes": list(d.notes),
            "joint": [{"releases": list(g.releases), "description": g.description} for g in d.joint],
        }


class Allocation(enum.StrEnum):
    """The noise allocations a ledger compares (and the simulations accept as ``sigma``)."""

    PAPER = "paper"
    TIGHT = "tight"
    OPTIMAL = "optimal"


#: The values of :class:`Allocation`.
ALLOCATIONS: tuple[str, ...] = enum_values(Allocation)


def _optimal_sigmas(pattern: tuple[float, ...], scale: float) -> tuple[float, ...]:
    return tuple(round_up(scale * p) if p > 0.0 else 0.0 for p in pattern)


def _one_or_list(values: tuple[float, ...]) -> float | list[float]:
    return values[0] if len(set(values)) == 1 else list(values)


def _common(values: list[float], releases: tuple[DeclaredRelease, ...]) -> float | dict[str, float]:
    if all(v == values[0] for v in values):
        return values[0]
    return {r.name: v for r, v in zip(releases, values)}


def _relation_flags(declaration: PrivacyDeclaration, relation: Relation) -> list[Flag]:
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
    relation: Relation | str | None = None,
    method: AccountingMethod | str | None = None,
    conversion: str | None = None,
) -> AlgorithmLedger:
    """Interpret ``declaration`` under ``relation`` (default: the paper's) and ``method`` (default: exact for a
    declaration of plain Gaussian releases, pld otherwise).

    Args:
        declaration: the :class:`PrivacyDeclaration`.
        relation: "add_remove" or "replace_one" (None: the paper's).
        method: the accounting method (None: exact for plain Gaussian releases, pld otherwise).
        conversion: the RDP or zCDP conversion (None: the method's default).

    Returns:
        The :class:`AlgorithmLedger`: the paper's ε, σ_tight, the optimal allocation, the informative δ, flags.

    Raises:
        ArgumentTypeError: ``declaration`` is not a PrivacyDeclaration.
        ValueError: a relation the declaration is not defined under, or an unknown method or conversion.
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
    mu = paper.mu if paper.is_gaussian else None
    # at the σ_tight the ledger shows (AlgorithmLedger.sigmas_tight: rounded up)
    tight = declaration.ledger(
        relation=relation, sigmas={r.name: round_up(r.sigma_paper * scale) for r in declaration.releases}
    )
    delta_inf = informative_delta(declaration)
    epsilon_inf = acc.epsilon(paper, delta_inf).epsilon
    uninformative = uninformative_delta_flag(declaration.delta, declared_users(declaration), epsilon=epsilon_inf)
    if uninformative is not None:
        flags.append(uninformative)
    optimal: dict[str, Any] = {"optimal_note": _no_optimal_reason(declaration)}
    if not optimal["optimal_note"]:
        pattern = declaration.optimal_pattern(relation)
        base = declaration.ledger(relation=relation, sigmas=pattern)
        factor = calibrate_ledger_scale(
            base, declaration.epsilon, declaration.delta, method=method, conversion=conversion
        )
        best = declaration.ledger(
            relation=relation,
            sigmas={r.name: _optimal_sigmas(pattern[r.name], factor) for r in declaration.releases},
        )
        optimal = {
            "optimal_scale": factor,
            "optimal_note": f"σᵢ ∝ sqrt(Δᵢ) minimises {OPTIMAL_OBJECTIVE.split(' (')[0]}"
            + "".join(f"; {g.name} jointly: the ratio that minimises its variance per μ²" for g in declaration.joint),
            "epsilon_at_informative_delta_by_optimal_sigma": acc.epsilon(best, delta_inf).epsilon,
            "mu_at_optimal_sigma": best.mu,
        }
    return AlgorithmLedger(
        declaration,
        relation,
        acc.label,
        achieved,
        mu,
        scale,
        tuple(flags),
        delta_informative=delta_inf,
        epsilon_at_informative_delta_by_paper_sigma=epsilon_inf,
        epsilon_at_informative_delta_by_tight_sigma=acc.epsilon(tight, delta_inf).epsilon,
        mu_at_tight_sigma=tight.mu if tight.is_gaussian else None,
        **optimal,
    )


def _no_optimal_reason(declaration: PrivacyDeclaration) -> str:
    """Why a declaration has no optimal allocation ("" when it has one): σᵢ ∝ sqrt(Δᵢ) is the optimum of Gaussian
    composition, whose privacy depends on Σᵢ nᵢΔᵢ²/σᵢ² alone; a Laplace or subsampled release has no such form."""
    other = [r for r in declaration.releases if not r.is_gaussian]
    if not other:
        return ""
    kinds = ", ".join(f"{r.name} ({'subsampled ' if r.sampling_rate is not None else ''}{r.mechanism})" for r in other)
    return (
        f"not computed: σᵢ ∝ sqrt(Δᵢ) is the optimum of plain Gaussian composition, and {kinds} is not a plain "
        "Gaussian release"
    )
