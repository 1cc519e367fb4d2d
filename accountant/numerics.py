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

__all__ = [
    "round_up",
    "round_down",
    "decimal_round",
    "log_delta_margin",
    "conservative_delta",
    "brent_root",
    "feasible_root",
    "bracket_monotone",
    "monotone_feasible_root",
    "feasible_secant",
    "times_count",
    "times_sqrt_count",
]

#: Relative slack on δ absorbed before comparing a computed δ with a target. The double
#: evaluations in :mod:`dpkit.accountant.gdp` are accurate to ~1e-13 relative (mpmath takes over
#: where cancellation would lose more), so 1e-10 covers them with three digits to spare.
RELATIVE_DELTA_SLACK = 1e-10


def round_up(x: float, *, ulps: int = 4) -> float:
    """Return ``x`` moved ``ulps`` units in the last place towards +inf.

    Args:
        x: the value (±inf and NaN are returned as they are).
        ulps: how many units in the last place; 4 by default.

    Returns:
        The value rounded up.
    """
    if not math.isfinite(x):
        return x
    for _ in range(ulps):
        x = math.nextafter(x, math.inf)
    return x


def round_down(x: float, *, ulps: int = 4) -> float:
    """Return ``x`` moved ``ulps`` units in the last place towards -inf (never below 0 for x >= 0).

    Args:
        x: the value (±inf and NaN are returned as they are).
        ulps: how many units in the last place; 4 by default.

    Returns:
        The value rounded down.
    """
    if not math.isfinite(x):
        return x
    nonneg = x >= 0.0
    for _ in range(ulps):
        x = math.nextafter(x, -math.inf)
    return max(x, 0.0) if nonneg else x


def decimal_round(x: float, digits: int, *, up: bool) -> float:
    """``x`` rounded to ``digits`` significant decimal digits towards +inf (``up``) or −inf: a bound printed short
    stays a bound (an upper end printed rounded up, a lower end rounded down). ±inf, NaN and 0 are returned as is.

    Args:
        x: the value.
        digits: the significant decimal digits kept.
        up: True rounds towards +inf, False towards −inf.

    Returns:
        The rounded value.
    """
    if x == 0.0 or not math.isfinite(x):
        return x
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    exponent = math.floor(math.log10(abs(x))) - digits + 1
    scaled = Decimal(x).scaleb(-exponent).to_integral_value(rounding=ROUND_CEILING if up else ROUND_FLOOR)
    out = float(scaled.scaleb(exponent))
    if up and out < x:  # the double nearest the decimal may lie a hair on the wrong side
        out = math.nextafter(out, math.inf)
    if not up and out > x:
        out = math.nextafter(out, -math.inf)
    return out


def times_count(count: int, x: float) -> float:
    """``count · x`` for an integer ``count`` >= 0 and ``x`` >= 0 (+inf allowed), whatever the count's size.

    ``count * x`` converts the count to a double first and raises OverflowError beyond 1.8e308 compositions;
    here such a count is multiplied exactly (as fractions) and rounded once, so that the product is the right
    double: +inf only where the product itself is beyond the doubles, 0 where ``x`` is 0.

    Args:
        count: the integer count (>= 0, any size).
        x: the factor (>= 0, +inf allowed).

    Returns:
        count · x as the nearest double (+inf beyond the doubles).
    """
    try:
        return float(count) * x
    except OverflowError:
        pass
    if x == 0.0 or math.isinf(x):
        return x
    from fractions import Fraction

    try:
        return float(Fraction(count) * Fraction(x))
    except OverflowError:
        return math.inf


def times_sqrt_count(count: int, x: float) -> float:
    """``√count · x`` (a composition's μ = √K·Δ/σ) for an integer ``count`` >= 1 of any size, as
    :func:`times_count`: beyond the doubles the square root is ⌈√count⌉ (rounded up: never a smaller μ).

    Args:
        count: the integer count (>= 1, any size).
        x: the factor (>= 0).

    Returns:
        √count · x.
    """
    try:
        return math.sqrt(count) * x
    except OverflowError:
        return times_count(math.isqrt(count - 1) + 1, x)


