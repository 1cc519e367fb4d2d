"""The widths of a command-line table's columns where its text does not fit the terminal unwrapped: every word
whole (:func:`fit_widths`, used by :func:`dpkit.render.print_table`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["fit_widths"]


def fit_widths(columns: Sequence[Sequence[str]], room: int) -> list[int] | None:
    """The width of each column's text in a table ``room`` cells wide (padding and borders left out) such that no
    word is broken: every column gets at least its longest word; the first column (the labels) gets its whole width
    where the others still get their longest words beside it, and so does any column no wider unwrapped than an equal
    share of the room (a short value stays on one line); the others share what is left in proportion to how much
    wider each would be unwrapped, wrapping between their words.

    Args:
        columns: Each column's header and cells, as the text shown.
        room: The cells there are for the columns' text.

    Returns:
        The widths, or None where every column fits unwrapped (no width to impose) or where even the longest words
        do not fit side by side (a word must be broken wherever it is laid out; rich folds it).

    Examples:
        >>> fit_widths([["attack"], ["gaussian-lr-fitted"]], 40) is None  # fits unwrapped
        True
        >>> fit_widths([["power (bound an ideal attack certifies) / ratio"], ["0.4 [0.3, 0.5]"]], 30)
        [16, 14]
    """
    from rich.cells import cell_len

    natural = [max((cell_len(cell) for cell in column), default=0) for column in columns]
    words = [max((cell_len(w) for cell in column for w in cell.split()), default=0) for column in columns]
    if sum(natural) <= room or sum(words) > room:
        return None
    # the columns shown unwrapped: the first (the labels), where the others still get their longest words beside it
    whole: set[int] = {0} if natural[0] + sum(words[1:]) <= room else set()
    grown = True
    while grown:
        grown = False
        wrapped = [k for k in range(len(columns)) if k not in whole]
        left = room - sum(natural[k] for k in whole)
        for k in sorted(wrapped, key=lambda k: natural[k]):
            others = sum(words[j] for j in wrapped if j != k)
            if natural[k] <= left / len(wrapped) and left - natural[k] >= others:
                whole.add(k)
                grown = True
                break
    widths = [natural[k] if k in whole else words[k] for k in range(len(columns))]
    wrapped = [k for k in range(len(columns)) if k not in whole]
    spare, wants = room - sum(widths), {k: natural[k] - words[k] for k in wrapped}
    total = sum(wants.values())
    if total == 0 or spare <= 0:
        return widths
    shares = {k: min(spare * want / total, wants[k]) for k, want in wants.items()}
    for k, share in shares.items():
        widths[k] += math.floor(share)
    # the cells the floors left go to the largest remainders (each short of its unwrapped width)
    for k in sorted(shares, key=lambda k: math.floor(shares[k]) - shares[k])[: room - sum(widths)]:
        widths[k] += 1
    return widths
