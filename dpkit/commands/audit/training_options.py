"""The options of ``dpkit audit --train FILE.py:NAME``: the one-run audit of a DP-SGD training run, and the refusal
of every other form's options with it (:mod:`dpkit.commands.audit.training` runs it)."""

from __future__ import annotations

from typing import Any

import click

from ..option_types import NUMBER, RATE
from ..refusals import refuse_options

__all__ = ["TRAIN_OPTIONS", "training_options", "training_form"]

#: The options of the --train form alone (``--canaries``, ``--delta``, ``--confidence``, ``--seed`` and ``--json`` it
#: shares with others).
TRAIN_OPTIONS: tuple[str, ...] = (
    "train",
    "noise_multiplier",
    "sampling_rate",
    "steps",
    "parameters",
    "loss",
    "clip_norm",
    "threat",
    "examples",
)
#: The threat models (:data:`dpkit.audits.dp_sgd_canaries.THREAT_MODELS`, spelled here: ``--help`` imports nothing of
#: the audits).
THREAT_MODELS = ("white-box", "black-box")
#: The shared options the --train form takes.
_SHARED = ("canaries", "delta", "confidence", "seed", "as_json")


def training_options(f: Any) -> Any:
    """Add the --train form's options to ``dpkit audit`` (a decorator).

    Args:
        f: The command's callback.

    Returns:
        ``f`` with the options added.
    """
    options = [
        click.option(
            "--train",
            default=None,
            metavar="FILE.py:NAME",
            help="A DP-SGD training function train(dataset, rng): audited in one run with canaries (--threat).",
        ),
        click.option("--noise-multiplier", type=NUMBER, default=None, help="--train: the claimed noise multiplier σ."),
        click.option("--sampling-rate", type=RATE, default=None, help="--train: the claimed Poisson rate q (or B/N)."),
        click.option("--steps", type=NUMBER, default=None, help="--train: the claimed number of steps T."),
        click.option("--parameters", type=NUMBER, default=None, help="--train white-box: the model's parameter count."),
        click.option(
            "--loss", default=None, metavar="FILE.py:NAME", help="--train black-box: loss(params, x, y) per example."
        ),
        click.option("--clip-norm", type=NUMBER, default=1.0, show_default=True, help="--train: the clipping norm C."),
        click.option(
            "--threat",
            type=click.Choice(THREAT_MODELS),
            default="white-box",
            show_default=True,
            help="--train: white-box (Dirac gradient canaries, every iterate) or black-box (input canaries, loss).",
        ),
        click.option(
            "--examples",
            default=None,
            metavar="FILE.py:NAME",
            help="--train: the run's own examples, a pair (features, labels) or a function returning one.",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def training_form(ctx: click.Context, params: dict[str, Any]) -> int:
    """Refuse the other forms' options, then run the --train audit.

    Args:
        ctx: The command's click context.
        params: Its parameters.

    Returns:
        The exit status: 1 for a violation, 0 otherwise.

    Raises:
        click.UsageError: An option of another form, or a missing part of the claim.
        ValueError: A bad value (one ``error:`` line).
    """
    keep = set(TRAIN_OPTIONS) | set(_SHARED)
    refuse_options(ctx, [name for name in params if name not in keep], "a --train audit (DP-SGD in one run)")
    missing = [f"--{n.replace('_', '-')}" for n in ("noise_multiplier", "sampling_rate", "steps") if params[n] is None]
    if missing:
        raise click.UsageError(f"--train needs the run's claim: {', '.join(missing)}")
    from .form_options import TrainingOptions, form_options
    from .training import audit_training

    return audit_training(form_options(TrainingOptions, params))
