"""What a function audit's table says of its verdict: the shape of the ROC against the claim, the power to see a
violation of it, and the caption that says why the verdict is what it is (the judgement's reason and diagnosis)."""

from __future__ import annotations

from typing import Any

from dpkit.audits.shapes import ShapeFamily
from dpkit.render import format_number

__all__ = ["shape_rows", "verdict_caption"]


def shape_rows(judgement: Any) -> list[list[str]]:
    """The table rows of the measured trade-off's shape against the claim, and the power to see a violation of it.

    Args:
        judgement: The audit's judgement (its ``shape``, possibly None, is read).

    Returns:
        The rows (label, value), none when the judgement read no shape.
    """
    shape = judgement.shape
    if shape is None:
        return []
    name = "μ" if shape.family == ShapeFamily.GAUSSIAN else "ε"
    lo, hi = shape.fit.interval
    power = (
        "— (nothing finite lies past the claim)"
        if shape.alternative is None
        else f"{format_number(shape.certify_power, 2)} / {format_number(shape.flag_power, 2)}"
    )
    return [
        [
            "shape of the ROC [interval]",
            f"{shape.family} {name} = {format_number(shape.fit.parameter, 4)} "
            f"[{format_number(lo, 4)}, {format_number(hi, 4)}]",
        ],
        ["… the claim allows", f"{name} <= {format_number(shape.allowed, 4)}"],
        # its ε at δ is the ε estimate's row (the same fitted shape): here only its ratio to the claim's
        ["… its ε ÷ the claim's", "—" if shape.ratio is None else f"{format_number(shape.ratio, 3)}×"],
        [f"power vs {format_number(shape.kappa)}× it: certified / flagged", power],
        ["trials that would certify", "—" if shape.trials is None else f"{shape.trials:,}"],
    ]


def verdict_caption(judgement: Any) -> str | None:
    """Why the verdict is what it is, and the diagnosis of a loss past the claim.

    The diagnosis comes only beside a violation or an inconclusive that points to one: the judgement never
    diagnoses under consistent.

    Args:
        judgement: The audit's judgement (its ``reason`` and ``diagnosis`` are read).

    Returns:
        The caption (one line each), or None when there is neither.
    """
    lines = [] if judgement.reason is None else [f"why: {judgement.reason}"]
    if judgement.diagnosis is not None:
        lines.append(f"diagnosis: {judgement.diagnosis}")
    return "\n".join(lines) or None
