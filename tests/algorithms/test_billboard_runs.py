"""The billboard observer's reading of R runs at once is, run by run, its reading of each run alone."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.audits.rl.observers import cross_projections, cross_projections_runs
from dpkit.audits.rl.psums import CounterReading, billboard, billboard_runs
from dpkit.audits.rl.rows import Trace


def _reference_cross(residual: np.ndarray, delta: np.ndarray, sigma: float) -> np.ndarray:
    """The definition, entry by entry: ⟨residual_b, u⟩/σ with u the unit part of d_g orthogonal to d_b."""
    steps = delta.shape[0]
    units = [d / np.linalg.norm(d) if np.linalg.norm(d) > 0 else np.zeros_like(d) for d in delta]
    out = np.zeros((steps, steps))
    for b in range(steps):
        for g in range(steps):
            rest = units[g] - (units[g] @ units[b]) * units[b]
            if g != b and np.linalg.norm(rest) > 1e-9:
                out[b, g] = residual[b] @ (rest / np.linalg.norm(rest)) / sigma
    return out


@settings(max_examples=30, deadline=None)
@given(runs=st.integers(1, 4), steps=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_cross_projections_are_their_definition(runs: int, steps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    residual, delta = rng.normal(size=(2, runs, steps, 3))
    delta[:, 0] = 0.0 if steps > 1 else delta[:, 0]  # a step without a difference
    batch = cross_projections_runs(residual, delta, 2.0)
    for i in range(runs):
        np.testing.assert_allclose(batch[i], _reference_cross(residual[i], delta[i], 2.0), atol=1e-12)
        np.testing.assert_allclose(cross_projections(residual[i], delta[i], 2.0), batch[i], rtol=0, atol=0)


@settings(max_examples=25, deadline=None)
@given(
    runs=st.integers(1, 4),
    users=st.integers(2, 7),
    index=st.integers(0, 6),
    coordinates=st.booleans(),
    structure=st.sampled_from(["tree", "prefix"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_billboard_of_runs_is_each_runs_billboard(
    runs: int, users: int, index: int, coordinates: bool, structure: str, seed: int
) -> None:
    index = min(index, users - 1)
    rng = np.random.default_rng(seed)
    shapes = {"G": ((2, 3, 3), True), "u": ((2, 3), False)}
    prefixes = {n: rng.normal(size=(runs, users + 1, *shape)) for n, (shape, _) in shapes.items()}
    for p in prefixes.values():
        p[:, 0] = 0.0
    items0 = {n: rng.normal(size=(runs, users, *shape)) for n, (shape, _) in shapes.items()}
    delta = {n: rng.normal(size=(runs, *shape)) for n, (shape, _) in shapes.items()}
    reading = CounterReading(
        {"G": 1.5, "u": np.array([0.5, 2.0])},
        {"G": 1.0, "u": np.array([1.0, 0.0])},
        {n: sym for n, (_, sym) in shapes.items()},
        {"G": 2.0, "u": np.array([1.0, 1.0])},
        coordinates,
        structure,
    )
    args = (index, reading)
    from dpkit.audits.rl.rows import Traces

    together = Traces(runs)
    billboard_runs(together, prefixes, items0, delta, *args)
    rows = together.rows(True)
    for i in range(runs):
        alone = Trace()
        billboard(alone, *({n: x[i] for n, x in m.items()} for m in (prefixes, items0, delta)), *args)
        np.testing.assert_allclose(rows[i], alone.row(True), rtol=0, atol=0)


@settings(max_examples=25, deadline=None)
@given(runs=st.integers(1, 5), reuse=st.booleans(), coin=st.integers(0, 1), seed=st.integers(0, 2**32 - 1))
def test_votes_of_runs_are_each_runs_votes(runs: int, reuse: bool, coin: int, seed: int) -> None:
    """A counter that holds her difference and one that does not, their noise one draw (``reuse``): votes for her
    coin; fresh noise: none (but by chance) — run by run alike."""
    from dpkit.audits.rl.observers import flat
    from dpkit.audits.rl.psums import counter_nodes
    from dpkit.audits.rl.reused_noise import CounterNodes, changed_user_vote, changed_user_votes

    rng = np.random.default_rng(seed)
    users, index = 4, 1
    items = rng.normal(size=(runs, users, 3))
    delta = np.zeros((runs, users, 3))
    delta[:, index] = rng.normal(size=(runs, 3))
    noise = rng.normal(size=(2, runs, users, 3))
    if reuse:
        noise[1] = noise[0]
    batch = []
    for c in range(2):
        mine = delta if c == 0 else np.zeros_like(delta)  # counter 1 does not hold her
        data = items + coin * mine + noise[c]
        prefixes = np.concatenate([np.zeros((runs, 1, 3)), np.cumsum(data, axis=1)], axis=1)
        nodes, starts = counter_nodes(np.moveaxis(prefixes, 0, 1), "tree")
        nodes = np.moveaxis(nodes, 0, 1)
        magnitude = np.abs(prefixes[:, 1:]) + np.abs(prefixes[:, starts])
        batch.append(CounterNodes(flat(nodes, False, 2), starts, magnitude, items, mine, 1.0))
    votes = changed_user_votes(batch)
    for i in range(runs):
        alone = [CounterNodes(c.nodes[i], c.starts, c.magnitude[i], c.items0[i], c.delta[i], 1.0) for c in batch]
        assert votes[i] == changed_user_vote(alone)
        if reuse:
            assert votes[i] > 0 if coin == 1 else votes[i] < 0


@settings(max_examples=40, deadline=None)
@given(
    runs=st.integers(1, 4),
    ops=st.lists(st.sampled_from(["add", "extra", "read", "plan", "see"]), max_size=8),
    white_box=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_traces_of_runs_are_each_runs_trace(runs: int, ops: list[str], white_box: bool, seed: int) -> None:
    """Every part recorded for R runs at once gives, row i, the row of a Trace given run i's parts in that order."""
    from dpkit.audits.rl.rows import Traces

    rng = np.random.default_rng(seed)
    together, alone = Traces(runs), [Trace() for _ in range(runs)]
    for op in ops:
        x = rng.normal(size=(4, runs, 2, 3))
        if op == "add":
            together.add(*x)
            for i, t in enumerate(alone):
                t.add(*(part[i] for part in x))
        elif op == "extra":
            together.extra(x[0])
            for i, t in enumerate(alone):
                t.extra(x[0][i])
        elif op == "read":
            votes = rng.integers(-2, 3, size=runs).astype(float)
            together.read(votes)
            for i, t in enumerate(alone):
                t.read(float(votes[i]))
        elif op == "plan":
            together.plan(x[0])
            for i, t in enumerate(alone):
                t.plan(x[0][i])
        else:
            together.see(x[0])
            for i, t in enumerate(alone):
                t.view.append(x[0][i].ravel())
    rows = together.rows(white_box)
    for i, t in enumerate(alone):
        np.testing.assert_array_equal(rows[i], t.row(white_box))


