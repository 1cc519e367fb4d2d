"""A DP-SGD training loop in numpy, as a user writes it, for ``dpkit audit --train`` (docs/how-to/audit-dp-sgd.md).

``train(dataset, rng)`` runs DP-SGD on a logistic regression: Poisson sampling at rate Q, each per-example gradient
clipped to C, N(0, σ²C²) noise on the sum, T steps; it returns every iterate. dpkit's white-box canaries arrive as
``dataset.gradient_canaries`` (each an example whose gradient is given: rows of ``.dense()``). ``train_unclipped``
forgets to clip. ``DATASET`` is the run's own data; ``loss`` is what a black-box audit scores.
"""

import numpy as np

SIGMA, Q, STEPS, C = 3.42, 1.0, 10, 1.0
FEATURES = 2048


def _make_dataset(n: int = 500) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, FEATURES)) / np.sqrt(FEATURES)
    return x, (x @ rng.standard_normal(FEATURES) > 0).astype(float)


DATASET = _make_dataset()


def loss(params, features, labels):
    """The logistic loss of each example."""
    return np.logaddexp(0.0, -(2.0 * labels - 1.0) * (features @ params))


def _dp_sgd(dataset, rng, *, clip: bool):
    x, y = dataset.features, dataset.labels
    canaries = dataset.gradient_canaries
    extra = np.zeros((0, x.shape[1])) if canaries is None else canaries.dense()
    batch = Q * (len(y) + len(extra))  # the expected batch size
    theta = np.zeros((STEPS + 1, x.shape[1]))
    for t in range(STEPS):
        pick, pick_extra = rng.random(len(y)) < Q, rng.random(len(extra)) < Q  # Poisson sampling
        grads = (1.0 / (1.0 + np.exp(-x[pick] @ theta[t])) - y[pick])[:, None] * x[pick]
        grads = np.concatenate([grads, extra[pick_extra]])
        if clip:
            grads *= np.minimum(1.0, C / np.maximum(np.linalg.norm(grads, axis=1, keepdims=True), 1e-12))
        noisy = grads.sum(axis=0) + SIGMA * C * rng.standard_normal(x.shape[1])
        theta[t + 1] = theta[t] - noisy / batch
    return theta


def train(dataset, rng):
    """DP-SGD, correct: every iterate θ0…θT."""
    return _dp_sgd(dataset, rng, clip=True)


def train_unclipped(dataset, rng):
    """DP-SGD that forgot to clip."""
    return _dp_sgd(dataset, rng, clip=False)
