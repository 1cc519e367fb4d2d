"""RDP curves of single mechanisms beyond the plain Gaussian: ε_R(α) at each order α > 1.

Four pure, vectorised functions, each an upper bound on the mechanism's Rényi divergence of order
α between the two worst neighbouring inputs, never below the truth (every value is rounded up
past its evaluation error):

* :func:`poisson_gaussian_rdp` — one step of the Poisson-subsampled Gaussian (add/remove-one), exact at integer
  orders and an upper bound within the first omitted term at fractional ones (Mironov, Talwar & Zhang 2019);
* :func:`sampled_without_replacement_gaussian_rdp` — b of n without replacement (replace-one; Wang, Balle &
  Kasiviswanathan 2019); :func:`laplace_rdp` (Mironov 2017, Prop. 6) and :func:`randomized_response_rdp`, exact.

Orders may be a number or a sequence/array of numbers (each > 1, ``inf`` allowed: the value
there is the pure-DP ε, or ``inf``); the result has the shape of ``orders``. Curves of composed
mechanisms add; convert with :func:`dpkit.accountant.rdp.rdp_epsilon`.
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Iterable

import numpy as np

from .validation import (
    ArgumentTypeError,
    check_count,
    check_extended_nonnegative,
    check_index,
    check_nonnegative,
    check_unit_interval,
)

__all__ = [
    "poisson_gaussian_rdp",
    "sampled_without_replacement_gaussian_rdp",
    "laplace_rdp",
    "randomized_response_rdp",
    "check_orders",
    "round_up_array",
]

_EPS = 2.0**-52
_LOG2 = math.log(2.0)
_LOG4 = math.log(4.0)

#: Integer orders up to this are summed exactly (α + 1 terms); above, a closed-form bound.
_POISSON_INT_CAP = 1 << 20
#: Fractional orders up to this use the MTZ series; above, the chord between integer orders.
_POISSON_FRAC_CAP = 4096
#: The MTZ series is stopped at most this many terms past ⌈α⌉ (Leibniz keeps it an upper bound).
_POISSON_FRAC_EXTRA = 1 << 16
#: Integer orders up to this get the exact-sum WBK bound; above, a closed-form bound.
_WOR_CAP = 4096
#: Up to this order WBK's terms use the forward differences (as dp-accounting; above, the cruder term).
_WOR_DIFF_CAP = 256
#: Largest relative error of a double evaluation of WBK's moments accepted before mpmath recomputes
#: them (the error bound is added either way: only tightness is at stake).
_MAX_RELATIVE_ERROR = 1e-8


# ----------------------------------------------------------------------------------------
# Arguments and rounding


def check_orders(orders: object) -> np.ndarray:
    """``orders`` as a float array of its own shape (a number gives a 0-d array); each > 1 or +inf.

    Args:
        orders: the Rényi orders α (a number or a sequence/array of numbers, each > 1, +inf allowed).

    Returns:
        The float array.

    Raises:
        ArgumentTypeError: orders not numbers, or a parameter of the wrong type.
        ValueError: an order NaN or not above 1.
    """
    if isinstance(orders, np.ndarray):
        shape: tuple[int, ...] = orders.shape
        items: list[object] = list(orders.ravel().tolist())
    elif isinstance(orders, numbers.Real) and not isinstance(orders, bool):
        shape, items = (), [orders]
    elif isinstance(orders, Iterable) and not isinstance(orders, (str, bytes)):
        items = list(orders)
        shape = (len(items),)
    else:
        raise ArgumentTypeError(f"orders must be a Rényi order > 1 or a sequence of them, got {orders!r}")
    out = np.empty(len(items), dtype=float)
    for i, v in enumerate(items):
        name = "orders" if shape == () else f"orders[{i}]"
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ArgumentTypeError(f"{name} must be a Rényi order > 1 (a real number or inf), got {v!r}")
        x = float(v)
        if math.isnan(x):
            raise ValueError(f"{name} must be a Rényi order > 1, got NaN")
        if not x > 1.0:
            raise ValueError(f"{name} must be a Rényi order > 1, got {x!r}")
        out[i] = x
    return out.reshape(shape)


def round_up_array(x: np.ndarray, relative: float | np.ndarray = 0.0) -> np.ndarray:
    """``x (1 + relative)`` moved two ulps towards +inf (0 becomes the smallest positive double).

    Args:
        x: the values.
        relative: a relative error to cover (>= 0); 0 by default.

    Returns:
        The rounded-up array.
    """
    y = np.asarray(x, dtype=float) * (1.0 + np.asarray(relative, dtype=float))
    for _ in range(2):
        y = np.nextafter(y, np.inf)
    return y


def _log_expm1(x: np.ndarray | float) -> np.ndarray:
    """log(e^x − 1) for x > 0, without overflow or cancellation."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        out: np.ndarray = x + np.log(-np.expm1(-x))
    return out


