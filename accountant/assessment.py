"""Assessing a ledger or an event against a claim: what the file's noise certifies, and what a claim needs.

:func:`assess_ledger` reads a :class:`~dpkit.accountant.ledger.Ledger` (a ledger file's releases) or an
:class:`~dpkit.accountant.events.Event` (an event file, e.g. a DP-SGD run's DpEvent) under every accounting
variant (:func:`~dpkit.accountant.accountants.compare_methods`) and gives:

the certified ε at δ and at the informative δ, μ of a Gaussian ledger, and with a claimed ε the noise scale
the claim needs and the flags. What each means and how the ends are answered: docs/how-to/ledger-epsilon.md
(What an assessment holds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .accountants import VARIANTS, AccountingMethod, MethodComparison, compare_methods
from .calibration import calibrate_ledger_scale
from .declarations import Flag, uninformative_delta_flag, users_informative_delta
from .ledger import EventRelease, Ledger
from .validation import ArgumentTypeError, check_count, check_extended_nonnegative, check_unit_interval

if TYPE_CHECKING:
    from .events import Event

__all__ = ["LedgerAssessment", "assess_ledger", "certified", "users_informative_delta"]

#: Each variant key of :data:`~dpkit.accountant.accountants.VARIANTS` → (method, conversion).
_VARIANT_METHODS: dict[str, tuple[str, str | None]] = {key: (m, c) for key, m, c in VARIANTS}
#: The name of the one release an event is wrapped in for calibration.
_EVENT_RELEASE = "event"


def certified(comparison: MethodComparison) -> tuple[float | None, str | None]:
    """The smallest ε of a comparison over the methods that answered, and the variant key that gave it
    (ties go to the tighter variant, in :data:`VARIANTS` order: exact before pld); ``(None, None)`` when no
    method answered.

    Args:
        comparison: the side-by-side ε of every variant (:func:`~dpkit.accountant.accountants.compare_methods`).

    Returns:
        (ε, variant key), or ``(None, None)``.
    """
    best: tuple[float | None, str | None] = (None, None)
    for key, _, _ in VARIANTS:
        eps = comparison.epsilons.get(key)
        if eps is not None and (best[0] is None or eps < best[0]):
            best = (eps, key)
    return best


@dataclass(frozen=True)
class LedgerAssessment:
    """What a ledger or event certifies at δ and at the informative δ, and what a claimed ε needs.

    Attributes:
        delta: the δ assessed at.
        users: the number of users K (None: unknown).
        relation: the neighbouring relation of the target.
        gaussian: whether the target is a ledger of Gaussian releases only.
        mu: μ of a Gaussian ledger (None for any other target).
        at_delta: the side-by-side comparison of every variant at ``delta``.
        certified_epsilon: the smallest ε over the variants that answered (None: none did).
        certified_method: the variant key (``exact``, ``pld``, ``rdp``, …) of ``certified_epsilon``.
        delta_informative: the informative δ, min(10⁻⁵, 1/K) (10⁻⁵ without K).
        at_informative_delta: the comparison at ``delta_informative``.
        certified_epsilon_at_informative_delta: the certified ε there.
        certified_method_at_informative_delta: the variant that certified it.
        claim_epsilon: the claimed ε (None: no claim).
        noise_scale: c, the factor on every noise scale of the file that the claim needs (None: not computed,
            see ``scale_note``).
        noise_ratio: 1/c, how many times the noise the claim needs the file has (below 1: too little).
        scale_note: why ``noise_scale`` is None, when it is.
        flags: the :class:`~dpkit.accountant.declarations.Flag` raised (claim-not-met, delta-not-informative,
            no-claim).
    """

    delta: float
    users: int | None
    relation: str
    gaussian: bool
    mu: float | None
    at_delta: MethodComparison
    certified_epsilon: float | None
    certified_method: str | None
    delta_informative: float
    at_informative_delta: MethodComparison
    certified_epsilon_at_informative_delta: float | None
    certified_method_at_informative_delta: str | None
    claim_epsilon: float | None = None
    noise_scale: float | None = None
    noise_ratio: float | None = None
    scale_note: str = ""
    flags: tuple[Flag, ...] = field(default_factory=tuple)

    @property
    def certified_epsilon_lower(self) -> float | None:
        """The largest lower bound on the true ε at δ that a method states (the truth lies in [this,
        :attr:`certified_epsilon`]); None where no method bounds it below."""
        lower = self.at_delta.lower
        if lower is None or self.certified_epsilon is None:
            return lower
        return min(lower, self.certified_epsilon)

    @property
    def definitive(self) -> bool:
        """Whether the certified ε at δ is exact (no accounting can give less), not only an upper bound."""
        if self.certified_method == AccountingMethod.EXACT:
            return True
        lower = self.certified_epsilon_lower
        return lower is not None and self.certified_epsilon is not None and lower >= self.certified_epsilon

    @property
    def claim_met(self) -> bool | None:
        """Whether the certified ε at δ is at most the claim (None: no claim). False means *not certified*:
        unless :attr:`definitive`, the true ε may still meet the claim."""
        if self.claim_epsilon is None:
            return None
        return self.certified_epsilon is not None and self.certified_epsilon <= self.claim_epsilon

    @property
    def claim_status(self) -> str:
        """``no claim``; ``met`` (the certified ε is within the claim); ``not met`` (the exact accountant's ε exceeds
        it: definitive); ``not certified`` (only methods that may be loose answered, and their ε exceeds it)."""
        if self.claim_met is None:
            return "no claim"
        if self.claim_met:
            return "met"
        lower = self.certified_epsilon_lower
        shown = self.definitive or (lower is not None and self.claim_epsilon is not None and lower > self.claim_epsilon)
        return "not met" if shown else "not certified"

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-ready data (non-finite numbers stay floats: the report's encoder writes them as null).

        Returns:
            δ, K, the relation, μ, the claim's status and noise scale, and the flags, by name.
        """
        return {
            "delta": self.delta,
            "users": self.users,
            "relation": self.relation,
            "gaussian": self.gaussian,
            "mu": self.mu,
            "epsilons": dict(self.at_delta.epsilons),
            "refusals": dict(self.at_delta.refusals),
            "orders": dict(self.at_delta.orders),
            "certified_epsilon": self.certified_epsilon,
            "certified_method": self.certified_method,
            "certified_epsilon_lower": self.certified_epsilon_lower,
            "definitive": self.definitive,
            "delta_informative": self.delta_informative,
            "epsilons_at_informative_delta": dict(self.at_informative_delta.epsilons),
            "refusals_at_informative_delta": dict(self.at_informative_delta.refusals),
            "certified_epsilon_at_informative_delta": self.certified_epsilon_at_informative_delta,
            "certified_method_at_informative_delta": self.certified_method_at_informative_delta,
            "claim_epsilon": self.claim_epsilon,
            "claim_met": self.claim_met,
            "claim_status": self.claim_status,
            "noise_scale": self.noise_scale,
            "noise_ratio": self.noise_ratio,
            "scale_note": self.scale_note,
            "flags": [f.to_dict() for f in self.flags],
        }


