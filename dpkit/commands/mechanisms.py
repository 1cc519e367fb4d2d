"""What ``calibrate``, ``epsilon``, ``delta`` and ``methods`` account for, built from their options.

Three forms, one each:

* K Gaussian releases: ``--sigma`` (σ), ``--sensitivity`` (Δ), ``--compositions`` (K) — a Gaussian ledger;
* DP-SGD in its users' terms: ``--dataset-size N --batch-size B`` or ``--sampling-rate Q``, and ``--epochs E`` or
  ``--steps T`` (:class:`dpkit.accountant.dp_sgd.Schedule`);
* any mechanism: ``--event FILE.json`` (a dp-accounting ``DpEvent`` or dpkit's own event JSON), composed K times.

``--save-event FILE.json`` writes the mechanism as a DpEvent file, which ``--event`` reads back. The method defaults
to ``exact`` for Gaussian releases and to ``pld`` for the other forms; an option of another form, or two options that
say the same thing, is an error naming them. The how-to "σ for a DP-SGD run" (docs/how-to/dp-sgd.md) has the DP-SGD
terms and the event files in full.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dpkit import accountant
from dpkit.accountant import Ledger, Relation
from dpkit.accountant.validation import check_noise_scale, enum_values

from .options import NUMBER, RATE, compositions_count, given, refuse_options

if TYPE_CHECKING:
    from dpkit.accountant.dp_sgd import Schedule
    from dpkit.accountant.events import Event

__all__ = ["Mechanism", "mechanism_options", "build_mechanism", "default_method", "DP_SGD_OPTIONS", "save_event"]

#: The options that state DP-SGD's sampling and length in its users' terms.
DP_SGD_OPTIONS = ("sampling_rate", "dataset_size", "batch_size", "epochs", "steps")


@dataclass(frozen=True)
class Mechanism:
    """What is accounted for: ``target`` (a Gaussian ledger or an event), K, and how to say it."""

    target: Ledger | Event
    compositions: int
    form: str  # "gaussian", "dp-sgd" or "event"
    sensitivity: float = 1.0
    sampling_rate: float | None = None
    schedule: Schedule | None = None

    @property
    def gaussian(self) -> bool:
        return self.form == "gaussian"

    def describe(self, *, calibrating: bool = False) -> str:
        """The mechanism in one line, as the commands print it.

        Args:
            calibrating: Whether to leave out the template's noise (σ = 1, noise multiplier 1).

        Returns:
            The line.
        """
        if self.form == "dp-sgd" and self.schedule is not None:
            noise = "" if calibrating else f"σ/Δ = {self.noise_multiplier:g}, "
            return f"DP-SGD, {noise}{self.schedule.describe()}"
        if calibrating and self.form == "gaussian":
            return f"Δ = {self.sensitivity:g}, K = {self.compositions}"
        if isinstance(self.target, Ledger):
            r = self.target.releases[0]
            return f"σ = {r.sigma:g}, Δ = {r.sensitivity:g}, K = {r.count}"  # type: ignore[union-attr]
        from dpkit.accountant.events import describe

        return describe(self.target)

    @property
    def noise_multiplier(self) -> float:
        """The DP-SGD step's noise multiplier σ/Δ (NaN for another form)."""
        from dpkit.accountant.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent

        event = self.target.event if isinstance(self.target, SelfComposedEvent) else self.target
        if isinstance(event, PoissonSampledEvent) and isinstance(event.event, GaussianEvent):
            return event.event.noise_multiplier
        return math.nan

    def to_dict(self) -> dict[str, Any]:
        """The JSON of the event (dpkit's form) for the non-Gaussian forms, and DP-SGD's terms.

        Returns:
            ``event`` and ``relation`` (and DP-SGD's terms); empty for Gaussian releases.
        """
        if isinstance(self.target, Ledger):
            return {}
        out = {"event": self.target.to_dict(), "relation": self.target.relation}
        if self.schedule is not None:
            out |= self.schedule.to_dict()
        return out


