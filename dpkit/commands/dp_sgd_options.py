"""The options that describe a mechanism other than K Gaussian releases, and DP-SGD's schedule read from them.

DP-SGD in its users' terms: ``--dataset-size N --batch-size B`` or ``--sampling-rate Q``, and ``--epochs E`` or
``--steps T`` (:class:`dpkit.accountant.dp_sgd.SamplingSchedule`); any mechanism: ``--event FILE.json``, read under
``--relation``; ``--save-event FILE.json`` writes the mechanism. Two options that say the same thing, or one
without its partner, are an error naming them. :mod:`dpkit.commands.mechanisms` builds the mechanism.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dpkit.accountant import Relation
from dpkit.accountant.validation import enum_values

from .option_types import NUMBER, RATE
from .refusals import given

if TYPE_CHECKING:
    from dpkit.accountant.dp_sgd import SamplingSchedule

__all__ = ["DP_SGD_OPTIONS", "mechanism_options", "dp_sgd_given", "schedule_of"]

#: The options that state DP-SGD's sampling and length in its users' terms.
DP_SGD_OPTIONS = ("sampling_rate", "dataset_size", "batch_size", "epochs", "steps")


def mechanism_options(f: Any) -> Any:
    """Add the DP-SGD options, ``--event``, ``--relation`` and ``--save-event`` to a command (a decorator).

    The sensitivity and compositions are the commands' own options.

    Args:
        f: The command's callback (or a command being built).

    Returns:
        ``f`` with the options added.
    """
    f = click.option(
        "--save-event",
        "save_event_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Write the mechanism (with the calibrated noise) as a DpEvent JSON file: --event, dpkit ledger FILE "
        "and a report's [[ledger]] entry read it back.",
    )(f)
    f = click.option(
        "--relation",
        type=click.Choice(enum_values(Relation)),
        default=None,
        help="With --event: the neighbouring relation a DpEvent is read under (default add_remove).",
    )(f)
    f = click.option(
        "--event",
        "event_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="A DpEvent JSON (dp-accounting's, with module names) or dpkit's event JSON, composed K times.",
    )(f)
    f = click.option("--steps", type=NUMBER, default=None, help="DP-SGD: the number of steps T (as --compositions).")(f)
    f = click.option(
        "--epochs", type=NUMBER, default=None, help="DP-SGD: epochs E over the dataset: T = ceil(E·N/B) steps."
    )(f)
    f = click.option(
        "--batch-size", type=NUMBER, default=None, help="DP-SGD: expected batch size B (Poisson sampling, q = B/N)."
    )(f)
    f = click.option("--dataset-size", type=NUMBER, default=None, help="DP-SGD: the number of examples N.")(f)
    f = click.option(
        "--sampling-rate",
        type=RATE,
        default=None,
        help="DP-SGD: Poisson sampling rate q, a decimal or a fraction such as 256/60000 (or give N and B).",
    )(f)
    return f


def dp_sgd_given(ctx: click.Context) -> bool:
    """Whether any DP-SGD option was typed (the form is then DP-SGD).

    Args:
        ctx: The command's click context.

    Returns:
        True when one of :data:`DP_SGD_OPTIONS` was given.
    """
    return any(name in ctx.params and given(ctx, name) for name in DP_SGD_OPTIONS)


def schedule_of(ctx: click.Context, compositions: float | None, *, need_steps: bool = True) -> SamplingSchedule:
    """DP-SGD's schedule from the options typed: (N, B) or q, and E, T or K.

    Args:
        ctx: The command's click context (the DP-SGD options read from it).
        compositions: ``--compositions`` K, the number of steps where ``--steps`` and ``--epochs`` are not given.
        need_steps: Whether the number of steps must be stated (``False``: only q is wanted).

    Returns:
        The :class:`~dpkit.accountant.dp_sgd.SamplingSchedule`.

    Raises:
        click.UsageError: Options that clash (two that set the same number) or one without its partner.
        ValueError: A bad value, named by its option.
    """
    from dpkit.accountant.dp_sgd import SamplingSchedule

    p = ctx.params
    typed = {name: given(ctx, name) for name in (*DP_SGD_OPTIONS, "compositions") if name in p}
    if typed.get("steps") and typed.get("compositions"):
        raise click.UsageError("--steps and --compositions say the same for DP-SGD (the number of steps): give one")
    if typed.get("epochs") and (typed.get("steps") or typed.get("compositions")):
        other = "--steps" if typed.get("steps") else "--compositions"
        raise click.UsageError(f"--epochs and {other} both set the number of steps: give one")
    if typed.get("sampling_rate") and (typed.get("dataset_size") or typed.get("batch_size")):
        raise click.UsageError("--sampling-rate and --dataset-size/--batch-size both set q = B/N: give one")
    if typed.get("dataset_size") != typed.get("batch_size"):
        have, need = (
            ("--dataset-size", "--batch-size") if typed.get("dataset_size") else ("--batch-size", "--dataset-size")
        )
        raise click.UsageError(f"{have} needs {need} too: the sampling rate is q = B/N")
    if not (typed.get("sampling_rate") or typed.get("dataset_size")):
        flag = "--steps" if typed.get("steps") else "--epochs"
        raise click.UsageError(
            f"{flag} is DP-SGD's: give --dataset-size and --batch-size (or --sampling-rate); for K Gaussian releases "
            "use --compositions"
        )
    if typed.get("epochs") and not typed.get("dataset_size"):
        raise click.UsageError(
            "--epochs needs --dataset-size and --batch-size (an epoch is N/B steps); or give --steps"
        )
    stated = typed.get("epochs") or typed.get("steps") or typed.get("compositions")
    if need_steps and typed.get("dataset_size") and not stated:
        raise click.UsageError("DP-SGD over --dataset-size N needs --epochs E (T = ceil(E·N/B)) or --steps T")
    steps = p.get("steps") if typed.get("steps") else compositions
    if typed.get("epochs"):
        steps = None
    try:
        return SamplingSchedule.of(
            dataset_size=p.get("dataset_size"),
            batch_size=p.get("batch_size"),
            epochs=p.get("epochs"),
            steps=steps if (need_steps or typed.get("steps") or typed.get("compositions")) else 1,
            sampling_rate=p.get("sampling_rate"),
        )
    except ValueError as err:  # the API's names as the command line spells them
        text = str(err)
        for name in ("dataset_size", "batch_size", "sampling_rate", "epochs", "steps"):
            text = text.replace(name, "--" + name.replace("_", "-"))
        raise ValueError(text) from None
