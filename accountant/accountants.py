"""Accountants: interpreters of a :class:`~dpkit.accountant.ledger.Ledger` under each method.

The split follows dp-accounting: the ledger is data, an accountant turns it into (ε, δ).

Methods: exact, pld, rdp, zcdp and classic (:data:`METHODS`); every one also interprets the events of
:mod:`dpkit.accountant.events` where it can (:meth:`Accountant.supports` says why not). What each computes, the
order of their bounds and how they answer the ends: docs/explanation/methods.md and docs/FORMULAS.md §11.
"""

from __future__ import annotations

import enum
import math
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .classic import classic_composed_delta, classic_composed_epsilon
from .classic_events import classic_event_delta, classic_event_epsilon, classic_parts, classic_refusal
from .events import Event, walk
from .gdp import gdp_delta_unchecked, gdp_epsilon_unchecked
from .ledger import GaussianRelease, Ledger
from .numerics import round_up
from .pld import PLD_MAX_MU, PLD_MIN_MU, auto_discretization, pld_accountant_for
from .pld_events import (
    closed_form_delta,
    closed_form_epsilon,
    closed_form_refusal,
    pld_delta,
    pld_epsilon,
    pld_supports,
)
from .rdp import (
    RDP_CONVERSIONS,
    RdpConversionName,
    check_rdp_orders,
    linear_rdp_delta_unchecked,
    linear_rdp_epsilon_unchecked,
    rdp_delta,
    rdp_epsilon,
)
from .rdp_events import rdp_curve, rdp_supports
from .validation import (
    ArgumentTypeError,
    check_choice,
    check_extended_nonnegative,
    check_member,
    check_positive,
    check_unit_interval,
    enum_values,
    shown_int,
)
from .zcdp import ZCDP_CONVERSIONS, ZcdpConversionName, zcdp_delta_unchecked, zcdp_epsilon_unchecked
from .zcdp_events import gaussian_only, zcdp_event_rho, zcdp_refusal

__all__ = [
    "Guarantee",
    "Support",
    "EVENT_ORDERS",
    "Accountant",
    "ExactAccountant",
    "PldAccountant",
    "RdpAccountant",
    "ZcdpAccountant",
    "ClassicAccountant",
    "AccountingMethod",
    "METHODS",
    "VARIANTS",
    "make_accountant",
    "compare_methods",
    "compare_deltas",
    "DeltaComparison",
]


class AccountingMethod(enum.StrEnum):
    """The accountants :func:`make_accountant` builds, one per currency of privacy loss."""

    EXACT = "exact"
    PLD = "pld"
    RDP = "rdp"
    ZCDP = "zcdp"
    CLASSIC = "classic"


#: The values of :class:`AccountingMethod` (the ``--method`` choices of the CLI).
METHODS: tuple[str, ...] = enum_values(AccountingMethod)
CONVERSIONS: dict[str, tuple[str, ...]] = {"rdp": RDP_CONVERSIONS, "zcdp": ZCDP_CONVERSIONS}
DEFAULT_RDP_CONVERSION: RdpConversionName = "improved"
DEFAULT_ZCDP_CONVERSION: ZcdpConversionName = "bun-steinke"

#: The side-by-side comparison: (key, method, conversion), tightest first.
VARIANTS: tuple[tuple[str, str, str | None], ...] = (
    ("exact", "exact", None),
    ("pld", "pld", None),
    ("rdp", "rdp", "improved"),
    ("rdp-mironov", "rdp", "mironov"),
    ("zcdp-rdp-optimal", "zcdp", "rdp-optimal"),
    ("zcdp", "zcdp", "bun-steinke"),
    ("classic", "classic", None),
)