def _special() -> tuple[object, object]:
    from scipy.special import gammaln, log_ndtr  # imported where used: scipy costs 0.3 s at startup

    return gammaln, log_ndtr


def _log_sum_exp_with_error(terms: np.ndarray, errors: np.ndarray) -> tuple[float, float]:
    """log Σ e^{terms} and a bound on its error, given the absolute error of each term.

    Written m + log1p(Σ_{i≠k} e^{terms_i − m}) around the largest term m = terms_k, so that a sum
    dominated by one term (log(1 + x), x small) keeps the digits of x.
    """
    k = int(np.argmax(terms))
    m = float(terms[k])
    if not math.isfinite(m):
        return m, 0.0
    with np.errstate(under="ignore"):
        w = np.exp(terms - m)
    w[k] = 0.0
    rest = float(np.sum(w))
    value = m + math.log1p(rest)
    spread = float(errors[k]) + float(np.sum(w * (errors + _EPS * np.abs(terms - m))))
    err = spread / (1.0 + rest) + (terms.size + 4) * _EPS * rest / (1.0 + rest) + 2 * _EPS * (abs(value) + abs(m))
    return value, err


# ----------------------------------------------------------------------------------------
# Poisson-subsampled Gaussian (add/remove-one)


def poisson_gaussian_rdp(*, q: float, noise_multiplier: float, orders: object) -> np.ndarray:
    """RDP ε(α) of one step of the Poisson-subsampled Gaussian mechanism (add/remove-one relation).

    Each record enters the batch independently with probability ``q``; the batch's sum of
    ℓ2-clipped contributions (sensitivity Δ) is released with noise N(0, σ²Δ²),
    σ = ``noise_multiplier``. The value is ε(α) = log A_α / (α − 1), A_α = E_{z∼μ0}[(μ(z)/μ0(z))^α],
    μ0 = N(0, σ²), μ = (1 − q) μ0 + q N(1, σ²) (Mironov, Talwar & Zhang 2019, who also show
    this direction dominates the reverse one).

    Exact at integer α; at fractional α MTZ's two series summed with their signs (an upper bound by Leibniz,
    tighter than dp-accounting's), and convexity bounds at very large α: docs/FORMULAS.md §11.

    Edges: q = 0 or σ = inf → 0; σ = 0 (q > 0) → inf; q = 1 → α/(2σ²); α = inf → inf.

    Args:
        q: the sampling probability, in [0, 1].
        noise_multiplier: σ, the noise over the sensitivity (>= 0, +inf allowed).
        orders: the Rényi orders α (a number or a sequence/array of numbers, each > 1, +inf allowed).

    Returns:
        ε(α), the shape of ``orders``.

    Raises:
        ArgumentTypeError: orders not numbers, or a parameter of the wrong type.
        ValueError: q outside [0, 1], σ negative, or an order not above 1.
    """
    q = check_unit_interval("q", q)
    sigma = check_extended_nonnegative("noise_multiplier", noise_multiplier)
    alphas = check_orders(orders)
    flat = alphas.ravel()
    out = np.empty_like(flat)
    if q == 0.0 or sigma == math.inf:
        out[:] = 0.0
    elif sigma == 0.0:
        out[:] = math.inf
    elif q == 1.0:
        with np.errstate(over="ignore"):
            out[:] = round_up_array(flat / (2.0 * sigma * sigma), 4 * _EPS)
    else:
        out[:] = _poisson_general(q, sigma, flat)
    return out.reshape(alphas.shape)


