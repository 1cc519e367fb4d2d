"""ε(δ) and δ(ε) of any :mod:`~dpkit.accountant.events` event through dp-accounting's privacy loss distributions.

An event is first *lowered* to a plan: the plain Gaussian releases (single, composed, tree
aggregation, groups of them) merged into one μ-GDP Gaussian — composition of Gaussians is exact
in μ, so they are discretised once — and the other mechanisms with their multiplicities:
Laplace, k-ary randomized response, (ε, δ)-DP releases, Poisson-subsampled Gaussian and Laplace.
Each becomes dp-accounting's pessimistic PLD (connect-the-dots where dp-accounting offers it),
with the event's neighbouring relation passed as dp-accounting's ``NeighboringRelation`` where the
PLD depends on it (subsampled Gaussian, randomized response), self-composed, and all composed.

Where the exact value is known a PLD figure below it is replaced by it, and every answer carries ``error``, the
reported value minus a rigorous lower bound on the truth (first order in the interval, or second order through
:mod:`dpkit.accountant.pld_bounds`). What is not expressible, group privacy, soundness and the error bounds:
docs/FORMULAS.md §11 (PLDs of events).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .event_plans import (
    EventPlan,
    PlanBuilder,
    PlanLeaf,
    UnsupportedEvent,
    check_event,
    lower_event,
    plan_event,
)
from .events import (
    Event,
)
from .numerics import round_up
from .pld import PLD_MAX_MU, PLD_MIN_MU, auto_discretization
from .sensitivity import Relation
from .validation import check_extended_nonnegative, check_positive, check_unit_interval

if TYPE_CHECKING:  # dp-accounting is imported where it is used: it costs 0.6 s at startup
    from dp_accounting.pld import privacy_loss_distribution

    from .pld_bounds import Discretisation

__all__ = [
    "PldGuarantee",
    "pld_supports",
    "pld_epsilon",
    "pld_delta",
    "pld_for_event",
    "closed_form_refusal",
    "closed_form_epsilon",
    "closed_form_delta",
    "event_interval",
]


def pld_supports(event: Event) -> tuple[bool, str]:
    """Whether the pld method can account for ``event``, and if not, why (``(True, "")`` when it can).

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        (True, "") or (False, the reason).

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or a number of the wrong type.
    """
    event = check_event(event)
    out = PlanBuilder(event.relation)
    try:
        lower_event(event, 1, 1, out)
    except UnsupportedEvent as err:
        return False, str(err)
    return True, ""


# --------------------------------------------------------------------------------------------
# building the PLD


def _relation(name: Relation) -> Any:
    import dp_accounting

    rel = dp_accounting.NeighboringRelation
    return rel.ADD_OR_REMOVE_ONE if name == Relation.ADD_REMOVE else rel.REPLACE_ONE


def _leaf_pld(leaf: PlanLeaf, relation: Relation, interval: float) -> privacy_loss_distribution.PrivacyLossDistribution:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    kind, a, b = leaf
    if kind == "laplace":
        return pld_lib.from_laplace_mechanism(a, sensitivity=b, value_discretization_interval=interval)
    if kind == "rr":
        return pld_lib.from_randomized_response(
            a, int(b), value_discretization_interval=interval, neighboring_relation=_relation(Relation.REPLACE_ONE)
        )
    if kind == "approx":
        return pld_lib.from_privacy_parameters(
            common.DifferentialPrivacyParameters(a, b), value_discretization_interval=interval
        )
    if kind == "poisson_gaussian":
        if relation == Relation.ADD_REMOVE:  # dp-accounting's PLD, built with array operations (and cached)
            from .pld_fast import subsampled_gaussian_pld

            return subsampled_gaussian_pld(b, a, interval)
        return pld_lib.from_gaussian_mechanism(
            b, sampling_prob=a, value_discretization_interval=interval, neighboring_relation=_relation(relation)
        )
    return pld_lib.from_laplace_mechanism(b, sampling_prob=a, value_discretization_interval=interval)


@functools.lru_cache(maxsize=16)
def _composed_pld(plan: EventPlan, interval: float) -> privacy_loss_distribution.PrivacyLossDistribution:
    """The composed PLD; a plan dp-accounting cannot discretise (its arithmetic fails: a release of the records
    themselves with probability δ, noise beyond the doubles) is refused with the reason, never a traceback."""
    try:
        return _composed_pld_unchecked(plan, interval)
    except (IndexError, ArithmeticError) as err:
        raise ValueError(
            f"pld: dp-accounting cannot discretise this event ({type(err).__name__}: {err}); try the rdp method"
        ) from None


def _composed_pld_unchecked(plan: EventPlan, interval: float) -> privacy_loss_distribution.PrivacyLossDistribution:
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    parts = []
    if plan.gaussian_mu2 > 0.0:
        parts.append(
            pld_lib.from_gaussian_mechanism(1.0 / math.sqrt(plan.gaussian_mu2), value_discretization_interval=interval)
        )
    for leaf, count in plan.leaves:
        # DP-SGD: composed and cached per pair
        if leaf[0] == "poisson_gaussian" and plan.relation == Relation.ADD_REMOVE:
            from .pld_fast import subsampled_gaussian_pld

            parts.append(subsampled_gaussian_pld(leaf[2], leaf[1], interval, count))
            continue
        one = _leaf_pld(leaf, plan.relation, interval)
        parts.append(one.self_compose(count) if count > 1 else one)
    if not parts:
        return pld_lib.identity(value_discretization_interval=interval)
    out = parts[0]
    for p in parts[1:]:
        out = out.compose(p)
    return out


def _interval(plan: EventPlan, given: float | None) -> float | None:
    """The discretisation interval to use, or None when dp-accounting's PLD cannot represent the plan."""
    mu = plan.effective_mu()
    if 0.0 < plan.gaussian_mu2 and math.sqrt(plan.gaussian_mu2) < PLD_MIN_MU:
        return None  # dp-accounting overflows squaring such a noise multiplier
    if given is not None:
        return given
    if mu > PLD_MAX_MU:
        return None
    sampled = any(kind.startswith("poisson") for (kind, _, _), _ in plan.leaves)
    if sampled and mu > PLD_MAX_SAMPLED_MU:
        raise ValueError(
            f"pld: the composed privacy loss is very wide (effective mu ~ {mu:.3g} > {PLD_MAX_SAMPLED_MU:g}, "
            "epsilon in the thousands) and a subsampled release's PLD that wide takes minutes: use the rdp method"
        )
    return auto_discretization(mu)


