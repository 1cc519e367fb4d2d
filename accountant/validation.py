"""Input validation at the API boundary.

Every public function of :mod:`dpkit.accountant` validates its arguments with these helpers
before doing any math, in the manner of scikit-learn's ``check_*`` functions: a value of the
wrong type (a string, a bool or None where a number is expected) raises :class:`ArgumentTypeError`,
a :class:`TypeError`; a value of the right type but out of range (NaN, ±inf, a negative count)
raises :class:`ValueError`. Each message names the parameter and repeats the value. Inside the
package, values are then trusted.

:class:`ArgumentTypeError` also derives from :class:`ValueError` (as numpy's ``AxisError`` derives
from both ``ValueError`` and ``IndexError``), so code written when every bad argument was a
``ValueError`` — the command line's ``error:`` lines, the config loader — keeps catching it.
"""

from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Sequence
from typing import TypeVar

import numpy as np

__all__ = [
    "ArgumentTypeError",
    "check_real",
    "check_positive",
    "check_member",
    "check_nonnegative",
    "check_probability",
    "check_unit_interval",
    "check_extended_nonnegative",
    "check_count",
    "check_index",
    "check_order",
    "check_choice",
    "enum_values",
    "check_same_length",
    "check_rng",
    "shown_int",
    "SuspiciousTargetWarning",
    "target_warnings",
]


_Choice = TypeVar("_Choice", bound=str)
_Member = TypeVar("_Member", bound=enum.StrEnum)


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type; the message names the parameter and repeats the value."""


class SuspiciousTargetWarning(UserWarning):
    """A valid target (ε, δ) that looks like a mistake: δ >= 0.5 (a vacuous target), or δ > ε (swapped?).
    The answer is still given: δ = 1, for one, is met by every mechanism."""


def target_warnings(epsilon: float, delta: float) -> list[str]:
    """Why a valid target (ε, δ) looks like a mistake (none: ``[]``, also for an invalid one, which its checks
    refuse): δ >= 0.5, or ε > 0 with δ > ε.

    Args:
        epsilon: the target ε.
        delta: the target δ.

    Returns:
        One message a reason, empty when the target looks fine (or is invalid).
    """
    out: list[str] = []
    if not (0.0 <= delta <= 1.0 and epsilon >= 0.0):
        return out
    if delta >= 0.5:
        out.append(
            f"delta = {delta:g} is at least 0.5: such a target allows publishing a user's data outright with "
            "probability delta, so it says little (delta is usually well below 1/n)"
        )
    if 0.0 < epsilon < delta:
        out.append(
            f"delta = {delta:g} is larger than epsilon = {epsilon:g}: were they swapped? (epsilon is usually "
            "between 0.1 and 10, delta well below 1/n)"
        )
    return out


def _real_or_nan(name: str, value: object) -> float:
    """``value`` as a float that is not NaN (±inf allowed), or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name} must be a real number, got {value!r}")
    x = float(value)
    if math.isnan(x):
        raise ValueError(f"{name} must be a number, got NaN")
    return x


def check_real(name: str, value: object) -> float:
    """Return ``value`` as a finite float, or raise naming ``name`` (TypeError / ValueError).

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as a finite float.

    Raises:
        ArgumentTypeError: not a real number (a string, a bool, None).
        ValueError: NaN or ±inf.
    """
    x = _real_or_nan(name, value)
    if math.isinf(x):
        raise ValueError(f"{name} must be finite, got {x}")
    return x


def check_positive(name: str, value: object) -> float:
    """Return ``value`` as a finite float > 0.

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as a finite float > 0.

    Raises:
        ArgumentTypeError: not a real number.
        ValueError: NaN, ±inf, zero or negative.
    """
    x = check_real(name, value)
    if x <= 0.0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    return x


def check_nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a finite float >= 0.

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as a finite float >= 0.

    Raises:
        ArgumentTypeError: not a real number.
        ValueError: NaN, ±inf or negative.
    """
    x = check_real(name, value)
    if x < 0.0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return x


def check_probability(name: str, value: object) -> float:
    """Return ``value`` as a float in the open interval (0, 1) (a δ).

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as a float in (0, 1).

    Raises:
        ArgumentTypeError: not a real number.
        ValueError: NaN or outside the open interval (0, 1).
    """
    x = check_real(name, value)
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {x!r}")
    return x


def check_unit_interval(name: str, value: object) -> float:
    """Return ``value`` as a float in the closed interval [0, 1] (a δ where 0 and 1 have an answer).

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as a float in [0, 1].

    Raises:
        ArgumentTypeError: not a real number.
        ValueError: NaN or outside [0, 1].
    """
    x = check_real(name, value)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must lie in the closed interval [0, 1], got {x!r}")
    return x


def check_noise_scale(name: str, value: object) -> float:
    """Return ``value`` as a float in (0, +inf]: a noise scale, where +inf (the release carries nothing) has an
    answer (ε = 0 at every δ).

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as a float in (0, +inf].

    Raises:
        ArgumentTypeError: not a real number.
        ValueError: NaN, zero or negative.
    """
    x = _real_or_nan(name, value)
    if not x > 0.0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    return x


def check_extended_nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a float in [0, +inf] (an ε where 0 and +inf have an answer).

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as a float in [0, +inf].

    Raises:
        ArgumentTypeError: not a real number.
        ValueError: NaN or negative.
    """
    x = _real_or_nan(name, value)
    if x < 0.0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return x