def _poisson_general(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    out = np.full(alphas.shape, math.inf)
    finite = np.isfinite(alphas)
    log_a = np.full(alphas.shape, math.inf)
    cache: dict[int, float] = {}

    def at_integer(a: int) -> float:
        if a not in cache:
            cache[a] = _poisson_log_a_int(q, sigma, a) if a <= _POISSON_INT_CAP else _poisson_log_a_closed(q, sigma, a)
        return cache[a]

    integer = finite & (alphas == np.floor(alphas))
    for i in np.flatnonzero(integer):
        log_a[i] = at_integer(int(alphas[i]))
    frac = finite & ~integer
    series = frac & (alphas <= _POISSON_FRAC_CAP)
    if np.any(series):
        log_a[series] = _poisson_log_a_frac(q, sigma, alphas[series])
    for i in np.flatnonzero(frac & ~series):
        a = float(alphas[i])
        lo, hi = math.floor(a), math.ceil(a)
        if hi <= _POISSON_INT_CAP:  # the chord of a convex function lies above it
            t = a - lo
            log_a[i] = ((1.0 - t) * at_integer(lo) + t * at_integer(hi)) * (1.0 + 4 * _EPS)
        else:
            log_a[i] = _poisson_log_a_closed(q, sigma, a)
    out[finite] = np.maximum(log_a[finite], 0.0) / (alphas[finite] - 1.0)
    return round_up_array(out, 4 * _EPS)


def _poisson_log_a_closed(q: float, sigma: float, alpha: float) -> float:
    """Joint convexity: A_α <= (1 − q) + q e^{α(α−1)/(2σ²)} (an upper bound on log A_α, error included)."""
    x = alpha * (alpha - 1.0) / (2.0 * sigma * sigma)
    value = float(np.logaddexp(math.log1p(-q), math.log(q) + x))
    return value + 8 * _EPS * (abs(x) + abs(math.log(q)) + abs(value) + 1.0)


def _poisson_log_a_int(q: float, sigma: float, alpha: int) -> float:
    """Upper bound on log A_α at an integer order α >= 2: log1p of Σ_{j>=2} C(α,j)(1−q)^{α−j} q^j expm1(…)."""
    gammaln, _ = _special()
    j = np.arange(2, alpha + 1, dtype=float)
    g_a, g_j, g_r = gammaln(alpha + 1.0), gammaln(j + 1.0), gammaln(alpha - j + 1.0)  # type: ignore[operator]
    with np.errstate(over="ignore"):
        x = (j * j - j) / (2.0 * sigma * sigma)
    log_e = _log_expm1(x)
    p_q, p_1q = j * math.log(q), (alpha - j) * math.log1p(-q)
    terms = g_a - g_j - g_r + p_q + p_1q + log_e
    errors = 8 * _EPS * (abs(g_a) + np.abs(g_j) + np.abs(g_r) + np.abs(p_q) + np.abs(p_1q) + x + np.abs(log_e) + 1.0)
    log_am1, err = _log_sum_exp_with_error(terms, errors)
    value = float(np.logaddexp(0.0, log_am1 + err))
    return value * (1.0 + 4 * _EPS)


def _poisson_head(q: float, alpha: float) -> tuple[float, float]:
    """(1 − q)^α + α q (1 − q)^{α−1} − 1 (<= 0) and a bound on its absolute error.

    Written expm1((α − 1) ln(1 − q) + ln(1 + (α − 1) q)): the two logarithms cancel only to O(q²),
    so A_α − 1 (often ~q²) keeps its digits where 1 + (A_α − 1) in a double would lose them.
    """
    u, v = (alpha - 1.0) * math.log1p(-q), math.log1p((alpha - 1.0) * q)
    head = math.expm1(u + v)
    return head, 4 * _EPS * (abs(u) + abs(v)) + 4 * _EPS * abs(head)


def _hazard(x: np.ndarray, log_cdf: np.ndarray) -> np.ndarray:
    """A bound on d/dx log Φ(x) = φ(x)/Φ(x) (given log Φ(x)), with 1 % to spare (+ a floor of 1e-300)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        h = np.exp(-0.5 * x * x - 0.5 * math.log(2.0 * math.pi) - log_cdf)
    out: np.ndarray = np.where(np.isfinite(h), 1.01 * h + 1e-300, np.abs(x) + 1.0)
    return out


def _poisson_log_a_frac(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    """Upper bounds on log A_α at fractional orders α <= 4096 (MTZ 2019 §3.3, signed series).

    Term i of the lower series: C(α,i) q^i (1−q)^{α−i} e^{(i²−i)/(2σ²)} Φ((z0 − i)/σ); of the upper
    series the same with i ↔ j = α − i in the powers and e^{(j²−j)/(2σ²)} Φ((j − z0)/σ). C(α, i) > 0
    for i <= ⌈α⌉ and has sign (−1)^{i−⌈α⌉} above. For i >= ⌈α⌉ both log-magnitudes are convex in i
    (log|C(α,i)| = log Γ(i − α) − log Γ(i + 1) + const is, and log Φ'' > −1 offsets the quadratic)
    with differences tending to 0, hence non-increasing: the signed tail after a positive term is
    <= 0, after a negative term <= the magnitude of that term (added back).

    The terms i = 0, 1 of the lower series are kept apart as (1 − q)^α + α q (1 − q)^{α−1} − 1 minus
    their Φ-complements, so that A_α − 1 keeps its digits.
    """
    gammaln, log_ndtr = _special()
    m = alphas.size
    frac = alphas - np.floor(alphas)
    ceil = np.ceil(alphas)
    log_sin = np.log(np.sin(math.pi * np.minimum(frac, 1.0 - frac)))
    g_a = gammaln(alphas + 1.0)  # type: ignore[operator]
    lq, l1q = math.log(q), math.log1p(-q)
    z0 = sigma * sigma * (l1q - lq) + 0.5
    s2 = 2.0 * sigma * sigma
    heads = np.empty(m)
    head_errs = np.empty(m)
    y0, y1 = -z0 / sigma, (1.0 - z0) / sigma
    ld0, ld1 = float(log_ndtr(y0)), float(log_ndtr(y1))  # type: ignore[operator]
    shift = 8 * _EPS * (abs(z0) + 2.0) / sigma
    for r, alpha in enumerate(alphas):
        h, h_err = _poisson_head(q, float(alpha))
        l0 = alpha * l1q
        l1 = math.log(alpha) + lq + (alpha - 1.0) * l1q
        d0, d1 = math.exp(l0 + ld0), math.exp(l1 + ld1)
        d_err = d0 * (8 * _EPS * (abs(l0) + abs(ld0) + 1.0) + float(_hazard(np.asarray(y0), np.asarray(ld0))) * shift)
        d_err += d1 * (8 * _EPS * (abs(l1) + abs(ld1) + 1.0) + float(_hazard(np.asarray(y1), np.asarray(ld1))) * shift)
        heads[r] = h - d0 - d1
        head_errs[r] = h_err + 1.01 * d_err + 4 * _EPS * (abs(h) + d0 + d1)
    run_max = np.full(m, -math.inf)  # the running sums are scaled by e^{-run_max}
    run_sum = np.zeros(m)  # signed
    run_abs = np.zeros(m)  # of the magnitudes
    run_err = np.zeros(m)  # of magnitude × absolute error of the log-term
    result = np.empty(m)
    active = np.arange(m)
    start, block, n_terms = 0, 64, 0
    while active.size:
        a = alphas[active][:, None]
        i = np.arange(start, start + block, dtype=float)[None, :]
        j = a - i
        n_terms = start + block
        with np.errstate(all="ignore"):
            below = g_a[active][:, None] - gammaln(i + 1.0) - gammaln(j + 1.0)  # type: ignore[operator]
            above = (
                g_a[active][:, None]
                + gammaln(i - a)  # type: ignore[operator]
                - gammaln(i + 1.0)  # type: ignore[operator]
                + log_sin[active][:, None]
                - math.log(math.pi)
            )
            log_c = np.where(i < a, below, above)
            x0, x1 = (z0 - i) / sigma, (j - z0) / sigma
            e0, e1 = log_ndtr(x0), log_ndtr(x1)  # type: ignore[operator]
            p0 = [i * lq, j * l1q, (i * i - i) / s2]
            p1 = [j * lq, i * l1q, (j * j - j) / s2]
            t0 = log_c + p0[0] + p0[1] + p0[2] + e0
            t1 = log_c + p1[0] + p1[1] + p1[2] + e1
            base = 6 * _EPS * (2 * np.abs(g_a[active][:, None]) + 2 * np.abs(i * i) + np.abs(j * j) + 8.0)
            base += 8 * _EPS * np.abs(log_c)
            sh = 6 * _EPS * (abs(z0) + np.abs(i) + np.abs(j) + 1.0) / sigma
            err0 = base + 8 * _EPS * (np.abs(p0[0]) + np.abs(p0[1]) + np.abs(p0[2]) + np.abs(e0)) + _hazard(x0, e0) * sh
            err1 = base + 8 * _EPS * (np.abs(p1[0]) + np.abs(p1[1]) + np.abs(p1[2]) + np.abs(e1)) + _hazard(x1, e1) * sh
        if start == 0:
            t0[:, :2] = -math.inf
            err0[:, :2] = 0.0
        # sign of C(α, i): + up to ⌈α⌉, then alternating
        past = np.maximum(i - ceil[active][:, None], 0.0)
        sign = np.where(past % 2 == 0, 1.0, -1.0)
        mag = np.logaddexp(t0, t1)  # log(|t0_i| + |t1_i|): the magnitude of term i
        new_max = np.maximum(run_max[active], np.max(mag, axis=1))
        with np.errstate(invalid="ignore"):
            carry = np.where(np.isfinite(run_max[active]), np.exp(run_max[active] - new_max), 0.0)
        w0, w1 = np.exp(t0 - new_max[:, None]), np.exp(t1 - new_max[:, None])
        w = w0 + w1
        run_sum[active] = run_sum[active] * carry + np.sum(sign * w, axis=1)
        run_abs[active] = run_abs[active] * carry + np.sum(w, axis=1)
        run_err[active] = run_err[active] * carry + np.sum(w0 * err0 + w1 * err1, axis=1)
        run_max[active] = new_max
        last = start + block - 1
        last_sign = sign[:, -1]
        last_w = w[:, -1]
        # after a negative last term the truth lies below the partial sum + that term's magnitude
        upper = run_sum[active] + np.where(last_sign < 0, last_w, 0.0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            am1 = heads[active] + np.exp(run_max[active]) * upper
            converged = last_w * np.exp(run_max[active]) <= 2.0**-50 * np.abs(am1)
        done = (last >= ceil[active] + 1) & (converged | (last >= ceil[active] + _POISSON_FRAC_EXTRA))
        for k in np.flatnonzero(done):
            r = active[k]
            rest = float(upper[k])
            if not rest > 0.0:  # cannot happen in exact arithmetic: the terms up to ⌈α⌉ dominate
                rest = float(run_abs[r])
            log_rest = run_max[r] + math.log(rest)
            rest_err = (run_err[r] + (n_terms + 8) * _EPS * run_abs[r]) / rest
            result[r] = _log_a_from_parts(heads[r], head_errs[r], log_rest, rest_err + 2 * _EPS * abs(log_rest))
        active = active[~done]
        start += block
        block = min(2 * block, 8192)
    return result


def _log_a_from_parts(head: float, head_err: float, log_rest: float, rest_err: float) -> float:
    """Upper bound on log A, A = 1 + head + e^{log_rest}, given absolute errors of head and log_rest."""
    if log_rest < 0.0:
        rest = math.exp(log_rest)
        am1 = head + rest + head_err + rest * math.expm1(rest_err) + 4 * _EPS * (abs(head) + rest)
        return math.log1p(max(am1, 0.0)) * (1.0 + 4 * _EPS)
    one_plus_head = 1.0 + head + head_err
    value = float(np.logaddexp(log_rest, math.log(one_plus_head))) if one_plus_head > 0.0 else log_rest
    return value + rest_err + 4 * _EPS * abs(value)


# ----------------------------------------------------------------------------------------
# Sampling without replacement (replace-one), Wang, Balle & Kasiviswanathan 2019


def sampled_without_replacement_gaussian_rdp(
    *, population: int, batch: int, noise_multiplier: float, orders: object
) -> np.ndarray:
    """RDP ε(α) of one step of the Gaussian mechanism on a batch of b out of n drawn without replacement.

    Replace-one relation (n is public): the batch is a uniform subset of size b = ``batch`` of the
    n = ``population`` records, and its sum is released with noise N(0, σ²Δ²), σ =
    ``noise_multiplier``, Δ the ℓ2 sensitivity *under replace-one* of the released sum (2C for
    per-record gradients clipped at C). The bound is Theorem 27 of Wang, Balle & Kasiviswanathan
    (AISTATS 2019) with base curve ε(α) = α/(2σ²), q = b/n, as dp-accounting evaluates it, at every α > 1
    (the sum, its interpolation and closed form: docs/FORMULAS.md §11), capped by the unsubsampled α/(2σ²).

    Edges: b = 0 or σ = inf → 0; σ = 0 (b > 0) → inf; b = n → α/(2σ²); α = inf → inf.

    Args:
        population: n, the number of records (an integer >= 1).
        batch: b, the batch size (an integer, 0 <= b <= n).
        noise_multiplier: σ, the noise over the replace-one sensitivity (>= 0, +inf allowed).
        orders: the Rényi orders α (a number or a sequence/array of numbers, each > 1, +inf allowed).

    Returns:
        ε(α), the shape of ``orders``.

    Raises:
        ArgumentTypeError: orders not numbers, or a parameter of the wrong type.
        ValueError: n below 1, b negative or above n, σ negative, or an order not above 1.
    """
    n = check_count("population", population)
    b = check_index("batch", batch)
    if b > n:
        raise ValueError(f"batch must be <= population ({n}), got {b}")
    sigma = check_extended_nonnegative("noise_multiplier", noise_multiplier)
    alphas = check_orders(orders)
    flat = alphas.ravel()
    out = np.empty_like(flat)
    if b == 0 or sigma == math.inf:
        out[:] = 0.0
    elif sigma == 0.0:
        out[:] = math.inf
    elif b == n:
        with np.errstate(over="ignore"):
            out[:] = round_up_array(flat / (2.0 * sigma * sigma), 4 * _EPS)
    else:
        out[:] = _wor_general(b / n, sigma, flat)
    return out.reshape(alphas.shape)


def _wor_general(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    out = np.full(alphas.shape, math.inf)
    finite = np.isfinite(alphas)
    lo, hi = np.floor(alphas[finite]), np.ceil(alphas[finite])
    cache: dict[int, float] = {}
    for a in np.unique(np.concatenate([lo, hi])).astype(int):
        cache[int(a)] = _wor_log_a_int(q, sigma, int(a))
    x = np.array([cache[int(v)] for v in lo])
    y = np.array([cache[int(v)] for v in hi])
    t = alphas[finite] - lo
    log_a = (1.0 - t) * x + t * y
    a = alphas[finite]
    with np.errstate(over="ignore"):
        gaussian = a * (a - 1.0) / (2.0 * sigma * sigma)
    log_a = np.minimum(log_a * (1.0 + 4 * _EPS), gaussian * (1.0 + 4 * _EPS))
    out[finite] = np.maximum(log_a, 0.0) / (a - 1.0)
    return round_up_array(out, 4 * _EPS)


def _wor_log_a_int(q: float, sigma: float, alpha: int) -> float:
    """Upper bound (error included) on WBK's log A_α at an integer order α >= 1."""
    if alpha == 1:
        return 0.0
    lq = math.log(q)
    if alpha > _WOR_CAP:
        x = (alpha - 1.0) / (2.0 * sigma * sigma)
        value = _LOG2 + alpha * float(np.logaddexp(0.0, lq + x))
        return value + 8 * _EPS * (abs(value) + alpha * (abs(lq) + x))
    gammaln, _ = _special()
    i = np.arange(2, alpha + 1, dtype=float)
    g_a, g_i, g_r = gammaln(alpha + 1.0), gammaln(i + 1.0), gammaln(alpha - i + 1.0)  # type: ignore[operator]
    log_c = g_a - g_i - g_r
    eps2 = 1.0 / (sigma * sigma)  # ε(2) = 2/(2σ²)
    with np.errstate(over="ignore"):
        cgf = (i - 1.0) * i / (2.0 * sigma * sigma)  # (i − 1) ε(i)
    inner = _LOG2 + cgf
    inner[0] = min(_LOG4 + float(_log_expm1(eps2)), eps2 + _LOG2)
    if alpha <= _WOR_DIFF_CAP:
        moments = _wor_log_even_moments(sigma)
        ii = i[1:].astype(int)
        lo = moments[2 * (ii // 2)]
        hi = moments[2 * ((ii + 1) // 2)]
        inner[1:] = np.minimum(_LOG4 + 0.5 * (lo + hi), inner[1:])
    terms = np.concatenate([[0.0], i * lq + log_c + inner])
    errors = np.concatenate(
        [[0.0], 8 * _EPS * (np.abs(i * lq) + abs(g_a) + np.abs(g_i) + np.abs(g_r) + np.abs(inner) + 2.0)]
    )
    value, err = _log_sum_exp_with_error(terms, errors)
    return value + 2 * err


@functools.lru_cache(maxsize=32)
def _wor_log_even_moments(sigma: float) -> np.ndarray:
    """Upper bounds on log E[(L − 1)^k] for even k <= 256 (index k; odd entries NaN).

    E[(L − 1)^k] = Σ_j C(k, j) (−1)^{k−j} e^{j(j−1)/(2σ²)} (E[L^j] for the Gaussian likelihood
    ratio), i.e. the k-th forward difference WBK use. Evaluated in doubles with an error bound;
    where that bound exceeds 1e-8 relative, with mpmath at the digits the cancellation costs,
    judged from the floor E[(L − 1)^k] >= (e^{1/σ²} − 1)^{k/2} (Lyapunov).
    """
    gammaln, _ = _special()
    kmax = _WOR_DIFF_CAP
    out = np.full(kmax + 1, math.nan)
    j_all = np.arange(kmax + 1, dtype=float)
    log_moment = j_all * (j_all - 1.0) / (2.0 * sigma * sigma)
    retry: list[tuple[int, float]] = []
    for k in range(2, kmax + 1, 2):
        j = j_all[: k + 1]
        lt = gammaln(k + 1.0) - gammaln(j + 1.0) - gammaln(k - j + 1.0) + log_moment[: k + 1]  # type: ignore[operator]
        mx = float(np.max(lt))
        w = np.exp(lt - mx)
        s = float(np.sum(np.where(j % 2 == 0, w, -w)))
        bound = _EPS * float(np.sum(w * (8 * np.abs(lt) + 4 * k + 8)))
        if s > 0.0 and bound <= _MAX_RELATIVE_ERROR * s:
            out[k] = mx + math.log(s) + math.log1p(2 * bound / s)
        else:
            floor = (k // 2) * float(_log_expm1(1.0 / (sigma * sigma)))
            retry.append((k, (mx + math.log(float(np.sum(w))) - floor) / math.log(10.0)))
    if retry:
        import mpmath  # imported where used: only large σ needs it

        digits = 30 + int(max(d for _, d in retry)) + 1
        with mpmath.workdps(digits):
            s2 = 2 * mpmath.mpf(sigma) ** 2
            moments = [mpmath.exp(mpmath.mpf(v * (v - 1)) / s2) for v in range(kmax + 1)]
            for k, _ in retry:
                total = mpmath.fsum((-1) ** (k - v) * math.comb(k, v) * moments[v] for v in range(k + 1))
                out[k] = float(mpmath.log(total)) * (1.0 + 4 * _EPS) + 4 * _EPS if total > 0 else math.nan
    return out


# ----------------------------------------------------------------------------------------
# Laplace and randomized response


def laplace_rdp(*, scale: float, sensitivity: float = 1.0, orders: object) -> np.ndarray:
    """RDP ε(α) of the Laplace mechanism, exact (Mironov 2017, Prop. 6).

    Noise Lap(0, b) with b = ``scale`` on a query of ℓ1 sensitivity Δ = ``sensitivity``; with
    ε = Δ/b (the pure-DP ε):

        ε(α) = (1/(α − 1)) log( α/(2α − 1) e^{(α−1)ε} + (α − 1)/(2α − 1) e^{−αε} ),   ε(∞) = ε.

    This is the divergence between Lap(0, b) and Lap(Δ, b) in one dimension; a d-dimensional
    shift of ℓ1 norm Δ gives at most the same (the curve is superadditive in the shift).
    Where αε is small the bracket minus 1 cancels to first order: it is then summed as the series
    α(α − 1) Σ_{n>=2} h_{n−1} εⁿ/n!, h_m = ((α − 1)^m − (−α)^m)/(2α − 1).

    Edges: Δ = 0 or b = inf → 0; b = 0 (Δ > 0) → inf.

    Args:
        scale: b, the Laplace scale (>= 0, +inf allowed).
        sensitivity: Δ, the ℓ1 sensitivity (>= 0); 1 by default.
        orders: the Rényi orders α (a number or a sequence/array of numbers, each > 1, +inf allowed).

    Returns:
        ε(α), the shape of ``orders``.

    Raises:
        ArgumentTypeError: orders not numbers, or a parameter of the wrong type.
        ValueError: b or Δ negative (Δ not finite), or an order not above 1.
    """
    b = check_extended_nonnegative("scale", scale)
    delta = check_nonnegative("sensitivity", sensitivity)
    alphas = check_orders(orders)
    flat = alphas.ravel()
    out = np.empty_like(flat)
    if delta == 0.0 or b == math.inf:
        out[:] = 0.0
    elif b == 0.0:
        out[:] = math.inf
    else:
        eps = float(round_up_array(np.asarray(delta / b)))
        out[:] = _laplace(eps, flat)
    return out.reshape(alphas.shape)


def _laplace(eps: float, alphas: np.ndarray) -> np.ndarray:
    out = np.full(alphas.shape, eps)
    finite = np.isfinite(alphas)
    if eps == math.inf:
        return np.full(alphas.shape, math.inf)
    a = alphas[finite]
    am1 = a - 1.0
    series = a * eps <= 0.5
    res = np.empty(a.shape)
    with np.errstate(over="ignore", under="ignore"):
        d = a[~series]
        x = (d - 1.0) * np.expm1((1.0 - 2.0 * d) * eps) / (2.0 * d - 1.0)
        res[~series] = eps + np.log1p(x) / (d - 1.0)
    if np.any(series):
        s_a = a[series]
        c = s_a * am1[series]
        # g_m = h_m εᵐ (bounded, as αε <= 1/2): g_0 = 0, g_1 = ε, g_{m+1} = −ε g_m + c ε² g_{m−1}
        g_prev, g = np.zeros(s_a.shape), np.full(s_a.shape, eps)
        total = np.zeros(s_a.shape)  # Σ_{n>=2} g_{n−1}/n!, so that the bracket − 1 = c ε total
        inv_fact = 0.5
        for n in range(2, 60):
            total += g * inv_fact
            g_prev, g = g, -eps * g + (c * eps * eps) * g_prev
            inv_fact /= n + 1
        total *= eps
        res[series] = np.log1p(c * total) / am1[series]
    out[finite] = round_up_array(np.maximum(res, 0.0), 64 * _EPS)
    return out


def randomized_response_rdp(*, epsilon: float, k: int = 2, orders: object) -> np.ndarray:
    """RDP ε(α) of k-ary randomized response, exact.

    The input is kept with probability p = e^ε/(e^ε + k − 1), each other value is output with
    probability r = 1/(e^ε + k − 1). Any two distinct inputs give output distributions
    P = (p, r, r, …) and Q = (r, p, r, …) (the same up to relabelling, so every neighbouring pair is
    a worst pair, and D_α(P‖Q) = D_α(Q‖P)):

        e^{(α−1)ε(α)} = p e^{(α−1)ε} + r e^{−(α−1)ε} + (k − 2) r = 1 + r (1 − e^{−(α−1)ε}) (e^{αε} − 1),

    the right-hand form free of cancellation, evaluated in log space. ε(∞) = ε.

    Edges: ε = 0 or k = 1 → 0; ε = inf → inf.

    Args:
        epsilon: the pure ε (>= 0, +inf allowed).
        k: the number of values (an integer >= 1); 2 by default.
        orders: the Rényi orders α (a number or a sequence/array of numbers, each > 1, +inf allowed).

    Returns:
        ε(α), the shape of ``orders``.

    Raises:
        ArgumentTypeError: orders not numbers, or a parameter of the wrong type.
        ValueError: ε negative, k below 1, or an order not above 1.
    """
    eps = check_extended_nonnegative("epsilon", epsilon)
    k = check_count("k", k)
    alphas = check_orders(orders)
    flat = alphas.ravel()
    if eps == 0.0 or k == 1:
        out = np.zeros(flat.shape)
    elif eps == math.inf:
        out = np.full(flat.shape, math.inf)
    else:
        out = np.full(flat.shape, eps)
        finite = np.isfinite(flat)
        a = flat[finite]
        log_r = -(eps + math.log1p((k - 1) * math.exp(-eps)))
        with np.errstate(divide="ignore"):
            s = log_r + np.log(-np.expm1(-(a - 1.0) * eps)) + _log_expm1(a * eps)
        out[finite] = round_up_array(np.logaddexp(0.0, s) / (a - 1.0), 32 * _EPS)
    return out.reshape(alphas.shape)
