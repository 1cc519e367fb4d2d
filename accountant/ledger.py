"""Release ledgers: what a mechanism releases, as data (the events, not their interpretation).

Like dp-accounting's ``DpEvent``, a :class:`Ledger` only describes releases; the accountants
in :mod:`dpkit.accountant.accountants` interpret it under each method. A release is a Gaussian
mechanism applied ``count`` times with ℓ2 sensitivity Δ (under the neighbouring relation the
caller chose) and noise N(0, σ²I).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # dp-accounting is imported where it is used: it costs 0.6 s at startup
    import dp_accounting

from .numerics import round_up
from .validation import ArgumentTypeError, check_count, check_positive

__all__ = ["GaussianRelease", "Ledger"]


@dataclass(frozen=True)
class GaussianRelease:
    """``count`` releases of a statistic with ℓ2 sensitivity ``sensitivity`` plus N(0, σ²I) noise."""

    name: str
    sensitivity: float
    sigma: float
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ArgumentTypeError(f"release name must be a non-empty string, got {self.name!r}")
        if not self.name.strip():
            raise ValueError(f"release name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "sensitivity", check_positive(f"{self.name}.sensitivity", self.sensitivity))
        object.__setattr__(self, "sigma", check_positive(f"{self.name}.sigma", self.sigma))
        object.__setattr__(self, "count", check_count(f"{self.name}.count", self.count))

    @property
    def noise_multiplier(self) -> float:
        """σ/Δ: dp-accounting's parameterisation of the Gaussian mechanism."""
        return self.sigma / self.sensitivity

    @property
    def mu_squared(self) -> float:
        """count · (Δ/σ)²: this release's share of the composition's μ²."""
        ratio = self.sensitivity / self.sigma
        return self.count * ratio * ratio  # a product overflows to inf; ``**`` would raise

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "sensitivity": self.sensitivity, "sigma": self.sigma, "count": self.count}


@dataclass(frozen=True)
class Ledger:
    """An ordered, immutable list of Gaussian releases composed adaptively."""

    releases: tuple[GaussianRelease, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        releases = tuple(self.releases)
        if not releases:
            raise ValueError("a ledger needs at least one release, got none")
        for i, r in enumerate(releases):
            if not isinstance(r, GaussianRelease):
                raise ArgumentTypeError(f"releases[{i}] must be a GaussianRelease, got {r!r}")
        object.__setattr__(self, "releases", releases)

    @classmethod
    def homogeneous(cls, sensitivity: float, sigma: float, *, compositions: int = 1, name: str = "gaussian") -> Ledger:
        """A ledger of ``compositions`` identical Gaussian releases."""
        return cls((GaussianRelease(name, sensitivity, sigma, check_count("compositions", compositions)),))

    @classmethod
    def from_dicts(cls, items: Iterable[Mapping[str, object]]) -> Ledger:
        """Build a ledger from mappings with keys name, sensitivity, sigma and optional count."""
        releases = []
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise ArgumentTypeError(f"release {i} must be a table/object, got {item!r}")
            unknown = set(item) - {"name", "sensitivity", "sigma", "count"}
            if unknown:
                raise ValueError(f"release {i} has unknown key(s): {', '.join(sorted(unknown))}")
            missing = {"name", "sensitivity", "sigma"} - set(item)
            if missing:
                raise ValueError(f"release {i} is missing key(s): {', '.join(sorted(missing))}")
            fields: Mapping[str, Any] = item  # GaussianRelease checks each value's type and range
            releases.append(
                GaussianRelease(fields["name"], fields["sensitivity"], fields["sigma"], fields.get("count", 1))
            )
        return cls(tuple(releases))

    def to_dicts(self) -> list[dict[str, object]]:
        return [r.to_dict() for r in self.releases]

    @property
    def compositions(self) -> int:
        """Total number of Gaussian mechanism applications."""
        return sum(r.count for r in self.releases)

    @property
    def mu(self) -> float:
        """μ of the composition, sqrt(Σ countᵢ Δᵢ²/σᵢ²) (exact GDP), rounded up."""
        return round_up(math.sqrt(math.fsum(r.mu_squared for r in self.releases)))

    @property
    def rho(self) -> float:
        """ρ of the composition (zCDP), Σ countᵢ Δᵢ²/(2σᵢ²), rounded up."""
        return round_up(math.fsum(r.mu_squared for r in self.releases) / 2.0)

    def scaled(self, factor: float) -> Ledger:
        """The same ledger with every σ multiplied by ``factor`` (> 0)."""
        factor = check_positive("factor", factor)
        return Ledger(tuple(GaussianRelease(r.name, r.sensitivity, r.sigma * factor, r.count) for r in self.releases))

    def to_dp_event(self) -> dp_accounting.DpEvent:
        """Export as a dp-accounting event, to hand to any dp-accounting accountant.

        Each release becomes ``SelfComposedDpEvent(GaussianDpEvent(σ/Δ), count)`` and the
        ledger their ``ComposedDpEvent``. dp-accounting's Gaussian event measures noise in
        units of the sensitivity, so use its ``ADD_OR_REMOVE_ONE`` relation: Δ already
        carries the neighbouring relation the ledger was built under.
        """
        import dp_accounting

        events: list[dp_accounting.DpEvent] = []
        for r in self.releases:
            event: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(r.noise_multiplier)
            if r.count > 1:
                event = dp_accounting.SelfComposedDpEvent(event, r.count)
            events.append(event)
        return events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)