@dataclass(frozen=True)
class Guarantee:
    """An (ε, δ) guarantee and how it was obtained.

    Attributes:
        epsilon: the ε (rounded up where it was computed).
        delta: the δ (rounded up where it was computed).
        method: the accounting method that certified it.
        conversion: the RDP or zCDP conversion used, None for the other methods.
        order: the RDP order used, if any.
        error: how far above the truth the queried value may be, where the method states it (the pld
            method's discretisation).
        lower: a lower bound on the truth where one is known (the truth lies in [lower, value]; equal to the
            value where it is exact, None where nothing bounds it below).
        queried: the value the method computed (``"epsilon"`` for ε(δ), ``"delta"`` for δ(ε)), an upper
            bound on the truth.
    """

    epsilon: float
    delta: float
    method: str
    conversion: str | None = None
    order: float | None = None
    error: float | None = None
    lower: float | None = None
    queried: str | None = None

    @property
    def value(self) -> float:
        """The queried value (ε for ε(δ), δ for δ(ε))."""
        return self.delta if self.queried == "delta" else self.epsilon

    @property
    def exact(self) -> bool:
        """Whether the queried value is the truth (its lower bound is itself)."""
        return self.lower is not None and self.lower >= self.value

    def to_dict(self) -> dict[str, Any]:
        """The guarantee as a plain dict.

        Returns:
            ε, δ, the method, conversion and order, and where known the error and the queried value's bounds
            (``epsilon_upper``, ``epsilon_lower``, ``exact``), JSON-ready.
        """
        out: dict[str, Any] = {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "method": self.method,
            "conversion": self.conversion,
            "order": self.order,
        }
        if self.error is not None:
            out["error"] = self.error
        if self.queried is not None:
            out[f"{self.queried}_upper"] = self.value
            out[f"{self.queried}_lower"] = self.lower
            out["exact"] = self.exact
        return out


@dataclass(frozen=True)
class Support:
    """Whether an accountant can interpret a ledger or event, and the reason when it cannot (truthy if it can)."""

    supported: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.supported


#: The Rényi orders an RDP accountant converts an event's curve over (unless given its own): dp-accounting's
#: default orders, a few nearer 1, larger powers of two, and α = ∞ (an event's pure ε, where it has one).
EVENT_ORDERS: tuple[float, ...] = tuple(
    sorted(
        {1.01, 1.02, 1.05, 1.25, 1.5, 1.75}
        | {1.0 + x / 10.0 for x in range(1, 100)}
        | {float(a) for a in range(12, 64)}
        | {128.0, 256.0, 512.0, 1024.0, 4096.0, math.inf}
    )
)


def _check_target(target: object) -> Ledger | Event:
    """A ledger, or an event of :mod:`dpkit.accountant.events`."""
    if not isinstance(target, (Ledger, Event)):
        raise ArgumentTypeError(
            f"ledger must be a dpkit.accountant.Ledger or a dpkit event (an Event), got {type(target).__name__}"
        )
    return target


def _beyond_doubles(target: Ledger | Event, err: BaseException) -> str:
    """Why accounting ``target`` left the doubles: the largest count it composes a release with (the product of
    nested counts) when that is beyond them (1.8e308), else the arithmetic error itself."""
    event = target.event if isinstance(target, Ledger) else target
    largest = max((count for _, count in walk(event)), default=1)
    if largest > sys.float_info.max:
        return (
            f"count = {shown_int(largest)} (a release composed that many times: the product of the nested counts) "
            "is beyond the doubles (at most 1.8e308) that this method computes with"
        )
    return f"a number beyond the doubles ({type(err).__name__}: {err})"


def _gaussian_ledger(target: Ledger | Event) -> Ledger | None:
    """The target as a ledger of Gaussian releases (the fast, exact paths), or None for any other event."""
    return target if isinstance(target, Ledger) and target.is_gaussian else None


def _closed_form(target: Ledger | Event, queried: str, at: float) -> float | None:
    """The exact ε(δ) or δ(ε) of an event that has a closed form (:mod:`dpkit.accountant.pld_events`), else None:
    the lower end of another method's upper bound."""
    event = target.event if isinstance(target, Ledger) else target
    try:
        if closed_form_refusal(event) is not None:
            return None
        return closed_form_epsilon(event, at) if queried == "epsilon" else closed_form_delta(event, at)
    except (ValueError, ArithmeticError):
        return None