def log_delta_margin(log_delta: float) -> float:
    """Slack (in log δ) that a computed log δ must clear to be trusted as <= the target.

    Args:
        log_delta: the target log δ.

    Returns:
        The slack, a relative 1e-10 of |log δ| (at least 1e-10).
    """
    return RELATIVE_DELTA_SLACK * max(1.0, abs(log_delta))


def conservative_delta(log_delta: float) -> float:
    """δ = e^{log δ}, rounded up past the evaluation error of log δ and capped at 1 (0 for −inf).

    Args:
        log_delta: the computed log δ.

    Returns:
        δ, rounded up, in [0, 1].
    """
    if log_delta == -math.inf:
        return 0.0
    log_delta = min(log_delta, 0.0)
    return min(1.0, round_up(math.exp(log_delta + log_delta_margin(log_delta))))


def brent_root(
    f: Callable[[float], float], a: float, b: float, *, xtol: float, rtol: float, maxiter: int = 200
) -> float:
    """A root of ``f`` in the bracket [a, b] by Brent's method (Brent 1973, as in ``scipy.optimize.brentq``).

    Written out here because ``scipy.optimize`` costs 0.3 s to import, a hundred times what a
    calibration takes, and every ``dpkit calibrate`` would pay it. The steps are those of SciPy's
    ``brentq`` (inverse quadratic or secant step when it is short enough, bisection otherwise;
    stop when half the bracket is below ``(xtol + rtol |x|) / 2``), so the two agree to the last
    bit on the same function (tests/accountant/test_numerics.py holds them to it). ``f(a)`` and
    ``f(b)`` must have opposite signs (or one be 0); raises ``ArithmeticError`` otherwise, or if
    ``maxiter`` steps do not converge.

    Args:
        f: the function.
        a: one end of the bracket.
        b: the other end.
        xtol: the absolute tolerance on the root.
        rtol: the relative tolerance on the root.
        maxiter: the most steps; 200 by default.

    Returns:
        The root's estimate.

    Raises:
        ArithmeticError: f(a) and f(b) of the same sign, or no convergence within ``maxiter`` steps.
    """
    x_pre, x_cur = float(a), float(b)
    f_pre, f_cur = f(x_pre), f(x_cur)
    if f_pre * f_cur > 0.0:
        raise ArithmeticError(f"brent_root: f({a!r}) and f({b!r}) have the same sign")
    if f_pre == 0.0:
        return x_pre
    if f_cur == 0.0:
        return x_cur
    x_blk = f_blk = s_pre = s_cur = 0.0
    for _ in range(maxiter):
        if f_pre != 0.0 and f_cur != 0.0 and (math.copysign(1.0, f_pre) != math.copysign(1.0, f_cur)):
            x_blk, f_blk = x_pre, f_pre
            s_pre = s_cur = x_cur - x_pre
        if abs(f_blk) < abs(f_cur):  # keep x_cur the best point so far
            x_pre, x_cur, x_blk = x_cur, x_blk, x_cur
            f_pre, f_cur, f_blk = f_cur, f_blk, f_cur
        tol = (xtol + rtol * abs(x_cur)) / 2.0
        s_bis = (x_blk - x_cur) / 2.0
        if f_cur == 0.0 or abs(s_bis) < tol:
            return x_cur
        if abs(s_pre) > tol and abs(f_cur) < abs(f_pre):
            if x_pre == x_blk:  # secant
                s_try = -f_cur * (x_cur - x_pre) / (f_cur - f_pre)
            else:  # inverse quadratic interpolation
                d_pre = (f_pre - f_cur) / (x_pre - x_cur)
                d_blk = (f_blk - f_cur) / (x_blk - x_cur)
                s_try = -f_cur * (f_blk * d_blk - f_pre * d_pre) / (d_blk * d_pre * (f_blk - f_pre))
            if 2.0 * abs(s_try) < min(abs(s_pre), 3.0 * abs(s_bis) - tol):
                s_pre, s_cur = s_cur, s_try
            else:
                s_pre = s_cur = s_bis
        else:
            s_pre = s_cur = s_bis
        x_pre, f_pre = x_cur, f_cur
        x_cur += s_cur if abs(s_cur) > tol else (tol if s_bis > 0 else -tol)
        f_cur = f(x_cur)
    raise ArithmeticError(f"brent_root: no convergence in {maxiter} steps")


