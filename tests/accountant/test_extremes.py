"""Inputs far outside the working range get sound answers (ε = inf, δ = 1) or a clear refusal."""

from __future__ import annotations

import math

import pytest

from dpkit import accountant as a


@pytest.mark.parametrize("sigma", [1e-300, 1e-160])
def test_vanishing_noise_is_no_privacy_under_every_method(sigma: float) -> None:
    ledger = a.Ledger.homogeneous(1.0, sigma)
    cmp = a.compare_methods(ledger, 1e-5)
    for key in ("exact", "rdp", "rdp-mironov", "zcdp-rdp-optimal", "zcdp"):
        assert cmp.epsilons[key] == math.inf, key
    assert "use method 'exact'" in cmp.refusals["pld"]
    assert "epsilon < 1" in cmp.refusals["classic"]
    for method in ("exact", "rdp", "zcdp"):
        assert a.make_accountant(method).delta(ledger, 1.0).delta == 1.0


def test_huge_but_representable_mu_keeps_the_method_order() -> None:
    eps = a.compare_methods(a.Ledger.homogeneous(1.0, 1e-120), 1e-5).epsilons  # μ = 1e120, ε ≈ 5e239
    assert all(math.isfinite(eps[k]) for k in ("exact", "rdp", "rdp-mironov", "zcdp-rdp-optimal", "zcdp"))
    # Root-finding ε in log space has relative precision |ln ε|·2^-52 ≈ 1e-13 at ε ≈ 5e239, and
    # every method is ≈ μ²/2 to that precision: the order holds up to it.
    tol = 1 + 1e-12
    assert eps["exact"] <= eps["rdp"] * tol and eps["rdp"] <= eps["rdp-mironov"] <= eps["zcdp"]
    assert eps["exact"] >= 0.5e240 * (1 - 1e-12)  # ≈ μ²/2


def test_gdp_beyond_overflow_is_conservative() -> None:
    assert a.gdp_epsilon(1e300, 1e-5) == math.inf
    assert a.gdp_delta(1e300, 1.0) == 1.0


def test_pld_refuses_mu_beyond_its_range_but_not_below() -> None:
    with pytest.raises(ValueError, match="mu = 100000 "):
        a.gaussian_epsilon(1e-5, 1e-5, method="pld")
    eps = a.gaussian_epsilon(1.0001e-4, 1e-5, method="pld").epsilon  # μ just below 1e4 still works
    exact = a.gdp_epsilon(1 / 1.0001e-4, 1e-5)
    assert exact <= eps <= exact * (1 + 1e-4)


@pytest.mark.parametrize(
    "call,needle",
    [
        (lambda: a.rdp_epsilon(2.0, 1.0, 1e-5), "orders must be a sequence"),
        (lambda: a.rdp_delta([2.0], 1.0, 1.0), "values must be a sequence"),
        (lambda: a.make_accountant("rdp", orders=["a"]), "orders[0]"),
        (lambda: a.make_accountant("rdp", orders=[0.5, 2.0]), "orders[0] = 0.5"),
        (lambda: a.RdpAccountant(conversion_name="improved", orders=(2.0, 1.0)), "orders[1] = 1.0"),
    ],
)
def test_rdp_orders_are_validated_at_the_boundary(call, needle: str) -> None:  # noqa: ANN001
    with pytest.raises(ValueError) as err:
        call()
    assert needle in str(err.value)