class Accountant(ABC):
    """Interprets a ledger or an event as an (ε, δ) guarantee. Subclasses are frozen dataclasses."""

    method: str = ""

    @property
    def conversion(self) -> str | None:
        return None

    @property
    def label(self) -> str:
        return self.method if self.conversion is None else f"{self.method} ({self.conversion})"

    def supports(self, target: Ledger | Event) -> Support:
        """Whether this method can account for ``target`` (a ledger or an event), with the reason if not.

        Args:
            target: a :class:`~dpkit.accountant.ledger.Ledger` or an event of :mod:`dpkit.accountant.events`.

        Returns:
            A :class:`Support`, truthy when the method can, with the reason when it cannot.

        Raises:
            ArgumentTypeError: the target is neither a Ledger nor an Event.
        """
        target = _check_target(target)
        if _gaussian_ledger(target) is not None:
            return Support(True)
        event = target.event if isinstance(target, Ledger) else target
        try:
            reason = self._event_refusal(event)
        except (ArithmeticError, IndexError) as err:
            reason = f"a number beyond the doubles ({type(err).__name__}: {err})"
        return Support(reason is None, reason or "")

    def epsilon(self, ledger: Ledger | Event, delta: float) -> Guarantee:
        """The smallest ε this method certifies at ``delta`` (0 <= δ <= 1) for the ledger or event, rounded up,
        with the lower bound on the true ε where one is known (:class:`Guarantee`).

        Args:
            ledger: a :class:`~dpkit.accountant.ledger.Ledger` or an event of :mod:`dpkit.accountant.events`.
            delta: the δ, in [0, 1] (δ = 1 gives ε = 0, δ = 0 gives +inf for a Gaussian ledger).

        Returns:
            The :class:`Guarantee` (``queried="epsilon"``).

        Raises:
            ArgumentTypeError: the target is neither a Ledger nor an Event.
            ValueError: δ outside [0, 1], a target this method cannot account (the reason of :meth:`supports`), or
                a count beyond the doubles.
        """
        target = _check_target(ledger)
        delta = check_unit_interval("delta", delta)
        gaussian = _gaussian_ledger(target)
        if gaussian is None:
            g = self._arithmetic(lambda: self._event_epsilon(self._supported(target), delta), target)
            lower = g.lower if g.lower is not None else _closed_form(target, "epsilon", delta)
        elif delta == 1.0 or gaussian.mu == 0.0:  # every mechanism is (0, 1)-DP; σ = inf releases nothing
            g, lower = self._guarantee(0.0, delta), 0.0
        elif delta == 0.0:  # a Gaussian ledger (μ > 0) is not pure DP at any finite ε
            g, lower = self._guarantee(math.inf, delta), math.inf
        else:
            g, lower = self._epsilon(gaussian, delta), gdp_epsilon_unchecked(gaussian.mu, delta)  # μ-GDP: the truth
        return replace(g, lower=None if lower is None else min(lower, g.epsilon), queried="epsilon")

    def delta(self, ledger: Ledger | Event, epsilon: float) -> Guarantee:
        """The smallest δ this method certifies at ``epsilon`` (0 <= ε <= +inf) for the ledger or event, rounded up,
        with the lower bound on the true δ where one is known (:class:`Guarantee`).

        Args:
            ledger: a :class:`~dpkit.accountant.ledger.Ledger` or an event of :mod:`dpkit.accountant.events`.
            epsilon: the ε (>= 0; +inf gives δ = 0).

        Returns:
            The :class:`Guarantee` (``queried="delta"``).

        Raises:
            ArgumentTypeError: the target is neither a Ledger nor an Event.
            ValueError: ε negative or NaN, a target this method cannot account (the reason of :meth:`supports`),
                or a count beyond the doubles.
        """
        target = _check_target(ledger)
        epsilon = check_extended_nonnegative("epsilon", epsilon)
        gaussian = _gaussian_ledger(target)
        if gaussian is None:
            g = self._arithmetic(lambda: self._event_delta(self._supported(target), epsilon), target)
            lower = g.lower if g.lower is not None else _closed_form(target, "delta", epsilon)
        elif epsilon == math.inf or gaussian.mu == 0.0:  # every mechanism is (+inf, 0)-DP; σ = inf: nothing
            g, lower = self._guarantee(epsilon, 0.0), 0.0
        else:
            g, lower = self._delta(gaussian, epsilon), gdp_delta_unchecked(gaussian.mu, epsilon)
        return replace(g, lower=None if lower is None else min(lower, g.delta), queried="delta")

    def _arithmetic(self, run: Callable[[], Guarantee], target: Ledger | Event) -> Guarantee:
        """``run()``, an overflow or a division by an underflowed number becoming a ValueError naming the method
        (so one failing method is a refusal beside the others, and the command line prints one line) and, when it
        is the cause, the count beyond the doubles."""
        try:
            return run()
        except (ArithmeticError, IndexError) as err:
            raise ValueError(f"{self.label}: {_beyond_doubles(target, err)}") from None

    def _supported(self, target: Ledger | Event) -> Event:
        event = target.event if isinstance(target, Ledger) else target
        reason = self._event_refusal(event)
        if reason is not None:
            raise ValueError(f"{self.label}: {reason}")
        return event

    def _guarantee(self, epsilon: float, delta: float) -> Guarantee:
        """A trivially true guarantee under this accountant's labels (no order used)."""
        return Guarantee(epsilon, delta, self.method, self.conversion)

    @abstractmethod
    def _epsilon(self, ledger: Ledger, delta: float) -> Guarantee: ...

    @abstractmethod
    def _delta(self, ledger: Ledger, epsilon: float) -> Guarantee: ...

    # -- any event: each method says what it interprets --

    @abstractmethod
    def _event_refusal(self, event: Event) -> str | None:
        """None if the method interprets ``event``, else why not (one sentence)."""

    @abstractmethod
    def _event_epsilon(self, event: Event, delta: float) -> Guarantee: ...

    @abstractmethod
    def _event_delta(self, event: Event, epsilon: float) -> Guarantee: ...