def feasible_root(g: Callable[[float], float], x_ok: float, x_bad: float, *, xtol: float = 1e-15) -> float:
    """Return a point on the feasible side of the root of a monotone function.

    ``g`` must be monotone between ``x_ok`` (where ``g <= 0``: feasible) and ``x_bad``
    (where ``g > 0``). The result ``x`` satisfies ``g(x) <= 0`` (checked) and lies within a
    few ``xtol`` (relative) of the root. The caller's variable is typically a logarithm, so
    ``xtol`` is a relative precision of the underlying quantity.

    Args:
        g: the monotone function.
        x_ok: a feasible point (g <= 0).
        x_bad: an infeasible point (g > 0; if it is feasible it is returned).
        xtol: the relative tolerance; 1e-15 by default.

    Returns:
        A feasible x near the root.

    Raises:
        ArithmeticError: ``x_ok`` not feasible.
    """
    g_ok, g_bad = g(x_ok), g(x_bad)
    if not g_ok <= 0.0:
        raise ArithmeticError(f"feasible_root: g({x_ok!r}) = {g_ok!r} is not feasible")
    if not g_bad > 0.0:
        return x_bad
    scale = max(1.0, abs(x_ok), abs(x_bad))
    r = brent_root(g, x_ok, x_bad, xtol=xtol * scale, rtol=4 * 2.0**-52, maxiter=200)
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


def bracket_monotone(
    g: Callable[[float], float],
    x0: float,
    *,
    increasing: bool,
    step: float,
    x_min: float = -math.inf,
    x_max: float = math.inf,
    maxiter: int = 200,
) -> tuple[float, float, float, float]:
    """Walk from a guess towards the root of a monotone function in doubling steps until the sign of ``g`` changes.

    The walk starts at ``x0`` clipped to [``x_min``, ``x_max``] and moves, by ``step``, 2·``step``, 4·``step``, …,
    towards where ``g`` changes sign (down where ``g > 0`` if ``g`` is ``increasing``, up otherwise). It stops at the
    first point on the other side, or when clipping keeps it where it was (the root lies beyond that end).

    Args:
        g: A monotone function of x; its feasible side is ``g <= 0``.
        x0: The guess to start from.
        increasing: Whether ``g`` increases with x.
        step: The first step (> 0).
        x_min: The smallest x tried.
        x_max: The largest x tried.
        maxiter: The most steps taken.

    Returns:
        ``(x, g(x), y, g(y))``: y the last point tried and x the one before. Either ``g(x)`` and ``g(y)`` lie on
        opposite sides of 0 (``g > 0`` on one, ``g <= 0`` on the other: x and y bracket the root) or ``x == y``, an
        end of the range still on the side of ``x0``.

    Raises:
        ArithmeticError: ``maxiter`` steps found no change of sign.
    """
    sign = 1.0 if increasing else -1.0
    x = min(max(x0, x_min), x_max)
    gx = g(x)
    for _ in range(maxiter):
        y = min(max(x + (-sign if gx > 0.0 else sign) * step, x_min), x_max)  # towards the root
        gy = g(y)
        if (gy > 0.0) != (gx > 0.0) or y == x:
            return x, gx, y, gy
        x, gx, step = y, gy, step * 2.0
    raise ArithmeticError(f"bracket_monotone: no change of sign in {maxiter} steps")


