"""Bad input to every public function raises TypeError (wrong type) or ValueError (bad value) naming the parameter."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from dpkit.accountant import (
    ClassicAccountant,
    ExactAccountant,
    GaussianRelease,
    Ledger,
    PldAccountant,
    RdpAccountant,
    ZcdpAccountant,
    calibrate_ledger_scale,
    calibrate_sigma,
    check_count,
    check_positive,
    check_probability,
    classic_sigma,
    compare_methods,
    gaussian_delta,
    gaussian_epsilon,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    linear_rdp_delta,
    linear_rdp_epsilon,
    make_accountant,
    rdp_delta,
    rdp_epsilon,
    zcdp_delta,
    zcdp_epsilon,
    zcdp_rho,
)

NAN, INF = math.nan, math.inf
LEDGER = Ledger.homogeneous(1.0, 50.0, compositions=3)  # the classic bound accepts it at δ = 1e-5

NOT_REAL = ["1.0", None, True, [1.0], 1j]
NON_FINITE = [NAN, INF, -INF]
BAD_POSITIVE = [0.0, -0.0, -1.0, -1e-300, *NON_FINITE, *NOT_REAL]
BAD_NONNEGATIVE = [-1.0, -1e-300, *NON_FINITE, *NOT_REAL]
BAD_PROBABILITY = [0.0, 1.0, -0.1, 1.5, *NON_FINITE, *NOT_REAL]
BAD_UNIT = [-0.1, -1e-300, 1.5, 1.0 + 2**-52, *NON_FINITE, *NOT_REAL]  # δ where 0 and 1 have an answer
BAD_EXTENDED = [-1.0, -1e-300, NAN, -INF, *NOT_REAL]  # ε where 0 and +inf have an answer
BAD_NOISE = [0.0, -0.0, -1.0, -1e-300, NAN, -INF, *NOT_REAL]  # σ where +inf has an answer (nothing released)
BAD_COUNT = [0, -1, 2.5, 0.5, 1e-9, *NON_FINITE, "3", None, True]
BAD_CHOICE = ["bogus", "", "EXACT", None, 3]

KINDS = {
    "positive": BAD_POSITIVE,
    "nonnegative": BAD_NONNEGATIVE,
    "probability": BAD_PROBABILITY,
    "unit": BAD_UNIT,
    "extended": BAD_EXTENDED,
    "noise": BAD_NOISE,
    "count": BAD_COUNT,
}

#: (label, function, valid keyword arguments, {parameter: kind}). Parameter names are those of
#: the public signatures; the error message must contain them.
CASES: list[tuple[str, Callable[..., Any], dict[str, Any], dict[str, str]]] = [
    ("gdp_delta", gdp_delta, {"mu": 1.0, "epsilon": 1.0}, {"mu": "positive", "epsilon": "extended"}),
    ("gdp_epsilon", gdp_epsilon, {"mu": 1.0, "delta": 1e-5}, {"mu": "positive", "delta": "unit"}),
    ("gdp_mu", gdp_mu, {"epsilon": 1.0, "delta": 1e-5}, {"epsilon": "extended", "delta": "unit"}),
    ("rdp_epsilon", rdp_epsilon, {"orders": [2.0, 4.0], "values": [0.1, 0.2], "delta": 1e-5}, {"delta": "unit"}),
    ("rdp_delta", rdp_delta, {"orders": [2.0, 4.0], "values": [0.1, 0.2], "epsilon": 1.0}, {"epsilon": "extended"}),
    (
        "linear_rdp_epsilon",
        linear_rdp_epsilon,
        {"rho": 0.5, "delta": 1e-5},
        {"rho": "nonnegative", "delta": "unit"},
    ),
    ("linear_rdp_delta", linear_rdp_delta, {"rho": 0.5, "epsilon": 1.0}, {"rho": "nonnegative", "epsilon": "extended"}),
    ("zcdp_epsilon", zcdp_epsilon, {"rho": 0.5, "delta": 1e-5}, {"rho": "positive", "delta": "unit"}),
    ("zcdp_delta", zcdp_delta, {"rho": 0.5, "epsilon": 1.0}, {"rho": "positive", "epsilon": "extended"}),
    ("zcdp_rho", zcdp_rho, {"epsilon": 1.0, "delta": 1e-5}, {"epsilon": "extended", "delta": "unit"}),
    (
        "classic_sigma",
        classic_sigma,
        {"epsilon": 0.5, "delta": 1e-5, "sensitivity": 1.0, "compositions": 1},
        {"epsilon": "positive", "delta": "probability", "sensitivity": "positive", "compositions": "count"},
    ),
    (
        "GaussianRelease",
        GaussianRelease,
        {"name": "q", "sensitivity": 1.0, "sigma": 2.0, "count": 3},
        {"sensitivity": "positive", "sigma": "noise", "count": "count"},
    ),
    (
        "Ledger.homogeneous",
        Ledger.homogeneous,
        {"sensitivity": 1.0, "sigma": 2.0, "compositions": 3},
        {"sensitivity": "positive", "sigma": "noise", "compositions": "count"},
    ),
    ("Ledger.scaled", LEDGER.scaled, {"factor": 2.0}, {"factor": "positive"}),
    (
        "gaussian_epsilon",
        gaussian_epsilon,
        {"sigma": 5.0, "delta": 1e-5, "sensitivity": 1.0, "compositions": 3},
        {"sigma": "noise", "delta": "unit", "sensitivity": "positive", "compositions": "count"},
    ),
    (
        "gaussian_delta",
        gaussian_delta,
        {"sigma": 5.0, "epsilon": 1.0, "sensitivity": 1.0, "compositions": 3},
        {"sigma": "noise", "epsilon": "extended", "sensitivity": "positive", "compositions": "count"},
    ),
    (
        "calibrate_sigma",
        calibrate_sigma,
        {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0, "compositions": 3},
        {"epsilon": "extended", "delta": "unit", "sensitivity": "positive", "compositions": "count"},
    ),
    (
        "calibrate_ledger_scale",
        calibrate_ledger_scale,
        {"ledger": LEDGER, "epsilon": 1.0, "delta": 1e-5},
        {"epsilon": "positive", "delta": "probability"},
    ),
    ("compare_methods", compare_methods, {"ledger": LEDGER, "delta": 1e-5}, {"delta": "unit"}),
    ("check_positive", lambda value: check_positive("some_param", value), {"value": 1.0}, {"some_param": "positive"}),
    (
        "check_probability",
        lambda value: check_probability("some_param", value),
        {"value": 0.5},
        {"some_param": "probability"},
    ),
    ("check_count", lambda value: check_count("some_param", value), {"value": 2}, {"some_param": "count"}),
]

# Each accountant's epsilon(ledger, delta) and delta(ledger, epsilon).
for _method, _conv in [
    ("exact", None),
    ("pld", None),
    ("rdp", "improved"),
    ("rdp", "mironov"),
    ("zcdp", "bun-steinke"),
    ("zcdp", "rdp-optimal"),
    ("zcdp", "gaussian-exact"),
    ("classic", None),
]:
    _acc = make_accountant(_method, conversion=_conv)
    CASES.append((f"{_acc.label}.epsilon", _acc.epsilon, {"ledger": LEDGER, "delta": 1e-5}, {"delta": "unit"}))
    CASES.append((f"{_acc.label}.delta", _acc.delta, {"ledger": LEDGER, "epsilon": 1.0}, {"epsilon": "extended"}))


def _bad_cases() -> list[Any]:
    out = []
    for label, fn, good, params in CASES:
        for param, kind in params.items():
            for bad in KINDS[kind]:
                out.append(pytest.param(fn, good, param, bad, id=f"{label}-{param}={bad!r}"))
    return out


def _call(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if "some_param" in kwargs:  # the check_* helpers take the value positionally
        return fn(kwargs["some_param"])
    return fn(**kwargs)


@pytest.mark.parametrize(("label", "fn", "good"), [pytest.param(c[0], c[1], c[2], id=c[0]) for c in CASES])
def test_valid_arguments_are_accepted(label: str, fn: Callable[..., Any], good: dict[str, Any]) -> None:
    if "value" in good:
        fn(good["value"])
    else:
        fn(**good)


@pytest.mark.parametrize(("fn", "good", "param", "bad"), _bad_cases())
def test_bad_argument_raises_value_error_naming_it(
    fn: Callable[..., Any], good: dict[str, Any], param: str, bad: Any
) -> None:
    kwargs = {k: v for k, v in good.items() if k != "value"}
    kwargs[param] = bad
    wrong_type = any(bad is t for t in NOT_REAL) or isinstance(bad, str)
    with pytest.raises(TypeError if wrong_type else ValueError, match=re.escape(param)) as err:
        _call(fn, kwargs)
    # a wrong type is a TypeError (and, for older handlers, a ValueError); a bad value is never a TypeError
    assert isinstance(err.value, ValueError)
    assert isinstance(err.value, TypeError) == wrong_type


# ----------------------------------------------------------------------------------------
# Choices: methods and conversions
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", BAD_CHOICE)
@pytest.mark.parametrize(
    "call",
    [
        lambda c: rdp_epsilon([2.0], [0.1], 1e-5, conversion=c),
        lambda c: rdp_delta([2.0], [0.1], 1.0, conversion=c),
        lambda c: linear_rdp_epsilon(0.5, 1e-5, conversion=c),
        lambda c: linear_rdp_delta(0.5, 1.0, conversion=c),
        lambda c: zcdp_epsilon(0.5, 1e-5, conversion=c),
        lambda c: zcdp_delta(0.5, 1.0, conversion=c),
        lambda c: zcdp_rho(1.0, 1e-5, conversion=c),
        lambda c: RdpAccountant(conversion_name=c),
        lambda c: ZcdpAccountant(conversion_name=c),
        lambda c: (
            make_accountant("rdp", conversion=c) if c is not None else rdp_epsilon([2.0], [0.1], 1e-5, conversion=c)
        ),
        lambda c: make_accountant("zcdp", conversion=c) if c is not None else zcdp_epsilon(0.5, 1e-5, conversion=c),
        lambda c: (
            gaussian_epsilon(5.0, 1e-5, method="rdp", conversion=c)
            if c is not None
            else RdpAccountant(conversion_name=c)
        ),
        lambda c: (
            calibrate_sigma(1.0, 1e-5, method="zcdp", conversion=c)
            if c is not None
            else ZcdpAccountant(conversion_name=c)
        ),
    ],
)
def test_unknown_conversion(call: Callable[[Any], Any], bad: Any) -> None:
    # (conversion=None means "the default" in make_accountant and the wrappers, so there it is
    # exercised on the functions that require an explicit conversion.)
    with pytest.raises(ValueError, match="conversion"):
        call(bad)


@pytest.mark.parametrize("bad", BAD_CHOICE)
@pytest.mark.parametrize(
    "call",
    [
        lambda m: make_accountant(m),
        lambda m: gaussian_epsilon(5.0, 1e-5, method=m),
        lambda m: gaussian_delta(5.0, 1.0, method=m),
        lambda m: calibrate_sigma(1.0, 1e-5, method=m),
        lambda m: calibrate_ledger_scale(LEDGER, 1.0, 1e-5, method=m),
    ],
)
def test_unknown_method(call: Callable[[Any], Any], bad: Any) -> None:
    with pytest.raises(ValueError, match="method"):
        call(bad)


@pytest.mark.parametrize("method", ["exact", "pld", "classic"])
def test_conversion_given_to_a_method_without_conversions(method: str) -> None:
    with pytest.raises(ValueError, match="conversion"):
        make_accountant(method, conversion="improved")


@pytest.mark.parametrize(
    ("method", "option"),
    [("exact", "orders"), ("zcdp", "orders"), ("rdp", "value_discretization_interval"), ("pld", "foo")],
)
def test_unknown_option(method: str, option: str) -> None:
    with pytest.raises(ValueError, match=option):
        make_accountant(method, **{option: 1.0})


# ----------------------------------------------------------------------------------------
# RDP curves
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("orders", "values", "needle"),
    [
        ([1.0, 2.0], [0.1, 0.2], "orders"),
        ([0.5], [0.1], "orders"),
        ([-2.0], [0.1], "orders"),
        ([2.0, NAN], [0.1, 0.2], "orders[1]"),
        ([2.0, 3.0], [0.1, -0.2], "values"),
        ([2.0, 3.0], [0.1, NAN], "values[1]"),
        ([2.0, 3.0], [0.1], "same length"),
        ([2.0], [0.1, 0.2], "same length"),
        ([], [], "orders"),
        (["2"], [0.1], "orders[0]"),
        (np.array([2.0, 0.9]), np.array([0.1, 0.2]), "orders[1]"),
    ],
)
@pytest.mark.parametrize("fn", [lambda o, v: rdp_epsilon(o, v, 1e-5), lambda o, v: rdp_delta(o, v, 1.0)])
def test_bad_rdp_curve(orders: Any, values: Any, needle: str, fn: Callable[[Any, Any], Any]) -> None:
    with pytest.raises(ValueError, match=re.escape(needle)):
        fn(orders, values)


@pytest.mark.parametrize("orders", [[1.0, 2.0], [0.5], [NAN], [-INF], []])
def test_bad_orders_of_an_rdp_accountant(orders: list[float]) -> None:
    with pytest.raises(ValueError, match="orders"):
        make_accountant("rdp", orders=orders)  # refused at construction, not at first use


# ----------------------------------------------------------------------------------------
# Ledgers and accountants
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["", "   ", None, 3])
def test_release_name(bad: Any) -> None:
    with pytest.raises(ValueError, match="name"):
        GaussianRelease(bad, 1.0, 1.0)


@pytest.mark.parametrize("releases", [(), [], (1.0,), ({"name": "a"},)])
def test_ledger_contents(releases: Any) -> None:
    with pytest.raises(ValueError, match="release"):
        Ledger(releases)


@pytest.mark.parametrize("bad", [None, "ledger", 3.0, [GaussianRelease("a", 1.0, 1.0)]])
@pytest.mark.parametrize(
    "call",
    [
        lambda led: ExactAccountant().epsilon(led, 1e-5),
        lambda led: ClassicAccountant().delta(led, 1.0),
        lambda led: RdpAccountant().epsilon(led, 1e-5),
        lambda led: ZcdpAccountant().delta(led, 1.0),
        lambda led: PldAccountant().epsilon(led, 1e-5),
        lambda led: compare_methods(led, 1e-5),
        lambda led: calibrate_ledger_scale(led, 1.0, 1e-5),
    ],
)
def test_not_a_ledger(call: Callable[[Any], Any], bad: Any) -> None:
    with pytest.raises(ValueError, match="ledger"):
        call(bad)


@pytest.mark.parametrize("bad", BAD_POSITIVE)
def test_pld_discretization_interval(bad: Any) -> None:
    if bad is None:  # None selects the automatic interval
        assert make_accountant("pld", value_discretization_interval=None).value_discretization_interval is None
        return
    with pytest.raises(ValueError, match="value_discretization_interval"):
        make_accountant("pld", value_discretization_interval=bad)


def test_integral_values_are_accepted() -> None:
    # Integral floats and numpy scalars are fine where integers are expected.
    assert classic_sigma(0.5, 1e-5, sensitivity=1, compositions=3.0) == classic_sigma(
        0.5, 1e-5, sensitivity=1, compositions=3
    )
    assert gaussian_epsilon(
        np.float64(5.0), np.float64(1e-5), sensitivity=np.int64(2), compositions=np.int64(3)
    ) == gaussian_epsilon(5.0, 1e-5, sensitivity=2.0, compositions=3)


# --- keyword-only options: the positional trap of issue 16 -------------------------------------------------------

import inspect  # noqa: E402

import dpkit.accountant as _accountant  # noqa: E402


def test_calibrate_sigma_refuses_compositions_given_positionally() -> None:
    with pytest.raises(TypeError):
        _accountant.calibrate_sigma(1.0, 1e-5, 1000)  # type: ignore[misc]


def test_every_option_of_the_public_accountant_is_keyword_only() -> None:
    """No public function of dpkit.accountant takes an option (a parameter with a default) positionally past its
    first parameter (``make_accountant("rdp")``, ``paper_depth(1000, base=10)``), and none takes
    more than three positional parameters (rdp_epsilon: orders, values, δ; calibrate_ledger_scale: ledger, ε, δ)."""
    for name in _accountant.__all__:
        obj = getattr(_accountant, name)
        if not inspect.isfunction(obj):
            continue
        params = inspect.signature(obj).parameters.values()
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        assert all(p.default is p.empty for p in positional[1:]), f"{name} takes an option positionally"
        assert len(positional) <= 3, f"{name} takes {len(positional)} positional parameters"


def test_check_member_is_the_vocabularys_member_and_names_a_bad_value() -> None:
    from dpkit.accountant.accountants import AccountingMethod
    from dpkit.accountant.validation import ArgumentTypeError, check_member

    assert check_member("method", "pld", AccountingMethod) is AccountingMethod.PLD
    assert check_member("method", AccountingMethod.RDP, AccountingMethod) is AccountingMethod.RDP
    with pytest.raises(ValueError, match=re.escape("method must be one of exact, pld, rdp, zcdp, classic; got 'PLD'")):
        check_member("method", "PLD", AccountingMethod)
    with pytest.raises(ArgumentTypeError, match="method must be one of"):
        check_member("method", 3, AccountingMethod)
