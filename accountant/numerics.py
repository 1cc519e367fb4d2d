"""Conservative floating-point helpers shared by the accountant modules.

Two rules hold across :mod:`dpkit.accountant`:

* every reported ε, δ or σ is rounded in the conservative direction (ε, δ and σ up; the
  largest admissible μ or ρ down), so that no path reports less privacy loss than the truth;
* every root-find returns the *feasible* end of its final bracket, checked by one more
  evaluation, instead of the midpoint a solver happens to stop at.

Tolerance of the numbers: a computed δ carries a relative error well below
:func:`log_delta_margin`; targets are tightened by that margin before a root-find.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from scipy import optimize

__all__ = ["round_up", "round_down", "log_delta_margin", "conservative_delta", "feasible_root"]

#: Relative slack on δ absorbed before comparing a computed δ with a target. The double
#: evaluations in :mod:`dpkit.accountant.gdp` are accurate to ~1e-13 relative (mpmath takes over
#: where cancellation would lose more), so 1e-10 covers them with three digits to spare.
RELATIVE_DELTA_SLACK = 1e-10


def round_up(x: float, ulps: int = 4) -> float:
    """Return ``x`` moved ``ulps`` units in the last place towards +inf."""
    if not math.isfinite(x):
        return x
    for _ in range(ulps):
        x = math.nextafter(x, math.inf)
    return x


def round_down(x: float, ulps: int = 4) -> float:
    """Return ``x`` moved ``ulps`` units in the last place towards -inf (never below 0 for x >= 0)."""
    if not math.isfinite(x):
        return x
    nonneg = x >= 0.0
    for _ in range(ulps):
        x = math.nextafter(x, -math.inf)
    return max(x, 0.0) if nonneg else x


def log_delta_margin(log_delta: float) -> float:
    """Slack (in log δ) that a computed log δ must clear to be trusted as <= the target."""
    return RELATIVE_DELTA_SLACK * max(1.0, abs(log_delta))


def conservative_delta(log_delta: float) -> float:
    """δ = e^{log δ}, rounded up past the evaluation error of log δ and capped at 1 (0 for −inf)."""
    if log_delta == -math.inf:
        return 0.0
    log_delta = min(log_delta, 0.0)
    return min(1.0, round_up(math.exp(log_delta + log_delta_margin(log_delta))))


def feasible_root(
    g: Callable[[float], float], x_ok: float, x_bad: float, xtol: float = 1e-15
) -> float:
    """Return a point on the feasible side of the root of a monotone function.

    ``g`` must be monotone between ``x_ok`` (where ``g <= 0``: feasible) and ``x_bad``
    (where ``g > 0``). The result ``x`` satisfies ``g(x) <= 0`` (checked) and lies within a
    few ``xtol`` (relative) of the root. The caller's variable is typically a logarithm, so
    ``xtol`` is a relative precision of the underlying quantity.
    """
    g_ok, g_bad = g(x_ok), g(x_bad)
    if not g_ok <= 0.0:
        raise ArithmeticError(f"feasible_root: g({x_ok!r}) = {g_ok!r} is not feasible")
    if not g_bad > 0.0:
        return x_bad
    scale = max(1.0, abs(x_ok), abs(x_bad))
    r = optimize.brentq(g, x_ok, x_bad, xtol=xtol * scale, rtol=4 * 2.0**-52, maxiter=200)
    if g(r) <= 0.0:
        return r
    step = xtol * scale
    toward = 1.0 if x_ok > r else -1.0
    for _ in range(60):
        r2 = r + toward * step
        if (toward > 0 and r2 >= x_ok) or (toward < 0 and r2 <= x_ok):
            break
        if g(r2) <= 0.0:
            return r2
        step *= 2.0
    return x_ok
