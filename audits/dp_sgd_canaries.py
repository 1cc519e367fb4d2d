"""The canaries of a one-run audit of DP-SGD training, and how each is scored after the run.

Two threat models (:class:`ThreatModel`). **White-box** (every iterate): each canary is a *Dirac gradient*, an
example whose per-example gradient is ``norm`` on one coordinate of the flattened parameters and 0 elsewhere (Nasr et
al. 2023); the auditor sees every iterate θ₀…θ_T, and a canary's score is its alignment with the updates,
Σ_t ⟨e_c, θ_t − θ_{t+1}⟩. **Black-box** (final model): each canary is an input example (features and a label drawn
from the task's own distribution, the label flipped at random); the auditor sees the final parameters, and a
canary's score is minus its loss. The training loop receives them in a :class:`TrainingSet`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from dpkit.accountant.validation import check_count, check_positive

__all__ = [
    "ThreatModel",
    "THREAT_MODELS",
    "TrainingSet",
    "DiracCanaries",
    "dirac_canaries",
    "alignments",
    "alignment_scores",
    "jump_scores",
]


class ThreatModel(enum.StrEnum):
    """What the auditor sees of the training run, and the canaries that go with it."""

    WHITE_BOX = "white-box"
    BLACK_BOX = "black-box"

    @property
    def statement(self) -> str:
        """The threat model in one sentence, stated on every result."""
        if self is ThreatModel.WHITE_BOX:
            return (
                "white-box: the auditor inserts Dirac gradient canaries and sees every iterate of the training run "
                "(the strongest adversary DP-SGD's accounting assumes)"
            )
        return (
            "black-box: the auditor inserts input examples and sees only the final model's losses on them "
            "(a bound far below the accountant's ε is expected: the accounting also covers every iterate)"
        )


#: The values of :class:`ThreatModel`.
THREAT_MODELS: tuple[str, ...] = tuple(t.value for t in ThreatModel)


@dataclass(frozen=True)
class DiracCanaries:
    """Gradient canaries: canary i's per-example gradient is ``norm`` at coordinate ``coordinates[i]`` of the
    flattened parameters (of ``parameters`` values), 0 elsewhere.

    Attributes:
        coordinates: One distinct coordinate per canary.
        parameters: The number of parameters.
        norm: The gradient's norm (above the clipping norm: clipping must bring it down).
    """

    coordinates: np.ndarray
    parameters: int
    norm: float

    def __len__(self) -> int:
        return int(self.coordinates.shape[0])

    def dense(self) -> np.ndarray:
        """The canaries' gradients as rows of a (count, parameters) array.

        Returns:
            The gradients.
        """
        out = np.zeros((len(self), self.parameters))
        out[np.arange(len(self)), self.coordinates] = self.norm
        return out

    def subset(self, keep: np.ndarray) -> DiracCanaries:
        """The canaries at indices ``keep``.

        Args:
            keep: Indices of the canaries kept.

        Returns:
            Those canaries.
        """
        return DiracCanaries(self.coordinates[keep], self.parameters, self.norm)


@dataclass(frozen=True)
class TrainingSet:
    """What a training function receives: the examples (the user's own and the included input canaries) and the
    included gradient canaries, each one more example for Poisson sampling, clipping and noise.

    Attributes:
        features: The examples' features, (n, …).
        labels: Their labels, (n,).
        gradient_canaries: The included Dirac gradient canaries (white-box), or None.
    """

    features: np.ndarray
    labels: np.ndarray
    gradient_canaries: DiracCanaries | None = field(default=None)

    @property
    def size(self) -> int:
        """The number of examples, gradient canaries included."""
        extra = 0 if self.gradient_canaries is None else len(self.gradient_canaries)
        return int(self.labels.shape[0]) + extra


def dirac_canaries(count: int, *, parameters: int, norm: float, rng: np.random.Generator) -> DiracCanaries:
    """``count`` Dirac gradient canaries on distinct coordinates drawn at random.

    Args:
        count: The number of canaries, at most ``parameters``.
        parameters: The number of parameters of the model.
        norm: Each canary gradient's norm (> 0).
        rng: The generator of the coordinates.

    Returns:
        The canaries.

    Raises:
        ValueError: If ``count`` is not a positive count, or there are fewer parameters than canaries.
    """
    m = check_count("canaries", count)
    d = check_count("parameters", parameters)
    if m > d:
        raise ValueError(f"{m:,} Dirac canaries need at least as many parameters, the model has {d:,}")
    return DiracCanaries(rng.choice(d, size=m, replace=False), d, check_positive("canary norm", norm))


def alignments(iterates: np.ndarray, canaries: DiracCanaries) -> np.ndarray:
    """Each canary's alignment with each step's update: ⟨e_c, θ_t − θ_{t+1}⟩, (canaries, steps).

    Args:
        iterates: θ₀…θ_T, (T + 1, parameters).
        canaries: The canaries (all, included or not).

    Returns:
        The alignments.
    """
    updates = iterates[:-1, canaries.coordinates] - iterates[1:, canaries.coordinates]
    return np.ascontiguousarray(updates.T)


def alignment_scores(aligned: np.ndarray) -> np.ndarray:
    """Σ_t ⟨e_c, θ_t − θ_{t+1}⟩: a canary in the data pulls its coordinate its way at each step it is sampled.

    Args:
        aligned: The alignments, (canaries, steps) (:func:`alignments`).

    Returns:
        One score per canary (higher: more likely in).
    """
    return aligned.sum(axis=1)


def jump_scores(aligned: np.ndarray) -> np.ndarray:
    """Σ_t |a_{t+1} − a_t|: how much a canary's alignment changes from step to step. Fresh noise at each step makes
    it the same in and out; noise drawn once and reused cancels from the differences, and a canary sampled at some
    steps and not others stands out.

    Args:
        aligned: The alignments, (canaries, steps).

    Returns:
        One score per canary (higher: more likely in); 0 for a single step.
    """
    if aligned.shape[1] < 2:
        return np.zeros(aligned.shape[0])
    return np.abs(np.diff(aligned, axis=1)).sum(axis=1)