@settings(max_examples=200, deadline=None)
@given(
    runs=st.integers(1, 5),
    size=st.integers(1, 12),
    copies=st.integers(0, 4),
    zeros=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_sort_skips_only_runs_without_a_vote(runs: int, size: int, copies: int, zeros: bool, seed: int) -> None:
    """The one-sort screen (which runs may hold a vote) never drops a run the exact reading gives a vote: values
    repeated exactly, within the rounding, with a flipped sign, at 0 — every run's votes are the exact reading's."""
    from dpkit.audits.rl.reused_noise import _may_repeat, _vote

    rng = np.random.default_rng(seed)
    residual = rng.normal(size=(runs, size))
    difference = np.where(rng.random((runs, size)) < 0.5, rng.normal(size=(runs, size)), 0.0)
    held = difference != 0.0
    rounding = np.full((runs, size), 1e-12)
    for _ in range(copies):  # a value repeated: another coordinate's (maybe less its difference), or its negative
        r, i, j = rng.integers(runs), rng.integers(size), rng.integers(size)
        source = residual[r, j] - difference[r, j] * rng.integers(2)
        residual[r, i] = source * rng.choice([-1.0, 1.0]) + rng.uniform(-1e-12, 1e-12)
    if zeros:
        residual[:, 0] = 0.0
    screened = np.zeros(runs)
    for i in np.flatnonzero(_may_repeat(residual, difference, rounding, held)):
        screened[i] = _vote(residual[i], difference[i], rounding[i], held[i])
    exact = [_vote(residual[i], difference[i], rounding[i], held[i]) for i in range(runs)]
    np.testing.assert_array_equal(screened, exact)


@settings(max_examples=60, deadline=None)
@given(
    runs=st.integers(1, 4),
    users=st.integers(1, 6),
    one_per_node=st.booleans(),
    items=st.sampled_from(["zero", "random"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_whitening_of_runs_is_each_runs_whitening(
    runs: int, users: int, one_per_node: bool, items: str, seed: int
) -> None:
    """Each run's whitened residuals, rounding, counts and differences from the batch are what :func:`_whiten` gives
    that run alone: with nodes of one user each (whose shortcut skips the block sums) and with tree p-sums, with
    items all 0 (the messages observer's) and not."""
    from dpkit.audits.rl.reused_noise import CounterNodes, _whiten, _whiten_runs

    rng = np.random.default_rng(seed)
    m = 3
    starts = np.arange(users) if one_per_node else np.array([t & (t + 1) for t in range(users)])
    items0 = np.zeros((runs, users, m)) if items == "zero" else rng.normal(size=(runs, users, m))
    delta = np.where(rng.random((runs, users, m)) < 0.3, rng.normal(size=(runs, users, m)), 0.0)
    nodes, magnitude = rng.normal(size=(2, runs, users, m))
    batch = _whiten_runs(CounterNodes(nodes, starts, np.abs(magnitude), items0, delta, 0.7))
    for i in range(runs):
        alone = _whiten(CounterNodes(nodes[i], starts, np.abs(magnitude[i]), items0[i], delta[i], 0.7))
        for field in ("residual", "rounding", "count", "difference"):  # inputs of order 1: an entry that cancels
            # to near 0 carries the rounding of its terms (~1e-16) in absolute terms, not relative to itself
            np.testing.assert_allclose(getattr(batch, field)[i], getattr(alone, field), rtol=1e-12, atol=1e-12)
