"""Independent high-precision references for the accountant tests.

Plain mpmath helpers written from the formulas in the literature, *not* from
:mod:`dpkit.accountant`: nothing here imports the package under test. Every function works at
``DPS`` (50) significant digits unless told otherwise, and returns mpmath numbers.
"""

from __future__ import annotations

import mpmath

DPS = 50

#: The accountant documents that a reported δ may exceed the true value by a relative slack
#: of 1e-10 · max(1, |ln δ|) (dpkit.accountant.numerics.RELATIVE_DELTA_SLACK); tests allow twice it.
DOCUMENTED_DELTA_SLACK = 1e-10


def delta_slack(delta: float) -> float:
    """Allowed relative excess of a reported δ over the exact value: 2·1e-10·max(1, |ln δ|)."""
    import math

    return 2 * DOCUMENTED_DELTA_SLACK * max(1.0, abs(math.log(delta))) if delta > 0 else 0.0


def mp(x: object) -> mpmath.mpf:
    return mpmath.mpf(x)


# --------------------------------------------------------------------------------------
# μ-GDP / analytic Gaussian (Balle & Wang 2018; Dong, Roth & Su 2019)
# --------------------------------------------------------------------------------------


def gdp_delta(epsilon: object, mu: object, dps: int = DPS) -> mpmath.mpf:
    """δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) with ``dps`` correct significant digits.

    The working precision is raised until the digits lost to the cancellation of the two
    terms still leave ``dps`` digits in the difference.
    """
    work = dps + 10
    for _ in range(8):
        with mpmath.workdps(work):
            e, m = mp(epsilon), mp(mu)
            first = mpmath.ncdf(-e / m + m / 2)
            value = first - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
            if value > 0 and mpmath.log10(first / value) <= work - dps:
                return +value
        work *= 2
    raise ArithmeticError(f"reference gdp_delta did not converge for eps={epsilon!r}, mu={mu!r}")


def gdp_log_delta(epsilon: object, mu: object, dps: int = DPS) -> mpmath.mpf:
    with mpmath.workdps(dps):
        return mpmath.log(gdp_delta(epsilon, mu, dps))


def gaussian_mu(sensitivity: object, sigma: object, compositions: object = 1) -> mpmath.mpf:
    """μ of ``compositions`` Gaussian releases: Δ sqrt(K)/σ (exact, in mpmath)."""
    with mpmath.workdps(DPS):
        return mp(sensitivity) * mpmath.sqrt(mp(compositions)) / mp(sigma)


def ledger_mu(releases: list[tuple[object, object, object]]) -> mpmath.mpf:
    """sqrt(Σ countᵢ Δᵢ²/σᵢ²) for (Δ, σ, count) triples."""
    with mpmath.workdps(DPS):
        return mpmath.sqrt(mpmath.fsum(mp(c) * (mp(d) / mp(s)) ** 2 for d, s, c in releases))


def ledger_rho(releases: list[tuple[object, object, object]]) -> mpmath.mpf:
    with mpmath.workdps(DPS):
        return mpmath.fsum(mp(c) * (mp(d) / mp(s)) ** 2 for d, s, c in releases) / 2


# --------------------------------------------------------------------------------------
# zCDP and RDP conversions
# --------------------------------------------------------------------------------------


def bun_steinke_epsilon(rho: object, delta: object) -> mpmath.mpf:
    """Bun–Steinke (2016) Prop. 1.3: ε = ρ + 2 sqrt(ρ ln(1/δ))."""
    with mpmath.workdps(DPS):
        r = mp(rho)
        return r + 2 * mpmath.sqrt(r * mpmath.log(1 / mp(delta)))


def bun_steinke_rho(epsilon: object, delta: object) -> mpmath.mpf:
    """Largest ρ with ρ + 2 sqrt(ρ L) <= ε: sqrt(ρ) = sqrt(L + ε) − sqrt(L)."""
    with mpmath.workdps(DPS):
        L = mpmath.log(1 / mp(delta))
        return (mpmath.sqrt(L + mp(epsilon)) - mpmath.sqrt(L)) ** 2


def rdp_mironov_epsilon(order: object, value: object, delta: object) -> mpmath.mpf:
    """Mironov (2017) Prop. 3: ε = ε_R(α) + ln(1/δ)/(α − 1)."""
    with mpmath.workdps(DPS):
        a = mp(order)
        return mp(value) + mpmath.log(1 / mp(delta)) / (a - 1)


def rdp_improved_epsilon(order: object, value: object, delta: object) -> mpmath.mpf:
    """Canonne–Kamath–Steinke (2020) Prop. 12: ε = ε_R(α) + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)."""
    with mpmath.workdps(DPS):
        a = mp(order)
        return mp(value) + mpmath.log(1 - 1 / a) - (mpmath.log(mp(delta)) + mpmath.log(a)) / (a - 1)