@dataclass(frozen=True)
class ExactAccountant(Accountant):
    """Exact accounting: the composition is μ-GDP; its (ε, δ) profile is the analytic Gaussian's."""

    method = "exact"

    def _epsilon(self, ledger: Ledger, delta: float) -> Guarantee:
        return Guarantee(gdp_epsilon_unchecked(ledger.mu, delta), delta, self.method)

    def _delta(self, ledger: Ledger, epsilon: float) -> Guarantee:
        return Guarantee(epsilon, gdp_delta_unchecked(ledger.mu, epsilon), self.method)

    def _event_refusal(self, event: Event) -> str | None:
        return closed_form_refusal(event)

    def _event_epsilon(self, event: Event, delta: float) -> Guarantee:
        return Guarantee(closed_form_epsilon(event, delta), delta, self.method)

    def _event_delta(self, event: Event, epsilon: float) -> Guarantee:
        return Guarantee(epsilon, closed_form_delta(event, epsilon), self.method)


@dataclass(frozen=True, kw_only=True)
class PldAccountant(Accountant):
    """dp-accounting's PLD accountant on the ledger's exported DpEvent.

    ``value_discretization_interval=None`` (default) picks dp-accounting's 1e-4, coarsened for
    large μ by :func:`dpkit.accountant.pld.auto_discretization` so that memory stays bounded.

    dp-accounting truncates about 1e-15 of tail mass, so it cannot resolve a smaller δ: ε(δ)
    is refused there, and δ(ε) stays at that floor (sound, but looser than rdp/zcdp).

    Sound before tight: for a Gaussian ledger the exact profile is the truth, so a PLD
    figure below it is replaced by the exact one. This happens: at σ = 0.1 (μ = 10),
    δ = 1e-5, dp-accounting 0.6 returns an ε at which the true δ is 1.00000000026e-5.
    Below ``PLD_MIN_MU``, where dp-accounting overflows, the exact figure is the answer.
    """

    value_discretization_interval: float | None = None
    method = "pld"

    def __post_init__(self) -> None:
        if self.value_discretization_interval is not None:
            check_positive("value_discretization_interval", self.value_discretization_interval)

    def _accountant(self, ledger: Ledger) -> Any:  # a dp-accounting PLDAccountant (dp-accounting has no type stubs)
        for r in ledger.releases:
            if r.count > sys.float_info.max:  # dp-accounting composes a count as a double
                raise ValueError(
                    f"pld: {r.name}.count = {shown_int(r.count)} is beyond what dp-accounting's PLD composes (a "
                    f"count below 1.8e308); use method 'exact'"
                )
        if ledger.mu > PLD_MAX_MU:
            raise ValueError(
                f"pld: mu = {ledger.mu:.6g} is beyond what dp-accounting's PLD represents (mu <= {PLD_MAX_MU:g}); "
                f"use method 'exact'"
            )
        interval = self.value_discretization_interval or auto_discretization(ledger.mu)
        return pld_accountant_for(ledger.to_dp_event(), value_discretization_interval=interval)

    def _epsilon(self, ledger: Ledger, delta: float) -> Guarantee:
        if ledger.mu < PLD_MIN_MU:  # dp-accounting cannot represent the noise; the exact profile is the truth
            return Guarantee(gdp_epsilon_unchecked(ledger.mu, delta), delta, self.method)
        eps = float(self._accountant(ledger).get_epsilon(delta))
        if not math.isfinite(eps):
            raise ValueError(
                f"pld: dp-accounting's PLD gives no finite epsilon at delta = {delta:g} (it truncates "
                f"about 1e-15 of tail mass, so it cannot resolve a smaller delta); use method 'exact'"
            )
        return Guarantee(max(round_up(eps), gdp_epsilon_unchecked(ledger.mu, delta)), delta, self.method)

    def _delta(self, ledger: Ledger, epsilon: float) -> Guarantee:
        if ledger.mu < PLD_MIN_MU:
            return Guarantee(epsilon, gdp_delta_unchecked(ledger.mu, epsilon), self.method)
        d = float(self._accountant(ledger).get_delta(epsilon))
        return Guarantee(epsilon, min(1.0, max(round_up(d), gdp_delta_unchecked(ledger.mu, epsilon))), self.method)

    def _event_refusal(self, event: Event) -> str | None:
        ok, reason = pld_supports(event)
        return None if ok else reason

    def _event_epsilon(self, event: Event, delta: float) -> Guarantee:
        g = pld_epsilon(event, delta, value_discretization_interval=self.value_discretization_interval)
        return Guarantee(g.epsilon, delta, self.method, error=g.error, lower=g.lower)

    def _event_delta(self, event: Event, epsilon: float) -> Guarantee:
        g = pld_delta(event, epsilon, value_discretization_interval=self.value_discretization_interval)
        return Guarantee(epsilon, g.delta, self.method, error=g.error, lower=g.lower)


