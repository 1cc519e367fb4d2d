"""δ(ε) side by side: the same order as for ε(δ), each entry equal to its accountant's."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant import GaussianRelease, Ledger, compare_deltas, make_accountant

release_st = st.builds(
    GaussianRelease,
    name=st.sampled_from(["a", "b", "c"]),
    sensitivity=st.floats(0.1, 10.0),
    sigma=st.floats(0.5, 200.0),
    count=st.integers(1, 500),
)


@settings(max_examples=examples(25), deadline=None)
@given(releases=st.lists(release_st, min_size=1, max_size=3), epsilon=st.floats(0.05, 20.0))
@pytest.mark.slow
def test_delta_order_and_consistency(releases: list[GaussianRelease], epsilon: float) -> None:
    ledger = Ledger(tuple(releases))
    cmp = compare_deltas(ledger, epsilon)
    d = cmp.deltas
    assert d["exact"] <= d["rdp"] <= d["rdp-mironov"] <= d["zcdp"]
    assert d["exact"] <= d["zcdp-rdp-optimal"] <= d["zcdp"]
    assert d["exact"] <= d["pld"]
    if d["exact"] > 1e-12:  # within PLD's resolution (it truncates ~1e-15 of tail mass)
        assert d["pld"] <= d["rdp"]
    assert d["rdp"] == make_accountant("rdp", conversion="improved").delta(ledger, epsilon).delta
    assert d["zcdp"] == make_accountant("zcdp", conversion="bun-steinke").delta(ledger, epsilon).delta
    for key, value in d.items():
        assert (value is None) == (key in cmp.refusals)
        assert value is None or 0.0 <= value <= 1.0