def check_count(name: str, value: object) -> int:
    """Return ``value`` as an int >= 1; integral floats such as ``3.0`` are accepted.

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as an int >= 1.

    Raises:
        ArgumentTypeError: not a real number (a bool, a string, None).
        ValueError: a non-integral or non-finite float, or below 1.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(f"{name} must be an integer >= 1, got {value!r}")
    if isinstance(value, numbers.Integral):
        k = int(value)
    elif isinstance(value, numbers.Real):
        x = float(value)
        if not math.isfinite(x) or not x.is_integer():
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        k = int(x)
    if k < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {shown_int(k)}")
    return k


def shown_int(value: int) -> str:
    """An integer for a message: with thousands separators, or as ``1.000e+400`` from 10¹⁵ on, whatever its size
    (Python refuses to print an int of more than 4300 digits; a 400-digit count is unreadable anyway).

    Args:
        value: the integer to show.

    Returns:
        The integer as text.
    """
    if abs(value) < 10**15:
        return f"{value:,}"
    from decimal import Decimal

    return f"{Decimal(value):.3e}"


def check_index(name: str, value: object) -> int:
    """Return ``value`` as an int >= 0 (an index, a seed, a count that may be zero); integral floats accepted.

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The value as an int >= 0.

    Raises:
        ArgumentTypeError: not an integer.
        ValueError: a non-integral float, or negative.
    """
    if not isinstance(value, bool) and isinstance(value, numbers.Real) and value == 0:
        return 0
    try:
        return check_count(name, value)
    except ArgumentTypeError:
        raise ArgumentTypeError(f"{name} must be an integer >= 0, got {value!r}") from None
    except ValueError:
        raise ValueError(f"{name} must be an integer >= 0, got {value!r}") from None


def check_order(name: str, value: object) -> float:
    """Return a Rényi order: a finite float > 1.

    Args:
        name: the parameter's name, for the message.
        value: the value to check.

    Returns:
        The order as a finite float > 1.

    Raises:
        ArgumentTypeError: not a real number.
        ValueError: NaN, ±inf, or not above 1.
    """
    x = check_real(name, value)
    if x <= 1.0:
        raise ValueError(f"{name} must be a Rényi order > 1, got {x!r}")
    return x


def check_choice(name: str, value: object, choices: Sequence[_Choice]) -> _Choice:
    """Return the element of ``choices`` equal to ``value`` (typed as the choices are, e.g. a Literal).

    Args:
        name: the parameter's name, for the message.
        value: the value to look up.
        choices: the accepted values.

    Returns:
        The element of ``choices`` equal to ``value``.

    Raises:
        ArgumentTypeError: ``value`` is not a string.
        ValueError: ``value`` is none of the choices.
    """
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    for choice in choices:
        if value == choice:
            return choice
    raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def check_member(name: str, value: object, vocabulary: type[_Member]) -> _Member:
    """Return the member of a vocabulary whose value ``value`` is: where a caller's string becomes the enum.

    The conversion at the public boundary (a function users call, the CLI, the facade): inside, the packages take the
    member. The message is :func:`check_choice`'s, naming the bad value and the choices.

    Args:
        name: the parameter's name, for the message.
        value: a member, or its value as a string.
        vocabulary: the string enum.

    Returns:
        The member equal to ``value``.

    Raises:
        ArgumentTypeError: ``value`` is not a string.
        ValueError: ``value`` is none of the vocabulary's values.
    """
    return vocabulary(check_choice(name, value, enum_values(vocabulary)))


def enum_values(vocabulary: type[enum.StrEnum]) -> tuple[str, ...]:
    """The values of a vocabulary, in the order of its members, as plain strings.

    For :func:`check_choice`, ``click.Choice`` and messages that list the choices: the members compare equal to
    these strings, and the strings print and repr the same as before the vocabulary became an enum.

    Args:
        vocabulary: A string enum.

    Returns:
        Each member's value.

    Args:
        vocabulary: the StrEnum.

    Returns:
        The values of its members, in order.
    """
    return tuple(member.value for member in vocabulary)


def check_same_length(name_a: str, a: Sequence[object], name_b: str, b: Sequence[object]) -> None:
    """Raise unless the two sequences have the same (non-zero) length.

    Args:
        name_a: the first sequence's name, for the message.
        a: the first sequence.
        name_b: the second sequence's name, for the message.
        b: the second sequence.

    Raises:
        ValueError: ``a`` is empty, or the lengths differ.
    """
    if len(a) == 0:
        raise ValueError(f"{name_a} must not be empty")
    if len(a) != len(b):
        raise ValueError(f"{name_a} and {name_b} must have the same length, got {len(a)} and {len(b)}")


def as_real_array(name: str, values: Sequence[object] | np.ndarray) -> np.ndarray:
    """Return a 1-d float array of finite values, or raise naming the first bad entry.

    Args:
        name: the parameter's name; an entry is named ``name[i]``.
        values: the values.

    Returns:
        A 1-d float array of the values.

    Raises:
        ArgumentTypeError: an entry is not a real number.
        ValueError: an entry is NaN or ±inf.
    """
    out = np.empty(len(values), dtype=float)
    for i, v in enumerate(values):
        out[i] = check_real(f"{name}[{i}]", v)
    return out


def check_rng(name: str, value: object) -> np.random.Generator:
    """Return ``value`` as a numpy ``Generator``: a Generator is used as is, an integer >= 0 seeds a new one.

    Args:
        name: the parameter's name, for the message.
        value: a numpy ``Generator`` or an integer seed >= 0.

    Returns:
        The ``Generator``.

    Raises:
        ArgumentTypeError: neither a Generator nor an integer.
        ValueError: a negative seed.
    """
    if isinstance(value, np.random.Generator):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if int(value) >= 0:
            return np.random.default_rng(int(value))
        raise ValueError(f"{name} must be a numpy Generator or an integer seed >= 0, got {value!r}")
    raise ArgumentTypeError(f"{name} must be a numpy Generator or an integer seed >= 0, got {value!r}")