@dataclass(frozen=True, kw_only=True)
class RdpAccountant(Accountant):
    """RDP accounting of the composed curve α·ρ.

    With ``orders=None`` the conversion is minimised over continuous α (the Gaussian curve is
    known at every order); with explicit ``orders`` only those are used, as dp-accounting's
    RDP accountant does.
    """

    conversion_name: RdpConversionName = DEFAULT_RDP_CONVERSION
    orders: tuple[float, ...] | None = None
    method = "rdp"

    def __post_init__(self) -> None:
        check_choice("conversion", self.conversion_name, RDP_CONVERSIONS)
        if self.orders is not None:
            orders = check_rdp_orders(self.orders)
            object.__setattr__(self, "orders", tuple(float(o) for o in orders))

    @property
    def conversion(self) -> str:
        return self.conversion_name

    def _epsilon(self, ledger: Ledger, delta: float) -> Guarantee:
        if self.orders is None:
            res = linear_rdp_epsilon_unchecked(ledger.rho, delta, self.conversion_name)
        else:
            o = np.asarray(self.orders)
            res = rdp_epsilon(o, o * ledger.rho, delta, conversion=self.conversion_name)
        return Guarantee(res.epsilon, delta, self.method, self.conversion_name, res.order)

    def _delta(self, ledger: Ledger, epsilon: float) -> Guarantee:
        if self.orders is None:
            res = linear_rdp_delta_unchecked(ledger.rho, epsilon, self.conversion_name)
        else:
            o = np.asarray(self.orders)
            res = rdp_delta(o, o * ledger.rho, epsilon, conversion=self.conversion_name)
        return Guarantee(epsilon, res.delta, self.method, self.conversion_name, res.order)

    def _event_refusal(self, event: Event) -> str | None:
        ok, reason = rdp_supports(event)
        return None if ok else reason

    def _event_curve(self, event: Event) -> tuple[np.ndarray, np.ndarray]:
        orders = np.asarray(EVENT_ORDERS if self.orders is None else self.orders, dtype=float)
        return orders, rdp_curve(event, orders)

    def _event_epsilon(self, event: Event, delta: float) -> Guarantee:
        orders, values = self._event_curve(event)
        res = rdp_epsilon(orders, values, delta, conversion=self.conversion_name)
        return Guarantee(res.epsilon, delta, self.method, self.conversion_name, res.order)

    def _event_delta(self, event: Event, epsilon: float) -> Guarantee:
        orders, values = self._event_curve(event)
        res = rdp_delta(orders, values, epsilon, conversion=self.conversion_name)
        return Guarantee(epsilon, res.delta, self.method, self.conversion_name, res.order)