def event_interval(event: Event) -> float:
    """The discretisation interval :func:`pld_epsilon` uses for ``event`` by default (ValueError where it has
    none: the PLD cannot represent the event).

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        The interval.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or a number of the wrong type.
        ValueError: an event the PLD cannot represent.
    """
    plan = plan_event(check_event(event))
    interval = _interval(plan, None)
    if interval is None:
        raise ValueError(f"pld: effective mu = {plan.effective_mu():.6g} is beyond what dp-accounting's PLD represents")
    return interval


#: The widest composition of subsampled releases the pld method discretises (dp-accounting's grid of a Poisson
#: release, self-composed, grows with the count and the width: at effective mu ~ 400 it takes minutes).
PLD_MAX_SAMPLED_MU = 60.0


def pld_for_event(
    event: Event, *, value_discretization_interval: float | None = None
) -> privacy_loss_distribution.PrivacyLossDistribution:
    """dp-accounting's pessimistic ``PrivacyLossDistribution`` of ``event`` (interval automatic unless given).

    Args:
        event: an event of :mod:`dpkit.accountant.events`.
        value_discretization_interval: the PLD grid's interval (> 0; None: chosen from the event).

    Returns:
        The composed ``PrivacyLossDistribution``.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or a number of the wrong type.
        ValueError: a bad interval, or an event the PLD cannot represent (or that is not private).
    """
    event = check_event(event)
    if value_discretization_interval is not None:
        check_positive("value_discretization_interval", value_discretization_interval)
    plan = plan_event(event)
    if plan.non_private:
        raise ValueError("pld: the event is not private (epsilon = inf at every delta < 1)")
    interval = _interval(plan, value_discretization_interval)
    if interval is None:
        raise ValueError(f"pld: effective mu = {plan.effective_mu():.6g} is beyond what dp-accounting's PLD represents")
    return _composed_pld(plan, interval)


# --------------------------------------------------------------------------------------------
# queries