def monotone_feasible_root(
    g: Callable[[float], float],
    x0: float,
    *,
    increasing: bool,
    step: float,
    x_min: float = -math.inf,
    x_max: float = math.inf,
    xtol: float = 1e-15,
) -> float:
    """The feasible end (``g <= 0``) of the root of a monotone function, bracketed from a guess.

    :func:`bracket_monotone` from ``x0``, then :func:`feasible_root` on the bracket; an end of the range reached
    on the feasible side is the answer.

    Args:
        g: A monotone function of x; its feasible side is ``g <= 0``.
        x0: The guess to start from.
        increasing: Whether ``g`` increases with x.
        step: The first step of the bracketing walk (> 0).
        x_min: The smallest x tried.
        x_max: The largest x tried.
        xtol: The relative precision of :func:`feasible_root`.

    Returns:
        x with ``g(x) <= 0`` (checked), within a few ``xtol`` of the root when the root lies in the range.

    Raises:
        ArithmeticError: no x in the range is feasible (or the walk found no change of sign).
    """
    x, gx, y, gy = bracket_monotone(g, x0, increasing=increasing, step=step, x_min=x_min, x_max=x_max)
    if y == x:
        if gx > 0.0:
            raise ArithmeticError("monotone_feasible_root: no feasible point in range")
        return x
    ok, bad = (x, y) if gx <= 0.0 else (y, x)
    return feasible_root(g, ok, bad, xtol=xtol)


def feasible_secant(
    f: Callable[[float], float],
    x0: float,
    *,
    target: float,
    aim: float,
    accept: float,
    slope: float,
    increasing: bool,
    x_min: float = -math.inf,
    x_max: float = math.inf,
    xtol: float,
    maxiter: int = 12,
) -> tuple[float, float]:
    """A feasible point of a monotone function close to its target, by secant steps aimed just inside it.

    From ``x0``, secant steps towards ``f(x) = aim`` (``aim`` a little inside the feasible side ``f <= target``,
    the slope estimated from the last two points where it has the right sign, ``slope`` to start), clipped to
    [``x_min``, ``x_max``], until a point with ``accept <= f(x) <= target``, a step shorter than ``xtol`` after a
    feasible point, or ``maxiter`` steps. Where no step was feasible, a walk to the feasible side in doubling steps
    (from 10⁻³) finds one. Meant for an expensive f close to its root at ``x0`` (f is called once a step: memoise it
    where points repeat); the feasible point kept is the one furthest towards the root (the largest x if f
    increases).

    Args:
        f: A monotone function of x.
        x0: The start.
        target: The largest feasible value of f.
        aim: The value the secant steps aim at (<= ``target``).
        accept: The smallest value of f accepted at once (<= ``aim``).
        slope: The first estimate of df/dx (its sign that of ``increasing``).
        increasing: Whether f increases with x.
        x_min: The smallest x tried.
        x_max: The largest x tried.
        xtol: The shortest step taken (in x).
        maxiter: The most secant steps.

    Returns:
        ``(x, f(x))`` with ``f(x) <= target``.

    Raises:
        ArithmeticError: the walk to the feasible side found no feasible point in 60 doublings.
    """
    sign = 1.0 if increasing else -1.0

    def clip(x: float) -> float:
        return min(max(x, x_min), x_max)

    x = x0
    best: tuple[float, float] | None = None
    last: tuple[float, float] | None = None
    for _ in range(maxiter):
        fx = f(x)
        feasible = fx - target <= 0.0
        if feasible and (best is None or sign * (x - best[0]) > 0):
            best = (x, fx)
        if feasible and fx >= accept:
            break
        if last is not None and x != last[0] and (fx - last[1]) / (x - last[0]) * sign > 0.0:
            slope = (fx - last[1]) / (x - last[0])
        x_next = clip(x - (fx - aim) / slope)
        if abs(x_next - x) < xtol:
            if best is not None:
                break
            x_next = clip(x - sign * xtol)
        last, x = (x, fx), x_next
    if best is None:  # no feasible point yet: walk to the feasible side
        step = 1e-3
        for _ in range(60):
            x = clip(x - sign * step)
            fx = f(x)
            if fx <= target:
                return x, fx
            step *= 2.0
        raise ArithmeticError("feasible_secant: no feasible point found")
    return best
