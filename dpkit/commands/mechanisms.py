"""What ``calibrate``, ``epsilon``, ``delta``, ``methods`` and ``budgets`` account for, built from their options.

Three forms, one each:

* K Gaussian releases: ``--sigma`` (σ), ``--sensitivity`` (Δ), ``--compositions`` (K) — a Gaussian ledger;
* DP-SGD: the same with ``--sampling-rate Q`` — K steps of the Poisson-subsampled Gaussian of noise multiplier
  σ/Δ, ``SelfComposed(PoissonSampled(Q, Gaussian(σ/Δ)), K)`` (add/remove), as dp-accounting writes it;
* any mechanism: ``--event FILE.json`` — a dp-accounting ``DpEvent`` JSON (its ``to_named_tuple()`` form, with
  module and class names) or dpkit's own event JSON (``{"kind": …}``), composed K times; ``--relation`` says
  which neighbouring relation a DpEvent is read under (dpkit's own event file states its own).

The method defaults to ``exact`` for Gaussian releases and to ``pld`` for the other forms (the exact method
has no closed form for a subsampled release); an option of another form is an error naming it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dpkit import accountant
from dpkit.accountant import Ledger
from dpkit.accountant.validation import check_noise_scale

from .options import NUMBER, compositions_count, given, refuse_options

if TYPE_CHECKING:
    from dpkit.accountant.events import Event

__all__ = ["Mechanism", "mechanism_options", "build_mechanism", "default_method"]


@dataclass(frozen=True)
class Mechanism:
    """What is accounted for: ``target`` (a Gaussian ledger or an event), K, and how to say it."""

    target: Ledger | Event
    compositions: int
    form: str  # "gaussian", "dp-sgd" or "event"
    sensitivity: float = 1.0
    sampling_rate: float | None = None

    @property
    def gaussian(self) -> bool:
        return self.form == "gaussian"

    def describe(self, *, calibrating: bool = False) -> str:
        """One line; ``calibrating``: without the template's noise (σ = 1, noise multiplier 1)."""
        if calibrating and self.form == "dp-sgd":
            return f"{self.compositions} DP-SGD steps at Poisson sampling rate {self.sampling_rate:g}"
        if calibrating and self.form == "gaussian":
            return f"Δ = {self.sensitivity:g}, K = {self.compositions}"
        if isinstance(self.target, Ledger):
            r = self.target.releases[0]
            return f"σ = {r.sigma:g}, Δ = {r.sensitivity:g}, K = {r.count}"  # type: ignore[union-attr]
        from dpkit.accountant.events import describe

        return describe(self.target)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of the event (dpkit's form) for the non-Gaussian forms."""
        if isinstance(self.target, Ledger):
            return {}
        return {"event": self.target.to_dict(), "relation": self.target.relation}


def mechanism_options(f: Any) -> Any:
    """``--sampling-rate``, ``--event`` and ``--relation`` (the sensitivity and compositions are the commands')."""
    f = click.option(
        "--relation",
        type=click.Choice(("add_remove", "replace_one")),
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
    f = click.option(
        "--sampling-rate",
        type=NUMBER,
        default=None,
        help="Poisson sampling rate Q (DP-SGD): K steps of the subsampled Gaussian of noise multiplier σ/Δ.",
    )(f)
    return f


def default_method(method: str | None, mechanism_is_gaussian: bool) -> str:
    """The method given, or ``exact`` for Gaussian releases and ``pld`` otherwise."""
    if method is not None:
        return method
    return "exact" if mechanism_is_gaussian else "pld"


def _read_event(path: Path, relation: str | None) -> Event:
    from dpkit.accountant.interop import load_event
    from dpkit.algorithms.limits import check_releases
    from dpkit.loading import read_text_file

    event = load_event(read_text_file(path, "event file"), relation=relation)
    check_releases(f"event file {str(path)!r}", event)  # before it is accounted
    return event


def build_mechanism(
    ctx: click.Context,
    *,
    sigma: float | None,
    sensitivity: float,
    compositions: float,
    sampling_rate: float | None,
    event_file: Path | None,
    relation: str | None,
    sigma_name: str = "sigma",
) -> Mechanism:
    """The mechanism the options describe (``sigma=None``: a calibration, the template has noise multiplier 1)."""
    k = compositions_count(compositions)
    if event_file is not None:
        refuse_options(ctx, [n for n in (sigma_name, "sensitivity", "sampling_rate") if n in ctx.params], "--event")
        from dpkit.accountant.events import SelfComposedEvent

        event = _read_event(event_file, relation)
        return Mechanism(event if k == 1 else SelfComposedEvent(event, k), k, "event")
    if relation is not None and given(ctx, "relation"):
        raise click.UsageError("--relation applies to --event only")
    delta_ = accountant.check_positive("sensitivity", sensitivity)
    s = 1.0 if sigma is None else check_noise_scale(sigma_name, sigma)
    if sampling_rate is None:
        return Mechanism(Ledger.homogeneous(delta_, s, compositions=k), k, "gaussian", delta_)
    from dpkit.accountant.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
    from dpkit.accountant.validation import check_unit_interval

    q = check_unit_interval("sampling-rate", sampling_rate)
    nm = s if sigma is None else (math.inf if math.isinf(s) else s / delta_)
    step = PoissonSampledEvent(q, GaussianEvent(nm))
    return Mechanism(step if k == 1 else SelfComposedEvent(step, k), k, "dp-sgd", delta_, q)
