"""What every attack is: the :class:`Attack` interface (fit on training outputs, score outputs) and the checks of
the outputs and scores an attack takes and gives, named for the argument at fault."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

__all__ = ["Attack", "as_mean", "as_outputs", "check_attack_scores", "flatten_outputs", "flatten_pair", "row_dot"]


def as_outputs(name: str, outputs: object) -> np.ndarray:
    """``outputs`` as a float array of n >= 1 samples of k >= 1 finite values each.

    Args:
        name: The argument's name, for the messages.
        outputs: The outputs, shape (n, …).

    Returns:
        The outputs as a float array.

    Raises:
        ValueError: If they are not real numbers, have no sample axis, no sample or no value per sample, or are not
            finite.
    """
    try:
        arr = np.asarray(outputs, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {type(outputs).__name__}") from None
    if arr.ndim == 0:
        raise ValueError(f"{name} must have a leading sample axis, got a scalar {arr.item()!r}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must contain at least one sample, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must have at least one value per sample, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite, got {arr[index]} at index {index}")
    return arr


def flatten_outputs(name: str, outputs: object, k: int | None = None) -> np.ndarray:
    """``outputs`` as an (n, k) float array.

    Args:
        name: The argument's name, for the messages.
        outputs: The outputs, shape (n, …).
        k: The values per sample they must have, or None.

    Returns:
        The outputs, one row per sample.

    Raises:
        ValueError: As :func:`as_outputs`, or if the width is not ``k``.
    """
    arr = as_outputs(name, outputs)
    x = arr.reshape(arr.shape[0], -1)
    if k is not None and x.shape[1] != k:
        raise ValueError(
            f"{name} must have {k} values per sample, got shape {arr.shape} ({x.shape[1]} values per sample)"
        )
    return x


def flatten_pair(outputs0: object, outputs1: object) -> tuple[np.ndarray, np.ndarray]:
    """The training outputs of D and D′ as (n0, k) and (n1, k) arrays of the same k.

    Args:
        outputs0: The outputs of D.
        outputs1: The outputs of D′.

    Returns:
        Both, one row per sample.

    Raises:
        ValueError: As :func:`as_outputs`, or if their widths differ.
    """
    x0 = flatten_outputs("outputs0", outputs0)
    x1 = flatten_outputs("outputs1", outputs1)
    if x0.shape[1] != x1.shape[1]:
        raise ValueError(
            f"outputs0 and outputs1 must have the same number of values per sample, got {x0.shape[1]} and {x1.shape[1]}"
        )
    return x0, x1


def as_mean(name: str, mean: object) -> np.ndarray:
    """A mean output as a float array of finite values (any shape, at least one value).

    Args:
        name: The argument's name, for the messages.
        mean: The mean.

    Returns:
        The mean as a float array.

    Raises:
        ValueError: If it is not real numbers, is empty or is not finite.
    """
    try:
        arr = np.asarray(mean, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {type(mean).__name__}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite, got {arr[index]} at index {index}")
    return arr


def row_dot(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """x @ w row by row, without BLAS.

    Each row's score is the same whether it is scored alone or in any chunk (a matrix product's summation order,
    hence its last bits, depends on the chunk).

    Args:
        x: The rows, shape (n, k).
        w: The weights, shape (k,).

    Returns:
        One value per row, shape (n,).
    """
    return np.einsum("ij,j->i", x, w)


def check_attack_scores(name: str, scores: np.ndarray, n: int) -> np.ndarray:
    """``scores`` if it is a finite float array of shape (n,).

    Args:
        name: What the scores are, for the messages.
        scores: The scores.
        n: The number of outputs scored.

    Returns:
        ``scores``.

    Raises:
        ValueError: If their shape is not (n,) or they are not finite.
    """
    if scores.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) for {n} outputs, got shape {scores.shape}")
    bad = ~np.isfinite(scores)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite, got {scores[i]} at index {i}")
    return scores


# --------------------------------------------------------------------------- the interface


class Attack(ABC):
    """A rule that scores outputs of a mechanism: larger scores mean "more likely D′".

    Subclasses set :attr:`name` and :attr:`needs_fit`. A black-box attack (``needs_fit``)
    must be :meth:`fit` on training outputs before :meth:`score`; a white-box attack's
    :meth:`fit` does nothing and returns the attack.
    """

    #: Short name of the attack (the key of :data:`ATTACKS` for the built-in attacks).
    name: str = "attack"
    #: Whether :meth:`fit` must be called before :meth:`score`.
    needs_fit: ClassVar[bool] = False

    def fit(self, outputs0: np.ndarray, outputs1: np.ndarray) -> Attack:
        """Learn the attack from training outputs of D and D′; the default (white-box attacks) does nothing.

        Args:
            outputs0: Training outputs of D (label 0).
            outputs1: Training outputs of D′ (label 1).

        Returns:
            ``self``.
        """
        return self

    @property
    def fitted(self) -> bool:
        """Whether :meth:`score` can be called (always ``True`` for white-box attacks)."""
        return True

    @abstractmethod
    def score(self, outputs: np.ndarray) -> np.ndarray:
        """Score n outputs.

        Args:
            outputs: The outputs, shape (n, …).

        Returns:
            A finite float array of shape (n,), larger meaning "more likely D′".
        """

    def _require_fitted(self) -> None:
        if not self.fitted:
            raise ValueError(f"{type(self).__name__} must be fitted before score: call fit(outputs0, outputs1)")
