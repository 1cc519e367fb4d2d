"""The click types of the commands' numbers: a float, a list of floats, a sampling rate (``NUMBER``, …), a duration.

Each reads what the user typed and leaves the range checks to the API, whose messages name the value.
"""

from __future__ import annotations

from typing import Any

import click

__all__ = ["Count", "Duration", "Number", "NumberList", "Rate", "COUNT", "NUMBER", "NUMBER_LIST", "RATE"]


class Number(click.ParamType):
    """A float as typed; range checks are the API's (so its messages name the value)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """Read a number as click converts an option's value.

        Args:
            value: The text given (or a value already converted).
            param: The option, for the message.
            ctx: The click context, for the message.

        Returns:
            The float.

        Raises:
            click.BadParameter: Not a number.
        """
        if isinstance(value, float):
            return value
        try:
            return float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)


class Count(click.ParamType):
    """A count as typed: an integer is read exactly (never through a float, whose 1e29 is
    99999999999999991433150857216), a number in another notation (``1e3``) as the integer it names; anything else is
    passed on as a float, for the API's check to name."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | float:
        """Read a count as click converts an option's value.

        Args:
            value: The text given (or a value already converted).
            param: The option, for the message.
            ctx: The click context, for the message.

        Returns:
            The integer it names exactly, or a float where it names none (``2.5``, ``inf``, ``1e999``).

        Raises:
            click.BadParameter: Not a number.

        Examples:
            >>> Count().convert("1e29", None, None) == 10**29
            True
        """
        import decimal

        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        text = str(value).strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            exact = decimal.Decimal(text)
        except decimal.InvalidOperation:
            self.fail(f"{value!r} is not a number", param, ctx)
        if exact.is_finite() and exact.adjusted() <= 400 and exact == exact.to_integral_value():
            return int(exact)
        return float(text)


class NumberList(click.ParamType):
    """A comma-separated list of floats (``inf`` allowed; the API checks ranges).

    A list printed by Python or numpy pastes in as is: one pair of enclosing brackets is dropped, and
    without commas the items may be separated by white space (``[1.25 1.5 inf]``, numpy's print of an
    array, such as dp-accounting's RDP curve).
    """

    name = "list"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> list[float]:
        """Read a list of numbers as click converts an option's value.

        Args:
            value: The text given (or a value already converted).
            param: The option, for the message.
            ctx: The click context, for the message.

        Returns:
            The floats.

        Raises:
            click.BadParameter: An empty item, or an item that is not a number.

        Examples:
            >>> NumberList().convert("[1.25 1.5 inf]", None, None)
            [1.25, 1.5, inf]
        """
        if isinstance(value, list):
            return value
        text = str(value).strip()
        if len(text) >= 2 and (text[0], text[-1]) in (("[", "]"), ("(", ")")):
            text = text[1:-1].strip()
        items = [s.strip() for s in text.split(",")] if "," in text or not text else text.split()
        if any(not s for s in items):
            self.fail(f"{value!r} has an empty item", param, ctx)
        try:
            return [float(s) for s in items]
        except ValueError:
            self.fail(f"{value!r} is not a comma-separated list of numbers", param, ctx)


class Rate(click.ParamType):
    """A sampling rate as typed: a decimal, or an exact fraction ``256/60000`` (read by
    :func:`dpkit.accountant.dp_sgd.parse_rate`; the text is kept, so the fraction is printed back)."""

    name = "rate"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        """Check a sampling rate as click converts an option's value.

        Args:
            value: The text given (or a value already converted).
            param: The option, for the message.
            ctx: The click context, for the message.

        Returns:
            The text as typed (checked to be a rate).

        Raises:
            click.BadParameter: Neither a number nor a fraction B/N of whole numbers (the API checks the range).
        """
        from dpkit.accountant.dp_sgd import parse_rate

        try:
            parse_rate(value if isinstance(value, float) else str(value))
        except ValueError as err:
            self.fail(str(err).replace("sampling_rate ", "", 1), param, ctx)
        return str(value)


COUNT = Count()
NUMBER = Number()
NUMBER_LIST = NumberList()
RATE = Rate()


#: A duration's units, in seconds.
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


class Duration(click.ParamType):
    """A time in seconds, or a number with a unit s, m or h (``90``, ``10m``, ``1.5h``); ``inf`` for no cap."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        """Read a duration as click converts an option's value.

        Args:
            value: The text given (or a float already converted).
            param: The option, for the message.
            ctx: The click context, for the message.

        Returns:
            The duration in seconds (``inf`` for no cap).

        Raises:
            click.BadParameter: Not a duration, or not > 0.

        Examples:
            >>> Duration().convert("1.5h", None, None)
            5400.0
        """
        if isinstance(value, float):
            return value
        text = str(value).strip().lower()
        unit = 1.0
        if text[-1:] in _UNITS:
            unit, text = _UNITS[text[-1:]], text[:-1]
        try:
            seconds = float(text) * unit
        except ValueError:
            self.fail(f"{value!r} is not a duration (seconds, or a number with s, m or h: 90, 10m, 2h)", param, ctx)
        if not seconds > 0.0:  # NaN too
            self.fail(f"must be > 0, got {value!r}", param, ctx)
        return seconds