@dataclass(frozen=True, kw_only=True)
class ZcdpAccountant(Accountant):
    """zCDP accounting: ρ = Σ countᵢ Δᵢ²/(2σᵢ²), converted by ``conversion_name``."""

    conversion_name: ZcdpConversionName = DEFAULT_ZCDP_CONVERSION
    method = "zcdp"

    def __post_init__(self) -> None:
        check_choice("conversion", self.conversion_name, ZCDP_CONVERSIONS)

    @property
    def conversion(self) -> str:
        return self.conversion_name

    def _epsilon(self, ledger: Ledger, delta: float) -> Guarantee:
        return Guarantee(
            zcdp_epsilon_unchecked(ledger.rho, delta, self.conversion_name), delta, self.method, self.conversion_name
        )

    def _delta(self, ledger: Ledger, epsilon: float) -> Guarantee:
        return Guarantee(
            epsilon, zcdp_delta_unchecked(ledger.rho, epsilon, self.conversion_name), self.method, self.conversion_name
        )

    def _event_refusal(self, event: Event) -> str | None:
        if self.conversion_name == "gaussian-exact" and not gaussian_only(event):
            return (
                "the gaussian-exact conversion reads rho as a Gaussian's mu = sqrt(2 rho), which only Gaussian "
                "releases are: use bun-steinke or rdp-optimal"
            )
        return zcdp_refusal(event)

    def _event_epsilon(self, event: Event, delta: float) -> Guarantee:
        rho = zcdp_event_rho(event)
        if rho == 0.0 or delta == 1.0:
            return self._guarantee(0.0, delta)
        if delta == 0.0 or math.isinf(rho):  # zCDP with ρ > 0 bounds no pure ε
            return self._guarantee(math.inf, delta)
        return Guarantee(
            zcdp_epsilon_unchecked(rho, delta, self.conversion_name), delta, self.method, self.conversion_name
        )

    def _event_delta(self, event: Event, epsilon: float) -> Guarantee:
        rho = zcdp_event_rho(event)
        if rho == 0.0 or epsilon == math.inf:
            return self._guarantee(epsilon, 0.0)
        if math.isinf(rho):
            return self._guarantee(epsilon, 1.0)
        return Guarantee(
            epsilon, zcdp_delta_unchecked(rho, epsilon, self.conversion_name), self.method, self.conversion_name
        )


