"""DP-SGD in its users' terms (dpkit.accountant.dp_sgd): q = B/N exactly and rounded up, T = ⌈E·N/B⌉, fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpkit.accountant.dp_sgd import SamplingSchedule, epochs_for_steps, parse_rate, rate_up, steps_for_epochs
from dpkit.accountant.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent


def test_mnist_schedule() -> None:
    s = SamplingSchedule.of(dataset_size=60000, batch_size=256, epochs=10)
    assert s.sampling_rate == 256 / 60000 == 0.004266666666666667 and s.steps == 2344  # ⌈2343.75⌉
    assert s.describe() == "q = 256/60000 = 0.0042667, T = ⌈10 · 60000/256⌉ = 2,344 steps"
    assert s.to_dict()["sampling_rate_fraction"] == "256/60000"
    assert s.event(1.1) == SelfComposedEvent(PoissonSampledEvent(256 / 60000, GaussianEvent(1.1)), 2344)
    # tf-privacy floors: 14,062
    assert SamplingSchedule.of(dataset_size=60000, batch_size=256, epochs=60).steps == 14063


@given(st.integers(1, 10**6), st.integers(1, 10**6))
def test_rate_is_the_fraction_rounded_up(b: int, n: int) -> None:
    b = min(b, n)
    q = rate_up(Fraction(b, n))
    assert Fraction(q) >= Fraction(b, n) > Fraction(math.nextafter(q, 0.0))  # the smallest double at or above it


@given(st.integers(1, 10**5), st.integers(1, 10**5), st.sampled_from([0.5, 1.0, 2.5, 10.0, 60.0]))
def test_steps_cover_the_epochs(b: int, n: int, epochs: float) -> None:
    b = min(b, n)
    t = steps_for_epochs(epochs, n, b)
    assert t * b >= Fraction(str(epochs)) * n > (t - 1) * b or t == 1
    assert steps_for_epochs(epochs_for_steps(t, n, b), n, b) <= t  # the epochs T steps make fit in T steps


def test_typed_rates() -> None:
    assert parse_rate("256/60000") == (256 / 60000, Fraction(256, 60000))
    assert parse_rate(" 1 / 3 ")[0] >= 1 / 3 and parse_rate("0.01") == (0.01, None)
    for bad in ("1/0", "a/3", "3/2", "abc", "1.5/3"):
        with pytest.raises(ValueError, match=bad.split("/")[0].strip() if bad != "3/2" else "1.5"):
            parse_rate(bad)
    s = SamplingSchedule.of(sampling_rate="256/60000", steps=2344)
    assert s.sampling_rate == 256 / 60000 and s.describe().startswith("q = 256/60000")


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"dataset_size": 100, "epochs": 1}, "dataset_size needs batch_size"),
        ({"batch_size": 10, "steps": 3}, "batch_size needs dataset_size"),
        ({"dataset_size": 100, "batch_size": 10, "sampling_rate": 0.1, "steps": 3}, "not both"),
        ({"dataset_size": 100, "batch_size": 10, "epochs": 1, "steps": 3}, "epochs or steps"),
        ({"dataset_size": 10, "batch_size": 100, "epochs": 1}, "larger than dataset_size"),
        ({"sampling_rate": 0.1, "epochs": 1}, "epochs need dataset_size"),
        ({"dataset_size": 100, "batch_size": 10}, "give epochs"),
        ({"dataset_size": 100, "batch_size": 10, "epochs": 0}, "epochs"),
        ({"dataset_size": 100, "batch_size": 10, "epochs": math.inf}, "finite"),
        ({"dataset_size": 100.5, "batch_size": 10, "steps": 1}, "dataset_size"),
        ({"steps": 3}, "sampling rate"),
    ],
)
def test_bad_schedules_say_what_is_wrong(kw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SamplingSchedule.of(**kw)
