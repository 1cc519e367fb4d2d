"""Release ledgers: what a mechanism releases, as data (the events, not their interpretation).

Like dp-accounting's ``DpEvent``, a :class:`Ledger` only describes releases; the accountants
in :mod:`dpkit.accountant.accountants` interpret it under each method. A release is either a
Gaussian mechanism applied ``count`` times with ℓ2 sensitivity Δ (under the neighbouring relation
the caller chose) and noise N(0, σ²I) — :class:`GaussianRelease` — or any mechanism described as an
event (:mod:`dpkit.accountant.events`: Laplace, randomized response, a Poisson-subsampled Gaussian,
…) applied ``count`` times — :class:`EventRelease`. :attr:`Ledger.event` is the whole ledger as one
event; a ledger of Gaussian releases alone also has its exact :attr:`~Ledger.mu` and :attr:`~Ledger.rho`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # dp-accounting is imported where it is used: it costs 0.6 s at startup
    import dp_accounting

from .events import ComposedEvent, Event, GaussianEvent, SelfComposedEvent, scale_noise
from .interop import to_dp_event
from .numerics import round_up, times_count, times_sqrt_count
from .sensitivity import Relation
from .validation import ArgumentTypeError, check_count, check_noise_scale, check_positive

__all__ = ["GaussianRelease", "EventRelease", "Release", "Ledger", "event_from_ledger"]


@dataclass(frozen=True)
class GaussianRelease:
    """``count`` releases of a statistic with ℓ2 sensitivity ``sensitivity`` plus N(0, σ²I) noise.

    Attributes:
        name: the release's name (a non-empty string).
        sensitivity: the ℓ2 sensitivity Δ of each release (> 0).
        sigma: the noise standard deviation σ (> 0; +inf: the release carries nothing).
        count: how many times it is released (an integer >= 1); 1 by default.

    Raises:
        ArgumentTypeError: a field of the wrong type.
        ValueError: an empty name, Δ not positive and finite, σ not positive, or count below 1.
    """

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
        object.__setattr__(self, "sigma", check_noise_scale(f"{self.name}.sigma", self.sigma))
        object.__setattr__(self, "count", check_count(f"{self.name}.count", self.count))

    @property
    def noise_multiplier(self) -> float:
        """σ/Δ: dp-accounting's parameterisation of the Gaussian mechanism."""
        return self.sigma / self.sensitivity

    @property
    def mu_squared(self) -> float:
        """count · (Δ/σ)²: this release's share of the composition's μ²."""
        ratio = self.sensitivity / self.sigma
        return times_count(self.count, ratio * ratio)  # overflows to inf (``**`` would raise), any count

    def to_dict(self) -> dict[str, object]:
        """The release as a plain dict.

        Returns:
            ``name``, ``sensitivity``, ``sigma`` and ``count`` (the form :meth:`Ledger.from_dicts` reads).
        """
        return {"name": self.name, "sensitivity": self.sensitivity, "sigma": self.sigma, "count": self.count}

    def to_event(self, relation: Relation | str = "add_remove") -> Event:
        """This release as an event stated under ``relation`` (the same μ = Δ/σ per release under either).

        Args:
            relation: the neighbouring relation to state the event under; "add_remove" by default.

        Returns:
            A :class:`~dpkit.accountant.events.GaussianEvent`, self-composed ``count`` times when count > 1.
        """
        leaf = GaussianEvent.from_sigma(self.sigma, sensitivity=self.sensitivity, relation=relation)
        return leaf if self.count == 1 else SelfComposedEvent(leaf, self.count)