def mechanism_options(f: Any) -> Any:
    """The DP-SGD options, ``--event``, ``--relation`` and ``--save-event`` (the sensitivity and compositions are
    the commands')."""
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


def default_method(method: str | None, mechanism_is_gaussian: bool) -> str:
    """The method given, or ``exact`` for Gaussian releases and ``pld`` otherwise.

    Args:
        method: ``--method``, or None when it was not given.
        mechanism_is_gaussian: Whether the mechanism is K Gaussian releases.

    Returns:
        The method to account with.
    """
    if method is not None:
        return method
    return "exact" if mechanism_is_gaussian else "pld"


def _read_event(path: Path, relation: str | None) -> Event:
    from dpkit.accountant.interop import load_event
    from dpkit.algorithms.limits import check_releases
    from dpkit.loading import naming_file, read_text_file

    with naming_file(path, "event file"):
        event = load_event(read_text_file(path, "event file"), relation=relation)
    check_releases(f"event file {str(path)!r}", event)  # before it is accounted
    return event


def dp_sgd_given(ctx: click.Context) -> bool:
    """Whether any DP-SGD option was typed (the form is then DP-SGD).

    Args:
        ctx: The command's click context.

    Returns:
        True when one of :data:`DP_SGD_OPTIONS` was given.
    """
    return any(name in ctx.params and given(ctx, name) for name in DP_SGD_OPTIONS)


def schedule_of(ctx: click.Context, compositions: float | None, *, need_steps: bool = True) -> Schedule:
    """DP-SGD's schedule from the options typed: (N, B) or q, and E, T or K; errors name the flags."""
    from dpkit.accountant.dp_sgd import Schedule

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
        return Schedule.of(
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


def build_mechanism(
    ctx: click.Context,
    *,
    sigma: float | None,
    sensitivity: float,
    compositions: float,
    event_file: Path | None,
    relation: str | None,
    sigma_name: str = "sigma",
    **_: Any,
) -> Mechanism:
    """The mechanism the options describe (``sigma=None``: a calibration, the template has noise multiplier 1)."""
    if event_file is not None:
        k = compositions_count(compositions)
        names = [n for n in (sigma_name, "sensitivity", *DP_SGD_OPTIONS) if n in ctx.params]
        refuse_options(ctx, names, "--event")
        from dpkit.accountant.events import SelfComposedEvent

        event = _read_event(event_file, relation)
        return Mechanism(event if k == 1 else SelfComposedEvent(event, k), k, "event")
    if relation is not None and given(ctx, "relation"):
        raise click.UsageError("--relation applies to --event only")
    delta_ = accountant.check_positive("sensitivity", sensitivity)
    s = 1.0 if sigma is None else check_noise_scale(sigma_name, sigma)
    if not dp_sgd_given(ctx):
        k = compositions_count(compositions)
        return Mechanism(Ledger.homogeneous(delta_, s, compositions=k), k, "gaussian", delta_)
    schedule = schedule_of(ctx, compositions)
    nm = s if sigma is None else (math.inf if math.isinf(s) else s / delta_)
    return Mechanism(
        schedule.event(nm),
        schedule.steps,
        "dp-sgd",
        delta_,
        schedule.sampling_rate,
        schedule,
    )


def save_event(path: Path | None, target: Ledger | Event | None) -> Path | None:
    """Write ``target`` as a dp-accounting DpEvent JSON file at ``path`` (atomically: a complete file or none).

    Args:
        path: ``--save-event``, or None (nothing is written).
        target: A ledger or an event, or None where there is none (σ = 0 or inf at the ends: an error).

    Returns:
        ``path``, or None when no path was given.
    """
    if path is None:
        return None
    if target is None:
        raise ValueError("--save-event: no mechanism to write (the answer is no noise, or infinite noise)")
    import os
    import tempfile

    from dpkit.accountant.interop import to_dp_event_json

    if path.exists() and path.is_dir():
        raise ValueError(f"--save-event {str(path)!r} is a directory")
    event = target.event if isinstance(target, Ledger) else target
    text = to_dp_event_json(event, indent=2) + "\n"
    folder = path.parent if str(path.parent) else Path(".")
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