@dataclass(frozen=True)
class ClassicAccountant(Accountant):
    """Dwork–Roth classic bound per release, basic composition; refuses ε >= 1 per release."""

    method = "classic"

    @staticmethod
    def _ratios(ledger: Ledger) -> list[tuple[str, float, int]]:
        return [(r.name, r.sensitivity / r.sigma, r.count) for r in ledger.releases if isinstance(r, GaussianRelease)]

    def _epsilon(self, ledger: Ledger, delta: float) -> Guarantee:
        return Guarantee(classic_composed_epsilon(self._ratios(ledger), delta), delta, self.method)

    def _delta(self, ledger: Ledger, epsilon: float) -> Guarantee:
        return Guarantee(epsilon, classic_composed_delta(self._ratios(ledger), epsilon), self.method)

    def _event_refusal(self, event: Event) -> str | None:
        return classic_refusal(event)

    def _event_epsilon(self, event: Event, delta: float) -> Guarantee:
        if delta == 1.0:
            return self._guarantee(0.0, delta)
        if delta == 0.0:
            parts = classic_parts(event)
            pure = parts.epsilon if not parts.gaussians and parts.delta == 0.0 else math.inf
            return self._guarantee(pure, delta)
        return Guarantee(classic_event_epsilon(event, delta), delta, self.method)

    def _event_delta(self, event: Event, epsilon: float) -> Guarantee:
        if epsilon == math.inf:
            return self._guarantee(epsilon, 0.0)
        return Guarantee(epsilon, classic_event_delta(event, epsilon), self.method)


def make_accountant(
    method: AccountingMethod | str = "exact", *, conversion: str | None = None, **options: Any
) -> Accountant:
    """The accountant for ``method`` (and ``conversion`` for rdp/zcdp), validated.

    ``options``: ``value_discretization_interval`` for pld, ``orders`` for rdp.

    Args:
        method: one of :data:`METHODS` ("exact", "pld", "rdp", "zcdp", "classic"); "exact" by default.
        conversion: the conversion of rdp (:data:`RDP_CONVERSIONS`) or zcdp (:data:`ZCDP_CONVERSIONS`); None takes
            the method's default.
        **options: ``value_discretization_interval`` for pld, ``orders`` for rdp.

    Returns:
        The :class:`Accountant`.

    Raises:
        ArgumentTypeError: ``method`` or ``conversion`` not a string.
        ValueError: an unknown method or conversion, a conversion for a method without one, or an option the
            method does not take.
    """
    method = check_member("method", method, AccountingMethod)
    if conversion is not None and method not in CONVERSIONS:
        raise ValueError(f"method '{method}' takes no conversion, got conversion={conversion!r}")
    label = f"conversion for method '{method}'"
    allowed = {"pld": {"value_discretization_interval"}, "rdp": {"orders"}}.get(method, set())
    unknown = set(options) - allowed
    if unknown:
        raise ValueError(f"method '{method}' takes no option(s) {', '.join(sorted(unknown))}")
    if method == AccountingMethod.EXACT:
        return ExactAccountant()
    if method == AccountingMethod.PLD:
        return PldAccountant(**options)
    if method == AccountingMethod.RDP:
        rdp = check_choice(label, DEFAULT_RDP_CONVERSION if conversion is None else conversion, RDP_CONVERSIONS)
        return RdpAccountant(conversion_name=rdp, **options)
    if method == AccountingMethod.ZCDP:
        zcdp = check_choice(label, DEFAULT_ZCDP_CONVERSION if conversion is None else conversion, ZCDP_CONVERSIONS)
        return ZcdpAccountant(conversion_name=zcdp)
    return ClassicAccountant()