@dataclass(frozen=True)
class EventRelease:
    """``count`` releases of any mechanism described as an event (:mod:`dpkit.accountant.events`).

    Attributes:
        name: the release's name (a non-empty string).
        event: the mechanism, an :class:`~dpkit.accountant.events.Event`.
        count: how many times it is released (an integer >= 1); 1 by default.

    Raises:
        ArgumentTypeError: a name that is not a string, an event that is not an Event, or a bad count type.
        ValueError: an empty name or a count below 1.
    """

    name: str
    event: Event
    count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ArgumentTypeError(f"release name must be a non-empty string, got {self.name!r}")
        if not self.name.strip():
            raise ValueError(f"release name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.event, Event):
            raise ArgumentTypeError(f"{self.name}.event must be a dpkit event (an Event), got {self.event!r}")
        object.__setattr__(self, "count", check_count(f"{self.name}.count", self.count))

    def to_dict(self) -> dict[str, object]:
        """The release as a plain dict.

        Returns:
            ``name``, ``event`` (in :meth:`~dpkit.accountant.events.Event.to_dict`'s form) and ``count``.
        """
        return {"name": self.name, "event": self.event.to_dict(), "count": self.count}

    def to_event(self, relation: Relation | str | None = None) -> Event:
        """The release as one event (``count`` compositions of :attr:`event`); ``relation`` must be the event's.

        Args:
            relation: the relation expected (None: the event's own).

        Returns:
            The event, self-composed ``count`` times when count > 1.

        Raises:
            ValueError: ``relation`` differs from the event's.
        """
        if relation is not None and relation != self.event.relation:
            raise ValueError(f"{self.name} is stated under {self.event.relation}, not {relation}")
        return self.event if self.count == 1 else SelfComposedEvent(self.event, self.count)


#: A ledger entry.
Release = GaussianRelease | EventRelease


@dataclass(frozen=True)
class Ledger:
    """An ordered, immutable list of releases composed adaptively: Gaussian releases and any events.

    Attributes:
        releases: the :class:`GaussianRelease` and :class:`EventRelease` entries, in order (at least one).

    Raises:
        ArgumentTypeError: an entry that is neither a GaussianRelease nor an EventRelease.
        ValueError: no release, or events stated under different relations.
    """

    releases: tuple[Release, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        releases = tuple(self.releases)
        if not releases:
            raise ValueError("a ledger needs at least one release, got none")
        for i, r in enumerate(releases):
            if not isinstance(r, (GaussianRelease, EventRelease)):
                raise ArgumentTypeError(f"releases[{i}] must be a GaussianRelease or an EventRelease, got {r!r}")
        relations = {r.event.relation for r in releases if isinstance(r, EventRelease)}
        if len(relations) > 1:
            raise ValueError(f"a ledger's events must be stated under one relation, got {sorted(relations)}")
        object.__setattr__(self, "releases", releases)

    @property
    def is_gaussian(self) -> bool:
        """Whether every release is a :class:`GaussianRelease` (the ledger then has an exact μ and ρ)."""
        return all(isinstance(r, GaussianRelease) for r in self.releases)

    @property
    def relation(self) -> str:
        """The relation of the ledger's events (a Gaussian release's Δ already carries its own: ``add_remove``)."""
        for r in self.releases:
            if isinstance(r, EventRelease):
                return r.event.relation
        return "add_remove"

    @property
    def event(self) -> ComposedEvent:
        """The whole ledger as one event, each release in order (Gaussian releases at their μ = Δ/σ)."""
        relation = self.relation
        return ComposedEvent(tuple(r.to_event(relation) for r in self.releases))

    def _gaussian(self, what: str) -> tuple[GaussianRelease, ...]:
        for r in self.releases:
            if isinstance(r, EventRelease):
                raise ValueError(
                    f"{what} is defined for a ledger of Gaussian releases; {r.name} is an event: "
                    "ask an accountant for its (epsilon, delta)"
                )
        return self.releases  # type: ignore[return-value]  # all GaussianRelease, checked above

    @classmethod
    def homogeneous(cls, sensitivity: float, sigma: float, *, compositions: int = 1, name: str = "gaussian") -> Ledger:
        """A ledger of ``compositions`` identical Gaussian releases.

        Args:
            sensitivity: the ℓ2 sensitivity Δ of each release (> 0).
            sigma: the noise standard deviation σ of each release (> 0).
            compositions: how many releases (an integer >= 1); 1 by default.
            name: the release's name; "gaussian" by default.

        Returns:
            The ledger of one :class:`GaussianRelease` with ``count = compositions``.

        Raises:
            ArgumentTypeError: a parameter of the wrong type.
            ValueError: Δ or σ not positive, compositions below 1, or an empty name.
        """
        return cls((GaussianRelease(name, sensitivity, sigma, check_count("compositions", compositions)),))

    @classmethod
    def from_dicts(cls, items: Iterable[Mapping[str, object]]) -> Ledger:
        """Build a ledger from mappings: ``name``, ``sensitivity``, ``sigma`` (a Gaussian release) or ``name``,
        ``event`` (an event in :meth:`~dpkit.accountant.events.Event.to_dict`'s form), and an optional ``count``.

        Args:
            items: the releases, each a mapping as :meth:`to_dicts` writes them.

        Returns:
            The ledger.

        Raises:
            ArgumentTypeError: an item (or its event) that is not a mapping, or a value of the wrong type.
            ValueError: an unknown or missing key, or a bad value (see :class:`GaussianRelease`, :class:`EventRelease`).
        """
        releases: list[Release] = []
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise ArgumentTypeError(f"release {i} must be a table/object, got {item!r}")
            keys = {"name", "event", "count"} if "event" in item else {"name", "sensitivity", "sigma", "count"}
            unknown = set(item) - keys
            if unknown:
                raise ValueError(f"release {i} has unknown key(s): {', '.join(sorted(unknown))}")
            missing = keys - {"count"} - set(item)
            if missing:
                raise ValueError(f"release {i} is missing key(s): {', '.join(sorted(missing))}")
            fields: Mapping[str, Any] = item  # the releases check each value's type and range
            if "event" in item:
                event = fields["event"]
                if not isinstance(event, Mapping):
                    raise ArgumentTypeError(f"release {i}: event must be a table/object, got {event!r}")
                releases.append(EventRelease(fields["name"], Event.from_dict(event), fields.get("count", 1)))
            else:
                releases.append(
                    GaussianRelease(fields["name"], fields["sensitivity"], fields["sigma"], fields.get("count", 1))
                )
        return cls(tuple(releases))

    def to_dicts(self) -> list[dict[str, object]]:
        """The releases as plain dicts (the inverse of :meth:`from_dicts`).

        Returns:
            Each release's :meth:`~GaussianRelease.to_dict`, in order.
        """
        return [r.to_dict() for r in self.releases]

    @property
    def compositions(self) -> int:
        """Total number of Gaussian mechanism applications."""
        return sum(r.count for r in self.releases)

    @property
    def mu(self) -> float:
        """μ of the composition, sqrt(Σ countᵢ Δᵢ²/σᵢ²) (exact GDP), rounded up; Gaussian releases only."""
        # each release's μ scaled by the largest, so that tiny μᵢ (σ near the top of the doubles) do not underflow
        mus = [times_sqrt_count(r.count, r.sensitivity / r.sigma) for r in self._gaussian("mu")]  # any count
        top = max(mus)
        if top == 0.0:  # σ = inf everywhere: nothing released
            return 0.0
        if math.isinf(top):  # Δ/σ beyond the doubles: no privacy at all
            return math.inf
        return round_up(top * math.sqrt(math.fsum((m / top) ** 2 for m in mus)))

    @property
    def rho(self) -> float:
        """ρ of the composition (zCDP), Σ countᵢ Δᵢ²/(2σᵢ²), rounded up; Gaussian releases only."""
        mu = self.mu
        return round_up(mu * mu / 2.0) if mu > 0.0 else 0.0  # a positive μ never rounds to ρ = 0

    def scaled(self, factor: float) -> Ledger:
        """The same ledger with every noise scale multiplied by ``factor`` (> 0): each Gaussian release's σ, and
        each event's noise multipliers (:func:`dpkit.accountant.events.scale_noise`).

        Args:
            factor: the factor every noise scale is multiplied by (> 0).

        Returns:
            The scaled ledger.

        Raises:
            ArgumentTypeError: ``factor`` not a real number.
            ValueError: ``factor`` not positive and finite.
        """
        factor = check_positive("factor", factor)
        return Ledger(
            tuple(
                GaussianRelease(r.name, r.sensitivity, r.sigma * factor, r.count)
                if isinstance(r, GaussianRelease)
                else EventRelease(r.name, scale_noise(r.event, factor), r.count)
                for r in self.releases
            )
        )

    def to_dp_event(self) -> dp_accounting.DpEvent:
        """Export as a dp-accounting event, to hand to any dp-accounting accountant under
        :attr:`relation` (:func:`dpkit.accountant.interop.dp_neighboring_relation`).

        A ledger of Gaussian releases exports each as ``SelfComposedDpEvent(GaussianDpEvent(σ/Δ), count)``
        and the ledger as their ``ComposedDpEvent`` (one release: itself): dp-accounting's Gaussian event
        measures noise in units of the sensitivity, so use its ``ADD_OR_REMOVE_ONE`` relation — Δ already
        carries the neighbouring relation the ledger was built under. Any other ledger exports :attr:`event`.

        Returns:
            The dp-accounting ``DpEvent``.
        """
        import dp_accounting

        if not self.is_gaussian:
            return to_dp_event(self.event)
        events: list[dp_accounting.DpEvent] = []
        for r in self._gaussian("to_dp_event"):
            event: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(r.noise_multiplier)
            if r.count > 1:
                event = dp_accounting.SelfComposedDpEvent(event, r.count)
            events.append(event)
        return events[0] if len(events) == 1 else dp_accounting.ComposedDpEvent(events)


def event_from_ledger(ledger: Ledger) -> ComposedEvent:
    """A :class:`~dpkit.accountant.ledger.Ledger` as one event (its :attr:`~dpkit.accountant.ledger.Ledger.event`).

    Each Gaussian release becomes ``GaussianEvent.from_sigma(σ, sensitivity=Δ, relation=…)``, self-composed
    ``count`` times: a ledger's Δ already carries the relation it was derived under, so μ of each release is
    Δ/σ as in the ledger; each event release is its event, self-composed ``count`` times.

    Args:
        ledger: the :class:`Ledger`.

    Returns:
        The ledger's :attr:`~Ledger.event`, a :class:`~dpkit.accountant.events.ComposedEvent`.

    Raises:
        ArgumentTypeError: ``ledger`` is not a Ledger.
    """
    if not isinstance(ledger, Ledger):
        raise ArgumentTypeError(f"ledger must be a dpkit.accountant.Ledger, got {type(ledger).__name__}")
    return ledger.event