def rdp_improved_log_delta(order: object, value: object, epsilon: object) -> mpmath.mpf:
    """log δ of Prop. 12 at one order: (α − 1)(ε_R(α) − ε + ln(1 − 1/α)) − ln α."""
    with mpmath.workdps(DPS):
        a = mp(order)
        return (a - 1) * (mp(value) - mp(epsilon) + mpmath.log(1 - 1 / a)) - mpmath.log(a)


def rdp_mironov_log_delta(order: object, value: object, epsilon: object) -> mpmath.mpf:
    with mpmath.workdps(DPS):
        return (mp(order) - 1) * (mp(value) - mp(epsilon))


def _minimise_over_log_am1(f, lo: float = -9.0, hi: float = 16.0, points: int = 600) -> mpmath.mpf:
    """min over α > 1 of f(α), searched in t = ln(α − 1): a dense scan, then golden section."""
    with mpmath.workdps(DPS):
        ts = [mp(lo) + (mp(hi) - mp(lo)) * i / (points - 1) for i in range(points)]
        vals = [f(1 + mpmath.exp(t)) for t in ts]
        i = min(range(points), key=lambda j: vals[j])
        a, b = ts[max(i - 1, 0)], ts[min(i + 1, points - 1)]
        invphi = (mpmath.sqrt(5) - 1) / 2
        c, d = b - invphi * (b - a), a + invphi * (b - a)
        fc, fd = f(1 + mpmath.exp(c)), f(1 + mpmath.exp(d))
        for _ in range(160):
            if fc < fd:
                b, d, fd = d, c, fc
                c = b - invphi * (b - a)
                fc = f(1 + mpmath.exp(c))
            else:
                a, c, fc = c, d, fd
                d = a + invphi * (b - a)
                fd = f(1 + mpmath.exp(d))
        return min(vals[i], fc, fd)


def linear_rdp_improved_epsilon(rho: object, delta: object) -> mpmath.mpf:
    """min over continuous α > 1 of Prop. 12 applied to the curve αρ (no KL shortcut)."""
    r, d = mp(rho), mp(delta)
    return _minimise_over_log_am1(lambda a: rdp_improved_epsilon(a, a * r, d))


def linear_rdp_improved_log_delta(rho: object, epsilon: object, lo: float = -9.0) -> mpmath.mpf:
    """min over α − 1 >= e^lo of the improved log δ(α) for the curve αρ."""
    r, e = mp(rho), mp(epsilon)
    return _minimise_over_log_am1(lambda a: rdp_improved_log_delta(a, a * r, e), lo=lo)


def kl_log_delta(value: object) -> mpmath.mpf:
    """Bretagnolle–Huber: log δ <= ½ ln(1 − e^{−ε_R(α)}) at every ε >= 0 (−inf when ε_R = 0)."""
    with mpmath.workdps(DPS):
        v = mp(value)
        return mpmath.ninf if v == 0 else mpmath.log(1 - mpmath.exp(-v)) / 2


def kl_shortcut_applies(values: list[object], delta: object) -> bool:
    """Bretagnolle–Huber: (0, δ)-DP when δ² >= 1 − e^{−ε_R(α)} for some α (ε_R(α) >= KL)."""
    with mpmath.workdps(DPS):
        return any(mp(delta) ** 2 >= 1 - mpmath.exp(-mp(v)) for v in values)


# --------------------------------------------------------------------------------------
# Classic Gaussian mechanism (Dwork & Roth 2014, Thm A.1) with basic composition
# --------------------------------------------------------------------------------------


def classic_sigma(epsilon: object, delta: object, sensitivity: object = 1, compositions: int = 1) -> mpmath.mpf:
    """σ = Δ sqrt(2 ln(1.25/δ')) / ε' with ε' = ε/K, δ' = δ/K."""
    with mpmath.workdps(DPS):
        k = mp(compositions)
        e1, d1 = mp(epsilon) / k, mp(delta) / k
        return mp(sensitivity) * mpmath.sqrt(2 * mpmath.log(mpmath.mpf("1.25") / d1)) / e1


def classic_composed_epsilon(releases: list[tuple[object, object, object]], delta: object) -> mpmath.mpf:
    """Σ countᵢ (Δᵢ/σᵢ) sqrt(2 ln(1.25 N/δ)) with N = Σ countᵢ (δ split evenly)."""
    with mpmath.workdps(DPS):
        n = sum(int(c) for _, _, c in releases)
        z = mpmath.sqrt(2 * mpmath.log(mpmath.mpf("1.25") * n / mp(delta)))
        return z * mpmath.fsum(mp(c) * mp(d) / mp(s) for d, s, c in releases)


#: (method, conversion) of every accountant with a fast path (closed form or one root-find);
#: PLD is tested separately with few examples.
FAST_METHODS = [
    ("exact", None),
    ("rdp", "improved"),
    ("rdp", "mironov"),
    ("zcdp", "bun-steinke"),
    ("zcdp", "rdp-optimal"),
    ("zcdp", "gaussian-exact"),
]
