"""RDP curves of events (dpkit.accountant.rdp_events) against dp-accounting's RdpAccountant.

Each event kind is compared with dp-accounting's ``RdpAccountant`` composing the same mechanism as a
``DpEvent`` built by hand here. Where the two read a relation differently the test says so:
under ``replace_one`` dpkit reads a record's change as 2C (as dp-accounting's *PLD* accountant
reads ``REPLACE_ONE``), which is dp-accounting's RDP reading of the event with half the noise
multiplier; dp-accounting's RDP accountant reads tree aggregation under ``REPLACE_SPECIAL``, which
for a sum is dpkit's ``add_remove``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.privacy_accountant import NeighboringRelation as Rel
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp

from dpkit.accountant.events import (
    ComposedEvent,
    EpsilonDeltaEvent,
    Event,
    GaussianEvent,
    GroupEvent,
    LaplaceEvent,
    NonPrivateEvent,
    NoOpEvent,
    PoissonSampledEvent,
    RandomizedResponseEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    TreeAggregationEvent,
)
from dpkit.accountant.rdp import rdp_epsilon
from dpkit.accountant.rdp_events import rdp_curve, rdp_supports
from dpkit.accountant.rdp_mechanisms import laplace_rdp, randomized_response_rdp
from dpkit.accountant.validation import ArgumentTypeError

INT_ORDERS = np.array([2.0, 3.0, 4.0, 8.0, 16.0, 32.0, 64.0, 256.0])
ORDERS = np.array([1.25, 1.5, 2.0, 2.5, 3.0, 5.5, 8.0, 12.0, 20.0, 32.0, 64.0, 256.0])


def _theirs(event: dp_event.DpEvent, orders: np.ndarray, relation: Rel = Rel.ADD_OR_REMOVE_ONE) -> np.ndarray:
    acc = dp_rdp.RdpAccountant(orders=list(orders), neighboring_relation=relation)
    acc.compose(event)
    return acc.rdp


def _supported(event: Event) -> None:
    ok, reason = rdp_supports(event)
    assert ok and reason == ""


# ----------------------------------------------------------------------------------------
# leaves


@pytest.mark.parametrize("nm", [0.3, 1.0, 4.5])
def test_gaussian(nm: float) -> None:
    ours = rdp_curve(GaussianEvent(nm), ORDERS)
    theirs = _theirs(dp_event.GaussianDpEvent(nm), ORDERS)
    assert np.all(ours >= theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    # replace_one: μ = 2/nm, i.e. dp-accounting's RDP reading with nm/2 (its own RDP reading of REPLACE_ONE,
    # α/(2 nm²), is a quarter of that: it disagrees with its PLD accountant, which shifts by 2)
    ours_ro = rdp_curve(GaussianEvent(nm, relation="replace_one"), ORDERS)
    np.testing.assert_allclose(ours_ro, _theirs(dp_event.GaussianDpEvent(nm / 2), ORDERS, Rel.REPLACE_ONE), rtol=1e-14)
    np.testing.assert_allclose(ours_ro, 4 * _theirs(dp_event.GaussianDpEvent(nm), ORDERS, Rel.REPLACE_ONE), rtol=1e-14)
    mu = GaussianEvent(nm, relation="replace_one").mu
    assert np.all(ours_ro >= ORDERS * mu * mu / 2 * (1 - 1e-15))


@pytest.mark.parametrize("nm", [0.1, 1.0, 30.0])
def test_laplace(nm: float) -> None:
    ours = rdp_curve(LaplaceEvent(nm), ORDERS)
    theirs = _theirs(dp_event.LaplaceDpEvent(nm), ORDERS)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    # replace_one: an ℓ1 change of 2C, ε = 2/nm
    ours_ro = rdp_curve(LaplaceEvent(nm, relation="replace_one"), ORDERS)
    np.testing.assert_allclose(ours_ro, _theirs(dp_event.LaplaceDpEvent(nm / 2), ORDERS), rtol=1e-9)
    assert float(rdp_curve(LaplaceEvent(nm), math.inf)) >= 1 / nm


@pytest.mark.parametrize(("p", "k"), [(0.3, 10), (0.05, 20), (0.01, 3), (0.5, 2), (0.9, 2)])
def test_randomized_response(p: float, k: int) -> None:
    event = RandomizedResponseEvent(p, k)
    ours = rdp_curve(event, ORDERS)
    theirs = _theirs(dp_event.RandomizedResponseDpEvent(p, k), ORDERS, Rel.REPLACE_ONE)
    assert np.all(ours >= theirs * (1 - 1e-13))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    assert float(rdp_curve(event, math.inf)) >= math.log1p(k * (1 - p) / p)


def test_randomized_response_under_add_remove_is_unsupported() -> None:
    ok, reason = rdp_supports(RandomizedResponseEvent(0.3, 4, relation="add_remove"))
    assert not ok and "replace_one" in reason
    with pytest.raises(ValueError, match="replace_one"):
        rdp_curve(RandomizedResponseEvent(0.3, 4, relation="add_remove"), ORDERS)


@pytest.mark.parametrize("eps", [0.01, 0.5, 2.0, 10.0])
def test_pure_epsilon_delta(eps: float) -> None:
    ours = rdp_curve(EpsilonDeltaEvent(eps, 0.0), ORDERS)
    # Bun & Steinke 2016 Prop. 3.3 and D_α <= D_∞: the bound the task names; ours is the tighter RR curve
    assert np.all(ours <= np.minimum(eps, ORDERS * eps * eps / 2) * (1 + 1e-12))
    np.testing.assert_allclose(ours, randomized_response_rdp(epsilon=eps, k=2, orders=ORDERS), rtol=1e-15)
    # the RR curve is attained by an ε-DP pair (binary randomized response): nothing smaller is sound
    p = 2 / (math.exp(eps) + 1)
    rr = _theirs(dp_event.RandomizedResponseDpEvent(p, 2), ORDERS, Rel.REPLACE_ONE)
    assert np.all(ours >= rr * (1 - 1e-12))


def test_epsilon_delta_with_delta_is_unsupported() -> None:
    ok, reason = rdp_supports(EpsilonDeltaEvent(1.0, 1e-6))
    assert not ok and "δ" in reason
    ok, reason = rdp_supports(ComposedEvent([GaussianEvent(1.0), EpsilonDeltaEvent(1.0, 1e-6)]))
    assert not ok and "δ" in reason


@pytest.mark.parametrize("step_counts", [(1,), (7,), (1600,), (400, 400, 400, 400), (10, 400, 390)])
def test_tree_aggregation(step_counts: tuple[int, ...]) -> None:
    ours = rdp_curve(TreeAggregationEvent(1.3, step_counts), ORDERS)
    theirs = _theirs(dp_event.SingleEpochTreeAggregationDpEvent(1.3, list(step_counts)), ORDERS, Rel.REPLACE_SPECIAL)
    assert np.all(ours >= theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14)
    ours_ro = rdp_curve(TreeAggregationEvent(1.3, step_counts, relation="replace_one"), ORDERS)
    np.testing.assert_allclose(ours_ro, 4 * theirs, rtol=1e-14)


def test_no_op_and_non_private() -> None:
    assert np.all(rdp_curve(NoOpEvent(), ORDERS) == _theirs(dp_event.NoOpDpEvent(), ORDERS))
    assert np.all(np.isinf(rdp_curve(NonPrivateEvent(), ORDERS)))
    assert np.all(np.isinf(_theirs(dp_event.NonPrivateDpEvent(), ORDERS)))


# ----------------------------------------------------------------------------------------
# sampling


@pytest.mark.parametrize(("q", "nm"), [(0.01, 1.1), (256 / 60000, 1.1), (0.1, 2.0), (0.5, 0.8)])
def test_poisson_gaussian(q: float, nm: float) -> None:
    event = PoissonSampledEvent(q, GaussianEvent(nm))
    ours = rdp_curve(event, INT_ORDERS)
    theirs = _theirs(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(nm)), INT_ORDERS)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    # fractional orders: never above dp-accounting's (looser) magnitude sum
    ours_all = rdp_curve(event, ORDERS)
    theirs_all = _theirs(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(nm)), ORDERS)
    finite = np.isfinite(theirs_all)
    assert np.all(ours_all[finite] <= theirs_all[finite] * (1 + 1e-9))


def test_poisson_of_composed_gaussians_is_one_effective_gaussian() -> None:
    child = ComposedEvent([GaussianEvent(2.0), SelfComposedEvent(GaussianEvent(3.0), 4)])
    ours = rdp_curve(PoissonSampledEvent(0.05, child), INT_ORDERS)
    dp_child = dp_event.ComposedDpEvent(
        [dp_event.GaussianDpEvent(2.0), dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(3.0), 4)]
    )
    theirs = _theirs(dp_event.PoissonSampledDpEvent(0.05, dp_child), INT_ORDERS)
    assert np.all(ours >= theirs * (1 - 1e-12))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    effective = (1 / 4 + 4 / 9) ** -0.5
    np.testing.assert_allclose(
        ours, rdp_curve(PoissonSampledEvent(0.05, GaussianEvent(effective)), INT_ORDERS), rtol=1e-12
    )


def test_poisson_edges_and_refusals() -> None:
    assert np.all(rdp_curve(PoissonSampledEvent(0.0, GaussianEvent(0.0)), ORDERS) == 0)
    assert np.all(rdp_curve(PoissonSampledEvent(0.0, LaplaceEvent(1.0)), ORDERS) == 0)
    np.testing.assert_allclose(
        rdp_curve(PoissonSampledEvent(1.0, GaussianEvent(2.0)), ORDERS),
        rdp_curve(GaussianEvent(2.0), ORDERS),
        rtol=1e-14,
    )
    assert np.all(rdp_curve(PoissonSampledEvent(0.3, GaussianEvent(math.inf)), ORDERS) == 0)
    assert np.all(np.isinf(rdp_curve(PoissonSampledEvent(0.3, GaussianEvent(0.0)), ORDERS)))
    ok, reason = rdp_supports(PoissonSampledEvent(0.1, GaussianEvent(1.0, relation="replace_one")))
    assert not ok and "add_remove" in reason
    ok, reason = rdp_supports(PoissonSampledEvent(0.1, LaplaceEvent(1.0)))
    assert not ok and "LaplaceEvent" in reason
    # dp-accounting refuses the same two
    ro = dp_rdp.RdpAccountant(neighboring_relation=Rel.REPLACE_ONE)
    assert not ro.supports(dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)))
    assert not dp_rdp.RdpAccountant().supports(dp_event.PoissonSampledDpEvent(0.1, dp_event.LaplaceDpEvent(1.0)))


@pytest.mark.parametrize(("n", "b", "nm"), [(60000, 256, 1.1), (1000, 10, 2.0), (100, 50, 0.9), (100, 100, 1.5)])
def test_sampled_without_replacement(n: int, b: int, nm: float) -> None:
    event = SampledWithoutReplacementEvent(n, b, GaussianEvent(nm, relation="replace_one"))
    ours = rdp_curve(event, ORDERS)
    # dpkit's replace_one Gaussian is dp-accounting's with half the noise multiplier
    half = _theirs(
        dp_event.SampledWithoutReplacementDpEvent(n, b, dp_event.GaussianDpEvent(nm / 2)), ORDERS, Rel.REPLACE_ONE
    )
    gaussian = rdp_curve(GaussianEvent(nm, relation="replace_one"), ORDERS)
    assert np.all(ours <= half * (1 + 1e-8))
    assert np.all(ours >= np.minimum(half, gaussian) * (1 - 1e-9))
    same = _theirs(
        dp_event.SampledWithoutReplacementDpEvent(n, b, dp_event.GaussianDpEvent(nm)), ORDERS, Rel.REPLACE_ONE
    )
    assert np.all(ours >= same)


def test_sampled_without_replacement_refusals() -> None:
    ok, reason = rdp_supports(SampledWithoutReplacementEvent(100, 10, GaussianEvent(1.0)))
    assert not ok and "replace_one" in reason
    ok, reason = rdp_supports(SampledWithoutReplacementEvent(100, 10, LaplaceEvent(1.0, relation="replace_one")))
    assert not ok and "Gaussian" in reason


# ----------------------------------------------------------------------------------------
# composition


def test_self_composition_and_composition_add() -> None:
    a = PoissonSampledEvent(0.02, GaussianEvent(1.3))
    b = LaplaceEvent(5.0)
    c = GaussianEvent(7.0)
    ca, cb, cc = (rdp_curve(e, ORDERS) for e in (a, b, c))
    np.testing.assert_allclose(rdp_curve(SelfComposedEvent(a, 100), ORDERS), 100 * ca, rtol=1e-14)
    composed = rdp_curve(ComposedEvent([SelfComposedEvent(a, 100), b, SelfComposedEvent(c, 3)]), ORDERS)
    assert np.all(composed >= 100 * ca + cb + 3 * cc)
    np.testing.assert_allclose(composed, 100 * ca + cb + 3 * cc, rtol=1e-14)
    dp_composed = dp_event.ComposedDpEvent(
        [
            dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.02, dp_event.GaussianDpEvent(1.3)), 100),
            dp_event.LaplaceDpEvent(5.0),
            dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(7.0), 3),
        ]
    )
    acc = dp_rdp.RdpAccountant(orders=list(INT_ORDERS))
    acc.compose(dp_composed)
    ours_int = rdp_curve(ComposedEvent([SelfComposedEvent(a, 100), b, SelfComposedEvent(c, 3)]), INT_ORDERS)
    np.testing.assert_allclose(ours_int, acc.rdp, rtol=1e-9)
    ours_eps = rdp_epsilon(INT_ORDERS, ours_int, 1e-5).epsilon
    assert ours_eps == pytest.approx(acc.get_epsilon(1e-5), rel=1e-7)


def test_composition_with_non_private_is_infinite() -> None:
    curve = rdp_curve(ComposedEvent([GaussianEvent(1.0), NonPrivateEvent(), NoOpEvent()]), ORDERS)
    assert np.all(np.isinf(curve))


# ----------------------------------------------------------------------------------------
# groups


def test_group_of_gaussians_scales_mu() -> None:
    event = ComposedEvent([GaussianEvent(2.0), SelfComposedEvent(TreeAggregationEvent(3.0, (100,)), 2)])
    for k in (1, 2, 5):
        np.testing.assert_allclose(
            rdp_curve(GroupEvent(event, k), ORDERS), k * k * rdp_curve(event, ORDERS), rtol=1e-14
        )
    nested = GroupEvent(GroupEvent(GaussianEvent(2.0), 2), 3)
    np.testing.assert_allclose(rdp_curve(nested, ORDERS), 36 * rdp_curve(GaussianEvent(2.0), ORDERS), rtol=1e-14)


def test_group_of_pure_events() -> None:
    np.testing.assert_allclose(
        rdp_curve(GroupEvent(LaplaceEvent(2.0), 3), ORDERS),
        laplace_rdp(scale=2.0, sensitivity=3.0, orders=ORDERS),
        rtol=1e-15,
    )
    group_rr = rdp_curve(GroupEvent(RandomizedResponseEvent(0.2, 4), 3), ORDERS)
    eps = RandomizedResponseEvent(0.2, 4).epsilon
    np.testing.assert_allclose(group_rr, rdp_curve(EpsilonDeltaEvent(3 * eps, 0.0), ORDERS), rtol=1e-12)
    assert np.all(group_rr >= rdp_curve(RandomizedResponseEvent(0.2, 4), ORDERS))
    assert np.all(group_rr <= 3 * eps * (1 + 1e-12))


def test_group_of_subsampled_is_unsupported() -> None:
    ok, reason = rdp_supports(GroupEvent(PoissonSampledEvent(0.1, GaussianEvent(1.0)), 2))
    assert not ok and "group" in reason
    ok, reason = rdp_supports(GroupEvent(SelfComposedEvent(PoissonSampledEvent(0.1, GaussianEvent(1.0)), 5), 2))
    assert not ok and "group" in reason
    assert rdp_supports(GroupEvent(PoissonSampledEvent(0.1, GaussianEvent(1.0)), 1))[0]


# ----------------------------------------------------------------------------------------
# arguments


def test_shapes_and_bad_arguments() -> None:
    assert rdp_curve(GaussianEvent(1.0), 2.0).shape == ()
    assert rdp_curve(GaussianEvent(1.0), np.full((2, 2), 3.0)).shape == (2, 2)
    assert math.isinf(float(rdp_curve(PoissonSampledEvent(0.1, GaussianEvent(1.0)), math.inf)))
    with pytest.raises(ArgumentTypeError, match="event"):
        rdp_curve("gaussian", ORDERS)  # type: ignore[arg-type]
    with pytest.raises(ArgumentTypeError, match="event"):
        rdp_supports(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="order"):
        rdp_curve(GaussianEvent(1.0), [2.0, 1.0])
