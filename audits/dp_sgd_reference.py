"""A reference DP-SGD in numpy, and a zoo of the bugs real implementations have had, each a few lines from it.

:class:`ReferenceDpSgd` trains a logistic regression on a :class:`~dpkit.audits.dp_sgd_canaries.TrainingSet`:
at each of T steps every example (and every included gradient canary) joins the batch with probability q (Poisson
sampling), each per-example gradient is clipped to ℓ2 norm C, N(0, σ²C²I) is added to their sum, and the
parameters move by −η · sum / (q·n). It returns every iterate θ₀…θ_T. :func:`make_task` makes its data.
:class:`DpSgdBug` names the zoo: clipping off, clipping after averaging, the mean's noise on the sum, a sampling
rate larger than claimed, one noise draw reused at every step. The correct loop is the twin of tests and docs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from scipy import special

from dpkit.accountant.validation import check_count, check_positive, check_unit_interval

from .dp_sgd_canaries import TrainingSet

__all__ = ["DpSgdBug", "DP_SGD_BUGS", "ReferenceDpSgd", "make_task", "logistic_losses", "RATE_BUG_FACTOR"]

#: The "sampling rate claimed smaller than used" bug samples at this many times the claimed rate (at most 1).
RATE_BUG_FACTOR = 4.0


class DpSgdBug(enum.StrEnum):
    """A bug of the zoo (or none): what :class:`ReferenceDpSgd` does instead of DP-SGD."""

    NONE = "none"
    NO_CLIPPING = "no-clipping"
    CLIP_AFTER_AVERAGING = "clip-after-averaging"
    MEAN_SCALE_NOISE = "mean-scale-noise"
    LARGER_SAMPLING_RATE = "larger-sampling-rate"
    REUSED_NOISE = "reused-noise"


#: The bugs of the zoo (every :class:`DpSgdBug` but ``none``).
DP_SGD_BUGS: tuple[DpSgdBug, ...] = tuple(b for b in DpSgdBug if b is not DpSgdBug.NONE)


def make_task(*, examples: int = 500, features: int = 2048, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A logistic-regression task: features N(0, I/d) (norm about 1) and labels of a planted direction, 10% flipped.

    Args:
        examples: The number of examples n.
        features: Their dimension d (the model's parameters; white-box canaries need d >= their count).
        rng: The generator.

    Returns:
        (features (n, d), labels (n,) in {0, 1}).
    """
    n, d = check_count("examples", examples), check_count("features", features)
    x = rng.standard_normal((n, d)) / np.sqrt(d)
    w = rng.standard_normal(d)
    y = (x @ w > 0).astype(float)
    flip = rng.random(n) < 0.1
    return x, np.where(flip, 1.0 - y, y)


def logistic_losses(params: np.ndarray, features: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The logistic loss of each example under parameters ``params``.

    Args:
        params: The weights, (d,).
        features: The examples, (n, d).
        labels: Their labels in {0, 1}, (n,).

    Returns:
        The n losses, log(1 + e^{−s·z}) with s = ±1 the label's sign and z the logit.
    """
    z = features @ params
    return np.logaddexp(0.0, -(2.0 * labels - 1.0) * z)


def _clip_rows(g: np.ndarray, clip: float) -> np.ndarray:
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    return g * np.minimum(1.0, clip / np.maximum(norms, 1e-300))


@dataclass(frozen=True)
class ReferenceDpSgd:
    """DP-SGD on a logistic regression, correct (``bug = none``) or with one bug of the zoo.

    Call it as ``train(dataset, rng)``: it returns every iterate θ₀…θ_T, (T + 1, d), θ₀ = 0.

    Attributes:
        noise_multiplier: σ: the noise on the clipped sum is N(0, σ²C²I).
        sampling_rate: q, each example's probability of joining each batch (as claimed).
        steps: T.
        clip_norm: C.
        learning_rate: η (the step is −η · noisy sum / (q·n)).
        bug: The bug of the zoo, or ``none``.
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int
    clip_norm: float = 1.0
    learning_rate: float = 1.0
    bug: DpSgdBug = DpSgdBug.NONE

    def __post_init__(self) -> None:
        """Validate the values; a ValueError names the bad one."""
        check_positive("noise_multiplier", self.noise_multiplier)
        q = check_unit_interval("sampling_rate", self.sampling_rate)
        if q <= 0.0:
            raise ValueError(f"sampling_rate must lie in (0, 1], got {self.sampling_rate!r}")
        check_count("steps", self.steps)
        check_positive("clip_norm", self.clip_norm)
        check_positive("learning_rate", self.learning_rate)
        object.__setattr__(self, "bug", DpSgdBug(self.bug))

    def __call__(self, dataset: TrainingSet, rng: np.random.Generator) -> np.ndarray:
        """Train once.

        Args:
            dataset: The examples and the included gradient canaries.
            rng: The generator of the batches and the noise.

        Returns:
            Every iterate, (steps + 1, d).
        """
        x, y = np.asarray(dataset.features, dtype=float), np.asarray(dataset.labels, dtype=float)
        d = x.shape[1]
        canaries = dataset.gradient_canaries
        n_total = dataset.size
        c, sigma, bug = self.clip_norm, self.noise_multiplier, self.bug
        q = (
            min(1.0, self.sampling_rate * RATE_BUG_FACTOR)
            if bug is DpSgdBug.LARGER_SAMPLING_RATE
            else self.sampling_rate
        )
        batch = self.sampling_rate * n_total  # the expected batch the claim states
        theta = np.zeros((self.steps + 1, d))
        reused = rng.standard_normal(d)
        for t in range(self.steps):
            pick = rng.random(y.shape[0]) < q
            xb, yb = x[pick], y[pick]
            g = (special.expit(xb @ theta[t]) - yb)[:, None] * xb
            if canaries is not None:
                chosen = canaries.subset(np.flatnonzero(rng.random(len(canaries)) < q))
                g = np.concatenate([g, chosen.dense()])
            if bug is DpSgdBug.NO_CLIPPING:
                total = g.sum(axis=0)
            elif bug is DpSgdBug.CLIP_AFTER_AVERAGING:
                mean = g.sum(axis=0) / batch
                total = _clip_rows(mean[None, :], c)[0] * batch
            else:
                total = _clip_rows(g, c).sum(axis=0)
            scale = sigma * c / batch if bug is DpSgdBug.MEAN_SCALE_NOISE else sigma * c
            noise = reused if bug is DpSgdBug.REUSED_NOISE else rng.standard_normal(d)
            theta[t + 1] = theta[t] - self.learning_rate * (total + scale * noise) / batch
        return theta
