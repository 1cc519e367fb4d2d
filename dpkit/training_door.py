"""The front door of the one-run audit of a DP-SGD training run: :func:`audit_training`, the claim in DP-SGD's terms
(σ, q, T). It imports the audit when called, so ``import dpkit`` stays cheap; ``dpkit.audit_training`` is this
function."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dpkit.audits.dp_sgd_canaries import ThreatModel

__all__ = ["audit_training"]


def audit_training(
    train: Callable[..., Any],
    *,
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    canaries: int = 1000,
    threat: ThreatModel | str = "white-box",
    parameters: int | None = None,
    dataset: Any = None,
    loss: Callable[..., Any] | None = None,
    clip_norm: float = 1.0,
    seed: int = 0,
    alpha: float = 0.05,
    delta: float = 1e-5,
) -> Any:
    """Audit a DP-SGD training run in one run: canaries in, train once, the one-run ε lower bound beside the claim's.

    The claim is DP-SGD's (σ, q, T), read through dpkit's PLD (its whole trade-off curve);
    :func:`dpkit.audits.dp_sgd_audit.audit_training_run` does the work (docs/how-to/audit-dp-sgd.md).

    Args:
        train: ``train(dataset, rng)`` on a :class:`~dpkit.audits.dp_sgd_canaries.TrainingSet`: every iterate
            (white-box) or the final parameters (black-box).
        noise_multiplier: The claimed σ.
        sampling_rate: The claimed Poisson sampling rate q.
        steps: The claimed number of steps T.
        canaries: M, the canaries (each in with probability ½).
        threat: ``white-box`` (Dirac gradient canaries, every iterate) or ``black-box`` (input canaries, the loss).
        parameters: White-box: the model's parameter count (at least M).
        dataset: The run's own examples (features, labels).
        loss: Black-box: ``loss(params, features, labels)``, one loss per example.
        clip_norm: The clipping norm C the run claims.
        seed: The seed of the canaries, the coins and the run's generator.
        alpha: The level (confidence 1 − α).
        delta: Where ε is read.

    Returns:
        A :class:`~dpkit.audits.dp_sgd_audit.TrainingAuditResult`: the verdict, the bounds, the threat model.

    Raises:
        ValueError: A claim that does not describe DP-SGD, a bad value, or train's output of the wrong shape.
    """
    from dpkit.audits.dp_sgd_audit import audit_training_run
    from dpkit.audits.dp_sgd_claim import DpSgdClaim

    return audit_training_run(
        train,
        claim=DpSgdClaim(noise_multiplier, sampling_rate, steps),
        canaries=canaries,
        threat=threat,
        parameters=parameters,
        dataset=dataset,
        loss=loss,
        clip_norm=clip_norm,
        seed=seed,
        alpha=alpha,
        delta=delta,
    )