@dataclass(frozen=True)
class PldGuarantee:
    """An (ε, δ) guarantee from the pld method.

    ``error``: the queried value (ε for :func:`pld_epsilon`, δ for :func:`pld_delta`) minus a
    lower bound on the truth, so the truth lies in [value − error, value]. ``closed_form``: the
    name of the exact profile used as that lower bound (and as a floor), if any.
    ``value_discretization_interval`` is None when no PLD was needed (exact answer, ends). ``lower``: that
    lower bound itself (the value when it is exact).

    Attributes:
        epsilon: the ε (queried: rounded up).
        delta: the δ (queried: rounded up).
        relation: the event's neighbouring relation.
        value_discretization_interval: the PLD's interval (None: no PLD was needed).
        error: the queried value minus ``lower``.
        closed_form: the exact profile's name, if any.
        lower: the lower bound on the truth.
    """

    epsilon: float
    delta: float
    relation: str
    value_discretization_interval: float | None
    error: float
    closed_form: str | None = None
    lower: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The guarantee as a plain dict.

        Returns:
            The fields, by name.
        """
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "relation": self.relation,
            "value_discretization_interval": self.value_discretization_interval,
            "error": self.error,
            "closed_form": self.closed_form,
            "lower": self.lower,
        }


def _checked_interval(value: object) -> float | None:
    return None if value is None else check_positive("value_discretization_interval", value)


def _discretised(
    plan: EventPlan, given: float | None, exact: float | None
) -> tuple[privacy_loss_distribution.PrivacyLossDistribution | None, float | None]:
    """The plan's composed PLD and its interval; (None, None) where dp-accounting cannot represent or discretise
    it but the plan's closed form ``exact`` answers; a ValueError with the reason where neither can."""
    interval = _interval(plan, given)
    if interval is None:
        if exact is None:
            raise ValueError(
                f"pld: effective mu = {plan.effective_mu():.6g} is beyond what dp-accounting's PLD represents "
                f"(<= {PLD_MAX_MU:g})"
            )
        return None, None
    try:
        return _composed_pld(plan, interval), interval
    except ValueError:
        if exact is None:
            raise
        return None, None  # dp-accounting cannot; the closed form can


def pld_epsilon(event: Event, delta: float, *, value_discretization_interval: float | None = None) -> PldGuarantee:
    """The smallest ε the pessimistic PLD certifies for ``event`` at ``delta`` (0 <= δ <= 1), rounded up.

    ε(1) = 0; ε(0) is the pure ε of a purely DP event (exact) and +inf otherwise; a non-private
    event has ε = +inf below δ = 1.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.
        delta: the δ, in [0, 1].
        value_discretization_interval: the PLD grid's interval (> 0; None: chosen from the event).

    Returns:
        The :class:`PldGuarantee`.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or a number of the wrong type.
        ValueError: δ outside [0, 1], a bad interval, or an event the PLD cannot represent.
    """
    event = check_event(event)
    delta = check_unit_interval("delta", delta)
    given = _checked_interval(value_discretization_interval)
    plan = plan_event(event)
    rel = event.relation
    if delta == 1.0 or plan.empty:
        return PldGuarantee(0.0, delta, rel, None, 0.0, None, 0.0)
    if plan.non_private:
        return PldGuarantee(math.inf, delta, rel, None, 0.0, None, math.inf)
    if delta == 0.0:
        pure = plan.pure_epsilon()
        return PldGuarantee(
            math.inf if pure is None else pure, delta, rel, None, 0.0, "pure", math.inf if pure is None else pure
        )
    name = plan.closed_form()
    exact = plan.exact_epsilon(delta) if name is not None else None
    pld, interval = _discretised(plan, given, exact)
    if pld is None or interval is None:
        assert exact is not None  # _discretised refuses otherwise
        return PldGuarantee(exact, delta, rel, None, 0.0, name, exact)
    from .pld_bounds import pessimistic_epsilon

    eps = max(pessimistic_epsilon(pld, delta), plan.part_floor_epsilon(delta))
    if not math.isfinite(eps) and exact is not None:  # below dp-accounting's truncation floor (~1e-15)
        return PldGuarantee(exact, delta, rel, None, 0.0, name, exact)
    reported = round_up(eps) if eps > 0.0 else 0.0  # (round_up(0) would be the smallest subnormal)
    pure = plan.pure_epsilon()
    if pure is not None:  # a purely DP plan is (pure, 0)-DP: never report more
        reported = min(reported, pure)
    if exact is not None:
        reported = max(reported, exact)
        return PldGuarantee(reported, delta, rel, interval, reported - exact, name, exact)
    if not math.isfinite(reported):
        return PldGuarantee(reported, delta, rel, interval, math.inf, None, 0.0)
    lower = min(reported, _lower_epsilon(plan, pld, interval, delta))
    return PldGuarantee(reported, delta, rel, interval, reported - lower, None, lower)