def _check_target(target: object) -> Ledger | Event:
    from .events import Event

    if not isinstance(target, (Ledger, Event)):
        raise ArgumentTypeError(
            f"target must be a dpkit.accountant.Ledger or a dpkit event (an Event), got {type(target).__name__}"
        )
    return target


def _as_ledger(target: Ledger | Event) -> Ledger:
    """A ledger as it is; an event as a ledger of one release (so that it can be rescaled and calibrated)."""
    return target if isinstance(target, Ledger) else Ledger((EventRelease(_EVENT_RELEASE, target),))


def _claim_scale(
    target: Ledger | Event, epsilon: float, delta: float, method: str | None
) -> tuple[float | None, float | None, str]:
    """(c, 1/c, note): the noise scale factor the claim (ε, δ) needs under ``method`` (a variant key)."""
    if epsilon == math.inf or delta == 1.0:
        return 0.0, math.inf, "the claim holds for any noise (epsilon = inf or delta = 1): no noise is needed"
    if method is None:
        return None, None, "no accounting method interprets this file, so no noise scale can be computed"
    if epsilon == 0.0 or delta == 0.0:
        return None, None, "a noise scale is computed for epsilon > 0 and 0 < delta < 1 only"
    name, conversion = _VARIANT_METHODS[method]
    try:
        scale = calibrate_ledger_scale(_as_ledger(target), epsilon, delta, method=name, conversion=conversion)
    except (ValueError, ArithmeticError) as err:
        return None, None, f"{method}: {err}"
    return scale, (math.inf if scale == 0.0 else 1.0 / scale), ""


