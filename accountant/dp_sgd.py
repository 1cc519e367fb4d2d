"""DP-SGD as its users state it: a dataset of N examples, batches of B, E epochs (or T steps).

Opacus (``make_private_with_epsilon(epochs=…)``), tensorflow-privacy (``compute_dp_sgd_privacy(n, batch_size,
noise_multiplier, epochs, delta)``) and dp-accounting's users start from these; the accountant wants the
Poisson sampling rate q and the number of steps T. :class:`SamplingSchedule` does the arithmetic, exactly:

* q = B/N (Poisson sampling: each example joins each batch with probability B/N, the expected batch size B),
  kept as the exact fraction and rounded *up* to a double (a larger q is never less private);
* T = ⌈E·N/B⌉ steps for E epochs (E may be fractional: an epoch is N/B expected batches), or T given;

and :meth:`SamplingSchedule.event` is dp-accounting's DP-SGD event
``SelfComposed(PoissonSampled(q, Gaussian(σ/Δ)), T)``.
:func:`parse_rate` reads a sampling rate typed as a fraction (``256/60000``) or a decimal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .validation import check_count, check_positive

__all__ = ["SamplingSchedule", "parse_rate", "rate_up", "steps_for_epochs", "epochs_for_steps"]


def rate_up(rate: Fraction) -> float:
    """The exact rate as a double, rounded up (never below the fraction).

    Args:
        rate: the exact rate.

    Returns:
        The double, at most 1.
    """
    value = float(rate)
    if Fraction(value) < rate:
        value = math.nextafter(value, math.inf)
    return min(value, 1.0)


def parse_rate(text: str | float) -> tuple[float, Fraction | None]:
    """A sampling rate as typed: ``"256/60000"`` (an exact fraction: its double rounded up, and the fraction) or a
    decimal (its double, and None). A ValueError names the text that is neither, or a rate outside [0, 1].

    Args:
        text: the rate as typed, or a float (returned as it is).

    Returns:
        (q, the exact fraction or None).

    Raises:
        ValueError: text that is neither a number nor a fraction of whole numbers, or a fraction outside [0, 1].
    """
    if isinstance(text, float):
        return text, None
    raw = str(text).strip()
    if "/" in raw:
        top, _, bottom = raw.partition("/")
        try:
            fraction = Fraction(int(top.strip()), int(bottom.strip()))
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"sampling_rate {raw!r} is not a number or a fraction B/N of whole numbers") from None
        if not 0 <= fraction <= 1:
            raise ValueError(f"sampling_rate {raw} = {float(fraction):g} is not in [0, 1]")
        return rate_up(fraction), fraction
    try:
        return float(raw), None
    except ValueError:
        raise ValueError(f"sampling_rate {raw!r} is not a number or a fraction B/N") from None


def steps_for_epochs(epochs: float, dataset_size: int, batch_size: int) -> int:
    """T = ⌈E·N/B⌉, computed exactly (E as the decimal it was typed as).

    Args:
        epochs: E (> 0, may be fractional).
        dataset_size: N.
        batch_size: B.

    Returns:
        T, at least 1.
    """
    return max(1, math.ceil(Fraction(str(epochs)) * dataset_size / batch_size))


def epochs_for_steps(steps: float, dataset_size: int, batch_size: int) -> float:
    """E = T·B/N: the epochs T steps make, rounded down (as printed, too: ⌈E·N/B⌉ of it is then at most T).

    Args:
        steps: T (+inf allowed).
        dataset_size: N.
        batch_size: B.

    Returns:
        E, rounded down.
    """
    if steps == math.inf:
        return math.inf
    exact = Fraction(int(steps) * batch_size, dataset_size)
    value = float(exact)
    while Fraction(repr(value)) > exact:  # as printed (and typed back) too: E is read as the decimal it prints as
        value = math.nextafter(value, 0.0)
    return value


@dataclass(frozen=True)
class SamplingSchedule:
    """A DP-SGD run's sampling: the Poisson sampling rate q and the number of steps T, with the user's terms.

    Attributes:
        sampling_rate: q, a double rounded up.
        steps: T.
        dataset_size: N, where given.
        batch_size: B, where given.
        epochs: E, where given.
        fraction: q exactly (B/N, or the fraction typed), where known.
        rate_text: the fraction as typed (``256/60000``, not ``8/1875``), where given.
    """

    sampling_rate: float
    steps: int
    dataset_size: int | None = None
    batch_size: int | None = None
    epochs: float | None = None
    fraction: Fraction | None = None
    rate_text: str | None = None  # the fraction as typed (256/60000, not 8/1875)

    @classmethod
    def of(
        cls,
        *,
        dataset_size: float | None = None,
        batch_size: float | None = None,
        epochs: float | None = None,
        steps: float | None = None,
        sampling_rate: float | str | None = None,
    ) -> SamplingSchedule:
        """The schedule of either (N, B) or q, and either E (with N and B) or T; a ValueError names what is missing,
        what conflicts, or the bad value.

        Args:
            dataset_size: N, the number of examples (an integer >= 1), with ``batch_size``.
            batch_size: B, the expected batch size (an integer >= 1, at most N).
            epochs: E (> 0, finite), with N and B.
            steps: T (an integer >= 1), instead of E.
            sampling_rate: q in [0, 1] (a number, or a fraction typed as ``"256/60000"``), instead of N and B.

        Returns:
            The :class:`SamplingSchedule`.

        Raises:
            ArgumentTypeError: a number of the wrong type.
            ValueError: N without B (or B without N), both q and (N, B) or neither, both E and T or neither, E without
                N and B, B > N, or a bad value.
        """
        if (dataset_size is None) != (batch_size is None):
            given, missing = ("dataset_size", "batch_size") if batch_size is None else ("batch_size", "dataset_size")
            raise ValueError(f"{given} needs {missing} too: the sampling rate is batch_size/dataset_size")
        if dataset_size is not None and sampling_rate is not None:
            raise ValueError("give the sampling rate or dataset_size and batch_size, not both")
        if epochs is not None and steps is not None:
            raise ValueError("give epochs or steps, not both (T = ceil(epochs * dataset_size / batch_size))")
        fraction: Fraction | None = None
        rate_text: str | None = None
        n = b = None
        if dataset_size is not None and batch_size is not None:
            n, b = check_count("dataset_size", dataset_size), check_count("batch_size", batch_size)
            if b > n:
                raise ValueError(f"batch_size = {b:,} is larger than dataset_size = {n:,}")
            fraction = Fraction(b, n)
            q = rate_up(fraction)
        elif sampling_rate is not None:
            q, fraction = parse_rate(sampling_rate)
            if fraction is not None:
                rate_text = "/".join(part.strip() for part in str(sampling_rate).split("/"))
            if not 0.0 <= q <= 1.0 or math.isnan(q):
                raise ValueError(f"sampling_rate must lie in [0, 1], got {sampling_rate!r}")
        else:
            raise ValueError("give the sampling rate, or dataset_size and batch_size")
        if epochs is not None:
            if n is None or b is None:
                raise ValueError("epochs need dataset_size and batch_size (an epoch is dataset_size/batch_size steps)")
            check_positive("epochs", epochs)
            if not math.isfinite(epochs):
                raise ValueError(f"epochs must be finite, got {epochs!r}")
            t = steps_for_epochs(epochs, n, b)
        elif steps is not None:
            t = check_count("steps", steps)
        else:
            raise ValueError("give epochs (with dataset_size and batch_size) or steps")
        if n is not None:
            rate_text = f"{b}/{n}"
        return cls(q, t, n, b, None if epochs is None else float(epochs), fraction, rate_text)

    def event(self, noise_multiplier: float) -> Any:
        """dp-accounting's DP-SGD event of this schedule at ``noise_multiplier`` σ/Δ (a dpkit event).

        Args:
            noise_multiplier: σ/Δ.

        Returns:
            ``SelfComposedEvent(PoissonSampledEvent(q, GaussianEvent(σ/Δ)), T)`` (one step: no composition).
        """
        from .events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent

        step = PoissonSampledEvent(self.sampling_rate, GaussianEvent(noise_multiplier))
        return step if self.steps == 1 else SelfComposedEvent(step, self.steps)

    def describe(self) -> str:
        """How q and T follow from the user's terms: ``q = 256/60000 = 0.0042667, T = ⌈10 · 60000/256⌉ = 2,344``.

        Returns:
            The line.
        """
        if self.rate_text is not None:
            rate = f"q = {self.rate_text} = {self.sampling_rate:.5g}"
        else:
            rate = f"q = {self.sampling_rate:g}"
        if self.epochs is not None:
            steps = f"T = ⌈{self.epochs:g} · {self.dataset_size}/{self.batch_size}⌉ = {self.steps:,}"
        else:
            steps = f"T = {self.steps:,}"
        return f"{rate}, {steps} {'step' if self.steps == 1 else 'steps'}"

    def to_dict(self) -> dict[str, Any]:
        """The schedule as a plain dict.

        Returns:
            q, its fraction as typed, T, N, B and E, by name.
        """
        return {
            "sampling_rate": self.sampling_rate,
            "sampling_rate_fraction": self.rate_text,
            "steps": self.steps,
            "dataset_size": self.dataset_size,
            "batch_size": self.batch_size,
            "epochs": self.epochs,
        }
