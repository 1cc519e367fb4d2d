"""What ``calibrate``, ``epsilon``, ``delta`` and ``methods`` account for, built from their options.

Three forms, one each:

* K Gaussian releases: ``--sigma`` (σ), ``--sensitivity`` (Δ), ``--compositions`` (K) — a Gaussian ledger;
* DP-SGD in its users' terms: ``--dataset-size N --batch-size B`` or ``--sampling-rate Q``, and ``--epochs E`` or
  ``--steps T`` (:class:`dpkit.accountant.dp_sgd.SamplingSchedule`);
* any mechanism: ``--event FILE.json`` (a dp-accounting ``DpEvent`` or dpkit's own event JSON), composed K times.

``--save-event FILE.json`` writes the mechanism as a DpEvent file, which ``--event`` reads back. The method defaults
to ``exact`` for Gaussian releases and to ``pld`` for the other forms; an option of another form, or two options that
say the same thing, is an error naming them (the options: :mod:`dpkit.commands.dp_sgd_options`). The how-to "σ for a
DP-SGD run" (docs/how-to/dp-sgd.md) has the DP-SGD terms and the event files in full.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dpkit import accountant
from dpkit.accountant import Ledger
from dpkit.accountant.accountants import AccountingMethod
from dpkit.accountant.sensitivity import Relation, check_relation
from dpkit.accountant.validation import check_member, check_noise_scale

from .dp_sgd_options import DP_SGD_OPTIONS, dp_sgd_given, schedule_of
from .options import compositions_count
from .refusals import given, refuse_options

if TYPE_CHECKING:
    from dpkit.accountant.dp_sgd import SamplingSchedule
    from dpkit.accountant.events import Event

__all__ = ["Mechanism", "build_mechanism", "default_method", "save_event"]


@dataclass(frozen=True)
class Mechanism:
    """What is accounted for: ``target`` (a Gaussian ledger or an event), K, and how to say it."""

    target: Ledger | Event
    compositions: int
    form: str  # "gaussian", "dp-sgd" or "event"
    sensitivity: float = 1.0
    sampling_rate: float | None = None
    schedule: SamplingSchedule | None = None

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


def default_method(method: AccountingMethod | str | None, mechanism_is_gaussian: bool) -> AccountingMethod:
    """The method given (where ``--method``'s string becomes the member), or ``exact`` for Gaussian releases and
    ``pld`` otherwise.

    Args:
        method: ``--method``, or None when it was not given.
        mechanism_is_gaussian: Whether the mechanism is K Gaussian releases.

    Returns:
        The method to account with.
    """
    if method is not None:
        return check_member("method", method, AccountingMethod)
    return AccountingMethod.EXACT if mechanism_is_gaussian else AccountingMethod.PLD


def _read_event(path: Path, relation: Relation | None) -> Event:
    from dpkit.accountant.interop import load_event
    from dpkit.algorithms.limits import check_releases
    from dpkit.data_files import naming_file, read_text_file

    with naming_file(path, "event file"):
        event = load_event(read_text_file(path, "event file"), relation=relation)
    check_releases(f"event file {str(path)!r}", event)  # before it is accounted
    return event


def build_mechanism(
    ctx: click.Context,
    *,
    sigma: float | None,
    sensitivity: float,
    compositions: float,
    event_file: Path | None,
    relation: Relation | str | None,
    sigma_name: str = "sigma",
    **_: Any,
) -> Mechanism:
    """The mechanism the options describe: K Gaussian releases, DP-SGD, or an event file.

    Args:
        ctx: The command's click context (the DP-SGD options read from it).
        sigma: ``--sigma``, or None for a calibration (the template then has noise multiplier 1).
        sensitivity: ``--sensitivity`` Δ.
        compositions: ``--compositions`` K.
        event_file: ``--event``, or None.
        relation: ``--relation``, or None.
        sigma_name: The name σ goes by in the messages.
        **_: The command's other options (ignored).

    Returns:
        The :class:`Mechanism`.

    Raises:
        click.UsageError: An option that does not apply to the form given (``--relation`` without ``--event``,
            ``--sigma`` with it, …) or DP-SGD options that clash.
        ValueError: A bad value, or an event file that cannot be read.
    """
    if event_file is not None:
        k = compositions_count(compositions)
        names = [n for n in (sigma_name, "sensitivity", *DP_SGD_OPTIONS) if n in ctx.params]
        refuse_options(ctx, names, "--event")
        from dpkit.accountant.events import SelfComposedEvent

        event = _read_event(event_file, None if relation is None else check_relation(relation))
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
