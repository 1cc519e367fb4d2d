"""How a billboard agent's prefixes are built, told by its declared counts (dpkit.audits.rl.billboard): binary-tree
p-sums (count m per step) or fresh noise on every prefix (count K − 1); any other count is refused, naming both —
the audit's allowance at each position follows from the structure."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.accountant.declarations import DeclaredRelease, PrivacyDeclaration
from dpkit.accountant.tree import max_psums_per_item
from dpkit.audits.rl.billboard import counter_structure
from dpkit.audits.rl.psums import counter_nodes


def _declaration(*counts: int, steps: int = 1) -> PrivacyDeclaration:
    factors = (1.0,) * steps if steps > 1 else ()
    releases = tuple(
        DeclaredRelease(f"c{i}", "counts", c, 1.0, 1.0, 1.0, 2.0, step_factors=factors) for i, c in enumerate(counts)
    )
    return PrivacyDeclaration("agent", "JDP", "a user's agent", "replace_one", 1.0, 1e-5, releases)


@settings(max_examples=examples(60), deadline=None)
@given(k=st.integers(2, 5000), steps=st.integers(1, 4))
def test_the_declared_count_tells_the_structure(k: int, steps: int) -> None:
    m = max_psums_per_item(k, schedule="before-episode")
    assert counter_structure(_declaration(m * steps, m * steps, steps=steps), k) == "tree"
    prefix = max(k - 1, 1)
    assert counter_structure(_declaration(prefix * steps, steps=steps), k) == ("tree" if prefix == m else "prefix")
    other = max(m, prefix) + 1
    with pytest.raises(ValueError, match=rf"declares count {other * steps} .*m = {m}.*K − 1 = {prefix}"):
        counter_structure(_declaration(other * steps, steps=steps), k)


def test_what_the_declared_release_docstring_says_the_billboard_accepts() -> None:
    """Issue 43: DeclaredRelease's docstring once offered "H counters × m p-sums" as a count, which the billboard
    protocol refuses as it stands (H·m read as one step). What it says now: H·m with H step_factors, or m for a
    vector counter over the steps, are binary-tree counters; H·m without step_factors is refused, naming both."""
    k, h = 16, 3
    m = max_psums_per_item(k, schedule="before-episode")
    assert counter_structure(_declaration(h * m, steps=h), k) == "tree"
    assert counter_structure(_declaration(m), k) == "tree"
    with pytest.raises(ValueError, match=rf"declares count {h * m} \({h * m} per step over 1 step"):
        counter_structure(_declaration(h * m), k)
    assert "H·m with H ``step_factors``" in " ".join((DeclaredRelease.__doc__ or "").split())


def test_releases_of_both_kinds_are_refused() -> None:
    # K = 16: a tree's m = 4 p-sums hold a user, 15 released prefixes hold the first
    with pytest.raises(ValueError, match="mix binary-tree counters and counters noised on every prefix"):
        counter_structure(_declaration(4, 15), 16)


def test_prefix_nodes_are_the_prefixes() -> None:
    p = np.arange(12.0).reshape(6, 2)
    nodes, starts = counter_nodes(p, "prefix")
    assert np.array_equal(nodes, p[1:]) and not starts.any()
    tree, starts = counter_nodes(p, "tree")
    assert np.array_equal(starts, [0, 0, 2, 0, 4]) and np.array_equal(tree[2], p[3] - p[2])
    assert np.array_equal(tree[3], p[4])  # from the empty prefix, read as 0 whatever was released before user 0
    with pytest.raises(ValueError, match="structure must be"):
        counter_nodes(p, "fenwick")


@settings(max_examples=examples(40), deadline=None)
@given(k=st.integers(2, 300), shift=st.integers(0, 5))
def test_the_allowance_covers_every_layout_of_the_declared_tree(k: int, shift: int) -> None:
    # a binary-tree counter primed with `shift` items before the first user (another leaf layout, same declared m
    # when its worst user is in no more than m p-sums): user k is in no more released p-sums than allowed_psums says
    from types import SimpleNamespace

    from dpkit.audits.rl import billboard

    m = max_psums_per_item(k, schedule="before-episode")
    held = np.zeros(k, dtype=int)
    for t in range(shift + 1, shift + k):  # P_t released before user t − shift: node t holds items (t − lowbit, t]
        lo = t - (t & -t)
        users = np.arange(max(lo - shift, 0), t - shift)
        held[users] += 1
    setting = SimpleNamespace(episodes=k)
    original = billboard.setting_structure
    billboard.setting_structure = lambda _: "tree"  # the declared structure of a tree agent
    try:
        allowed = np.array([billboard.allowed_psums(setting, i) for i in range(k)])
    finally:
        billboard.setting_structure = original
    if held.max() <= m:  # the layout keeps its declaration: every user within the allowance
        assert (held <= allowed).all()
    assert allowed.max() == m and allowed[-1] == 0
