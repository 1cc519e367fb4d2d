"""A BinaryCounter over a batch of runs is, run by run, the counter of that run's Generator, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpkit.accountant.binary_counter import BinaryCounter


@settings(max_examples=40, deadline=None)
@given(
    runs=st.integers(1, 5),
    steps=st.integers(1, 9),
    symmetric=st.booleans(),
    per_step=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_batch_of_runs_is_each_runs_counter(
    runs: int, steps: int, symmetric: bool, per_step: bool, seed: int
) -> None:
    shape = (3, 2, 2)
    sigma = [0.5, 0.0, 2.0] if per_step else 1.5
    seeds = np.random.SeedSequence(seed).spawn(runs)
    batch = BinaryCounter(shape, sigma, [np.random.default_rng(s) for s in seeds], symmetric=symmetric, steps=steps)
    alone = [BinaryCounter(shape, sigma, np.random.default_rng(s), symmetric=symmetric, steps=steps) for s in seeds]
    items = np.random.default_rng(seed + 1).normal(size=(steps, runs, *shape))
    assert batch.runs == runs and batch.item_shape == (runs, *shape)
    for t in range(steps):
        batch.add(items[t])
        for i, counter in enumerate(alone):
            counter.add(items[t, i])
        np.testing.assert_array_equal(batch.prefix(), np.stack([c.prefix() for c in alone]))


def test_a_batch_of_runs_takes_items_with_the_run_axis() -> None:
    batch = BinaryCounter((2,), 1.0, [np.random.default_rng(0), np.random.default_rng(1)])
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        batch.add(np.zeros(2))
    with pytest.raises(ValueError, match="at least one Generator"):
        BinaryCounter((2,), 1.0, [])
    with pytest.raises(TypeError, match=r"rng\[1\]"):
        BinaryCounter((2,), 1.0, [np.random.default_rng(0), "x"])