#: The plan's leaves dp-accounting discretises by connect-the-dots (the others' losses are rounded up onto the grid).
_CONNECT_THE_DOTS = ("laplace", "poisson_gaussian", "poisson_laplace")


def _discretisation(plan: EventPlan, interval: float) -> Discretisation:
    """How the plan's composed PLD departs from the truth (:mod:`dpkit.accountant.pld_bounds`): the connect-the-dots
    factors (the merged Gaussian counts once), the rounded-up ones, and twice the truncated mass (FFT wrap-around
    and the mass dp-accounting adds at +inf)."""
    from .pld_bounds import Discretisation

    dots = (1 if plan.gaussian_mu2 > 0.0 else 0) + sum(c for (k, _, _), c in plan.leaves if k in _CONNECT_THE_DOTS)
    rounded = sum(c for (k, _, _), c in plan.leaves if k not in _CONNECT_THE_DOTS)
    return Discretisation(interval, dots, rounded, 2.0 * plan.tail_mass)


def _lower_epsilon(
    plan: EventPlan, pld: privacy_loss_distribution.PrivacyLossDistribution, interval: float, delta: float
) -> float:
    """The largest of the lower bounds on the true ε(δ): the second-order bound of :mod:`.pld_bounds`, the
    first-order one ε_pld(δ + τ) − m·h (module docstring), and the exact ε of each part that has one."""
    from .pld_bounds import Profile, pessimistic_epsilon

    tau = plan.tail_mass
    first = 0.0 if delta + tau >= 1.0 else pessimistic_epsilon(pld, delta + tau)
    first = max(0.0, first - plan.discretisations * interval)
    second = Profile(pld, _discretisation(plan, interval)).lower_epsilon(delta)
    lower = max(first, second, plan.part_floor_epsilon(delta))
    upper = pessimistic_epsilon(pld, delta)
    return max(lower, _finer_lower_epsilon(plan, interval, delta, upper, lower))


#: DP-SGD's lower bound is recomputed on a grid twice (then four times) as fine when the interval [lower, upper]
#: is wider than this share of ε (the bound's gap shrinks as the square of the interval).
FINER_LOWER_WIDTH = 0.008


def _finer_lower_epsilon(plan: EventPlan, interval: float, delta: float, upper: float, lower: float) -> float:
    """DP-SGD (a plan of one subsampled Gaussian under add/remove, many steps): where the interval is wider than
    :data:`FINER_LOWER_WIDTH` of ε, the lower bound of the remove pair alone (the true ε is at least its) on a
    grid 2 and then 4 times finer; ``lower`` otherwise."""
    if plan.gaussian_mu2 > 0.0 or len(plan.leaves) != 1 or plan.relation != Relation.ADD_REMOVE:
        return lower
    (kind, q, nm), count = plan.leaves[0]
    if kind != "poisson_gaussian" or not math.isfinite(upper):
        return lower
    from .pld_bounds import Profile
    from .pld_fast import Adjacency, composed_pmf

    h = interval
    for _ in range(2):
        if upper - lower <= FINER_LOWER_WIDTH * upper:
            break
        h /= 2.0
        pmf = composed_pmf(nm, q, h, Adjacency.REMOVE, count)
        lower = max(lower, Profile([pmf], _discretisation(plan, h)).lower_epsilon(delta))
    return lower