def _claim_flag(
    assessment_delta: float, claim: float, eps: float | None, method: str | None, lower: float | None = None
) -> Flag | None:
    if eps is not None and eps <= claim:
        return None
    if eps is None or method is None:
        message = (
            f"no accounting method interprets this file at delta = {assessment_delta:g}, "
            f"so the claimed epsilon = {claim:g} is not certified"
        )
    elif method == AccountingMethod.EXACT:
        message = (
            f"the exact epsilon at delta = {assessment_delta:g} is {eps:.6g} > the claimed {claim:g}: "
            "the file's noise does not meet the claim (exact: no accounting gives less)"
        )
    elif lower is not None and lower > claim:
        message = (
            f"the true epsilon at delta = {assessment_delta:g} lies in [{lower:.6g}, {eps:.6g}] ({method}), above "
            f"the claimed {claim:g}: the file's noise does not meet the claim"
        )
    else:
        message = (
            f"the smallest epsilon any method certifies at delta = {assessment_delta:g} is {eps:.6g} ({method}) "
            f"> the claimed {claim:g}; every method's epsilon is an upper bound, so the true epsilon may be "
            "smaller: the claim is not certified, which does not show that it fails"
        )
    return Flag("claim-not-met", message, severity="error")


def _flags(
    delta: float,
    claim: float | None,
    users: int | None,
    eps: float | None,
    method: str | None,
    lower: float | None = None,
) -> list[Flag]:
    flags: list[Flag] = []
    if claim is None:
        flags.append(Flag("no-claim", "no epsilon is claimed: the report shows what the file certifies", "info"))
    else:
        flag = _claim_flag(delta, claim, eps, method, lower)
        if flag is not None:
            flags.append(flag)
    uninformative = uninformative_delta_flag(delta, users)
    if uninformative is not None:
        flags.append(uninformative)
    return flags


def assess_ledger(
    target: Ledger | Event,
    *,
    delta: float,
    epsilon: float | None = None,
    users: int | None = None,
) -> LedgerAssessment:
    """Assess a ledger or an event at ``delta`` (0 <= δ <= 1), against a claimed ``epsilon`` (0 <= ε <= +inf, or
    None: no claim), for ``users`` = K users (K >= 1, or None: unknown).

    Args:
        target: a :class:`~dpkit.accountant.ledger.Ledger` or an :class:`~dpkit.accountant.events.Event`.
        delta: the δ to assess at, in [0, 1].
        epsilon: the claimed ε (>= 0, +inf allowed); None: no claim.
        users: the number of users K (an integer >= 1); None: unknown.

    Returns:
        The :class:`LedgerAssessment`.

    Raises:
        ArgumentTypeError: ``target`` neither a Ledger nor an Event, or a number of the wrong type.
        ValueError: δ outside [0, 1], a negative ε, or K below 1.

    Examples:
        >>> from dpkit.accountant import Ledger
        >>> a = assess_ledger(Ledger.homogeneous(1.0, 3.75), delta=1e-5, epsilon=1.0)
        >>> a.certified_method, round(a.certified_epsilon, 4), a.claim_met, round(a.noise_ratio, 4)
        ('exact', 0.9943, True, 1.0052)
    """
    target = _check_target(target)
    delta = check_unit_interval("delta", delta)
    claim = None if epsilon is None else check_extended_nonnegative("epsilon", epsilon)
    if users is not None:
        users = check_count("users", users)
    delta_inf = users_informative_delta(users)

    at_delta = compare_methods(target, delta)
    at_inf = at_delta if delta_inf == delta else compare_methods(target, delta_inf)
    eps, method = certified(at_delta)
    eps_inf, method_inf = certified(at_inf)
    gaussian = isinstance(target, Ledger) and target.is_gaussian
    scale: tuple[float | None, float | None, str] = (None, None, "")
    if claim is not None:
        scale = _claim_scale(target, claim, delta, method)
    return LedgerAssessment(
        delta=delta,
        users=users,
        relation=target.relation,
        gaussian=gaussian,
        mu=target.mu if isinstance(target, Ledger) and gaussian else None,
        at_delta=at_delta,
        certified_epsilon=eps,
        certified_method=method,
        delta_informative=delta_inf,
        at_informative_delta=at_inf,
        certified_epsilon_at_informative_delta=eps_inf,
        certified_method_at_informative_delta=method_inf,
        claim_epsilon=claim,
        noise_scale=scale[0],
        noise_ratio=scale[1],
        scale_note=scale[2],
        flags=tuple(_flags(delta, claim, users, eps, method, at_delta.lower)),
    )
