"""dpkit's file formats as pydantic models with generated JSON schemas.

The files users write — report configurations (:class:`~dpkit.reports.config.ReportConfig`) and ledger files
(:class:`LedgerFile`: Gaussian or event releases under one key, ``release``) — and the file a report writes,
``report.json`` (:class:`~dpkit.reports.models.ReportJson`). :func:`read_ledger_file` reads and validates a ledger
file, every error one ``ValueError`` naming the key and the value; the schemas are generated from the models
(:func:`dpkit.reports.schemas.schemas`). A ledger file's form: see docs/reference/schemas.md.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)

from dpkit.accountant.ledger import EventRelease, GaussianRelease, Ledger
from dpkit.algorithms.limits import check_releases
from dpkit.data_files import parse_data, read_text_file, shown

from .messages import first_error

__all__ = ["LedgerFile", "ReleaseEntry", "read_ledger_file"]


def _positive(value: object) -> float:
    """An int or float (not a bool, not a string) that is finite and > 0, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"must be a finite number > 0, got {shown(value)}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a finite number > 0, got {shown(value)}")
    return float(value)


Positive = Annotated[float, Field(gt=0.0, allow_inf_nan=False), BeforeValidator(_positive)]


class ReleaseEntry(BaseModel):
    """One release of a ledger file: ``count`` Gaussian releases of ℓ2 sensitivity Δ and noise σ, or ``count``
    releases of any mechanism given as ``event``, in dpkit's event form (:meth:`dpkit.accountant.events.Event.to_dict`),
    e.g. ``{kind = "poisson_sampled", sampling_probability = 0.01, event = {kind = "gaussian",
    noise_multiplier = 1.1}}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: StrictStr
    sensitivity: Positive | None = None
    sigma: Positive | None = None
    event: dict[str, Any] | None = None
    count: Annotated[StrictInt, Field(ge=1)] = 1

    @model_validator(mode="after")
    def _one_form(self) -> ReleaseEntry:
        gaussian = self.sensitivity is not None or self.sigma is not None
        if self.event is not None:
            if gaussian:
                raise ValueError("is either sensitivity and sigma or an event, not both")
            from dpkit.accountant.events import Event

            Event.from_dict(self.event)  # a bad event is one error naming its place
        elif self.sensitivity is None or self.sigma is None:
            raise ValueError("needs sensitivity and sigma (a Gaussian release) or an event")
        return self

    def release(self) -> GaussianRelease | EventRelease:
        """The entry as the accountant's release.

        Returns:
            A :class:`~dpkit.accountant.ledger.GaussianRelease`, or an event release when the entry gives an event.
        """
        if self.event is not None:
            from dpkit.accountant.events import Event

            return EventRelease(self.name, Event.from_dict(self.event), self.count)
        assert self.sensitivity is not None and self.sigma is not None  # checked by _one_form
        return GaussianRelease(self.name, self.sensitivity, self.sigma, self.count)


class LedgerFile(BaseModel):
    """A ledger file: a non-empty list ``release`` of :class:`ReleaseEntry`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    release: Annotated[tuple[ReleaseEntry, ...], Field(min_length=1)]

    def ledger(self) -> Ledger:
        """The file's releases as a ledger.

        Returns:
            The :class:`~dpkit.accountant.ledger.Ledger`.
        """
        return Ledger(tuple(r.release() for r in self.release))


def read_ledger_file(path: str | Path) -> Ledger:
    """Read, validate and build the :class:`~dpkit.accountant.ledger.Ledger` of a JSON or TOML ledger file.

    Args:
        path: The file (``.toml`` is read as TOML, anything else as JSON).

    Returns:
        The ledger.

    Raises:
        ValueError: If the file cannot be read or parsed, holds no ``release`` table, or an entry does not fit
            (naming the key and the value).
    """
    p = Path(path)
    text = read_text_file(p, "ledger file")  # bounded: size cap, UTF-8, a regular file
    data = parse_data(text, toml=p.suffix.lower() == ".toml", what=f"ledger file {str(p)!r}")  # nesting bounded
    if not isinstance(data, dict):
        raise ValueError(f"ledger file {str(p)!r} must hold one table/object with the key 'release', got {shown(data)}")
    try:
        ledger = LedgerFile.model_validate(data).ledger()
    except ValidationError as err:
        raise ValueError(f"ledger file {str(p)!r}: {first_error(err)}") from None
    check_releases(f"ledger file {str(p)!r}", ledger)  # before it is accounted
    return ledger