def pld_delta(event: Event, epsilon: float, *, value_discretization_interval: float | None = None) -> PldGuarantee:
    """The smallest δ the pessimistic PLD certifies for ``event`` at ``epsilon`` (0 <= ε <= +inf), rounded up.

    δ(+inf) = 0; δ(ε) = 0 exactly once ε reaches the pure ε of a purely DP event (dp-accounting's
    truncation alone would give ~1e-14 there); a non-private event has δ = 1 at finite ε.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.
        epsilon: the ε (>= 0, +inf allowed).
        value_discretization_interval: the PLD grid's interval (> 0; None: chosen from the event).

    Returns:
        The :class:`PldGuarantee`.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or a number of the wrong type.
        ValueError: ε negative, a bad interval, or an event the PLD cannot represent.
    """
    event = check_event(event)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    given = _checked_interval(value_discretization_interval)
    plan = plan_event(event)
    rel = event.relation
    if epsilon == math.inf or plan.empty:
        return PldGuarantee(epsilon, 0.0, rel, None, 0.0, None, 0.0)
    if plan.non_private:
        return PldGuarantee(epsilon, 1.0, rel, None, 0.0, None, 1.0)
    pure = plan.pure_epsilon()
    if pure is not None and epsilon >= pure:
        return PldGuarantee(epsilon, 0.0, rel, None, 0.0, "pure", 0.0)
    name = plan.closed_form()
    exact = plan.exact_delta(epsilon) if name is not None else None
    pld, interval = _discretised(plan, given, exact)
    if pld is None or interval is None:
        assert exact is not None  # _discretised refuses otherwise
        return PldGuarantee(epsilon, exact, rel, None, 0.0, name, exact)
    d_pld = max(float(pld.get_delta_for_epsilon(epsilon)), plan.part_floor_delta(epsilon))
    d = min(1.0, round_up(d_pld)) if d_pld > 0.0 else 0.0
    if exact is not None:
        d = min(1.0, max(d, exact))
        return PldGuarantee(epsilon, d, rel, interval, d - exact, name, exact)
    from .pld_bounds import Profile

    s = plan.discretisations * interval
    first = max(0.0, float(pld.get_delta_for_epsilon(epsilon + s)) - plan.tail_mass)
    second = Profile(pld, _discretisation(plan, interval)).lower_delta(epsilon)
    lower = min(d, max(first, second, plan.part_floor_delta(epsilon)))
    return PldGuarantee(epsilon, d, rel, interval, max(0.0, d - lower), None, lower)


# --------------------------------------------------------------------------------------------
# the exact method on events: closed forms only


def closed_form_refusal(event: Event) -> str | None:
    """None if ``event`` has an exact (ε, δ) profile here, else why not (one sentence).

    Exact: any composition of plain Gaussians (with trees and groups of them: μ-GDP), one Laplace,
    one randomized response, one (ε, δ) release, no-op and non-private events, and — at δ = 0 or
    ε beyond it only — the pure ε of a purely DP composition.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.

    Returns:
        None, or the reason.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or a number of the wrong type.
    """
    event = check_event(event)
    out = PlanBuilder(event.relation)
    try:
        lower_event(event, 1, 1, out)
    except UnsupportedEvent as err:
        return str(err)
    plan = out.plan()
    if plan.non_private or plan.empty or plan.closed_form() is not None:
        return None
    return (
        "no closed form: only compositions of Gaussians (mu-GDP) and single Laplace, randomized-response or "
        "(epsilon, delta) releases are exact; use the pld method"
    )


def _closed_plan(event: Event) -> EventPlan:
    reason = closed_form_refusal(event)
    if reason is not None:
        raise ValueError(f"exact: {reason}")
    return plan_event(event)


def closed_form_epsilon(event: Event, delta: float) -> float:
    """The exact ε(δ) of ``event`` (see :func:`closed_form_refusal`), rounded up; ValueError if it has none.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.
        delta: the δ, in [0, 1].

    Returns:
        ε, rounded up.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or a number of the wrong type.
        ValueError: δ outside [0, 1], or no closed form.
    """
    event = check_event(event)
    delta = check_unit_interval("delta", delta)
    plan = _closed_plan(event)
    if delta == 1.0 or plan.empty:
        return 0.0
    if plan.non_private:
        return math.inf
    if delta == 0.0:
        pure = plan.pure_epsilon()
        return math.inf if pure is None else pure
    return plan.exact_epsilon(delta)


def closed_form_delta(event: Event, epsilon: float) -> float:
    """The exact δ(ε) of ``event`` (see :func:`closed_form_refusal`), rounded up; ValueError if it has none.

    Args:
        event: an event of :mod:`dpkit.accountant.events`.
        epsilon: the ε (>= 0, +inf allowed).

    Returns:
        δ, rounded up.

    Raises:
        ArgumentTypeError: ``event`` is not an Event, or a number of the wrong type.
        ValueError: ε negative, or no closed form.
    """
    event = check_event(event)
    epsilon = check_extended_nonnegative("epsilon", epsilon)
    plan = _closed_plan(event)
    if epsilon == math.inf or plan.empty:
        return 0.0
    if plan.non_private:
        return 1.0
    return plan.exact_delta(epsilon)