@dataclass(frozen=True)
class MethodComparison:
    """ε of every accounting variant for one ledger at one δ.

    Attributes:
        delta: the δ the ε were read at.
        epsilons: ε of each variant (key of :data:`VARIANTS`), None where it declined.
        refusals: why a variant declined, by key.
        orders: the RDP order each RDP variant used, by key.
        lowers: the lower bound on the true ε each variant states (None: none); :attr:`lower` is the best.
    """

    delta: float
    epsilons: dict[str, float | None] = field(default_factory=dict)
    refusals: dict[str, str] = field(default_factory=dict)
    orders: dict[str, float] = field(default_factory=dict)
    lowers: dict[str, float | None] = field(default_factory=dict)

    @property
    def lower(self) -> float | None:
        """The largest lower bound on the true ε any method gives (each is valid, so the largest is)."""
        known = [v for v in self.lowers.values() if v is not None]
        return max(known) if known else None


@dataclass(frozen=True)
class DeltaComparison:
    """δ of every accounting variant for one ledger at one ε.

    Attributes:
        epsilon: the ε the δ were read at.
        deltas: δ of each variant (key of :data:`VARIANTS`), None where it declined.
        refusals: why a variant declined, by key.
    """

    epsilon: float
    deltas: dict[str, float | None] = field(default_factory=dict)
    refusals: dict[str, str] = field(default_factory=dict)


def _each_variant(run: Callable[[Accountant], Guarantee]) -> tuple[dict[str, Guarantee | None], dict[str, str]]:
    """``run`` under every variant of :data:`VARIANTS`; a ValueError becomes a refusal."""
    results: dict[str, Guarantee | None] = {}
    refusals: dict[str, str] = {}
    for key, method, conversion in VARIANTS:
        try:
            results[key] = run(make_accountant(method, conversion=conversion))
        except (ValueError, ArithmeticError) as err:
            results[key], refusals[key] = None, str(err)
    return results, refusals


def compare_deltas(ledger: Ledger | Event, epsilon: float) -> DeltaComparison:
    """δ at ``epsilon`` under every variant of :data:`VARIANTS`, side by side (a ledger or an event).

    Args:
        ledger: a :class:`~dpkit.accountant.ledger.Ledger` or an event of :mod:`dpkit.accountant.events`.
        epsilon: the ε (>= 0, +inf allowed).

    Returns:
        The :class:`DeltaComparison`: δ of each variant, or why it declined.

    Raises:
        ArgumentTypeError: the target is neither a Ledger nor an Event.
        ValueError: ε negative or NaN.
    """
    target = _check_target(ledger)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    results, refusals = _each_variant(lambda acc: acc.delta(target, epsilon))
    return DeltaComparison(epsilon, {k: None if g is None else g.delta for k, g in results.items()}, refusals)


def compare_methods(ledger: Ledger | Event, delta: float) -> MethodComparison:
    """ε at ``delta`` under every variant of :data:`VARIANTS`, side by side (a ledger or an event).

    Args:
        ledger: a :class:`~dpkit.accountant.ledger.Ledger` or an event of :mod:`dpkit.accountant.events`.
        delta: the δ, in [0, 1].

    Returns:
        The :class:`MethodComparison`: ε of each variant (with its order and lower bound), or why it declined.

    Raises:
        ArgumentTypeError: the target is neither a Ledger nor an Event.
        ValueError: δ outside [0, 1].
    """
    target = _check_target(ledger)
    delta = check_unit_interval("delta", delta)
    results, refusals = _each_variant(lambda acc: acc.epsilon(target, delta))
    return MethodComparison(
        delta,
        {k: None if g is None else g.epsilon for k, g in results.items()},
        refusals,
        {k: g.order for k, g in results.items() if g is not None and g.order is not None},
        {k: None if g is None else g.lower for k, g in results.items()},
    )
