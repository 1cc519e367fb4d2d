"""Edge inputs on the command line: an answer (or one `error:` line that says what the answer is), never a traceback."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from cli_runs import run, run_json

from dpkit import accountant

METHODS = [("exact", None), ("rdp", None), ("rdp", "mironov"), ("zcdp", None), ("zcdp", "rdp-optimal"), ("pld", None)]


def _method_args(method: str, conversion: str | None) -> list[str]:
    return ["--method", method] + (["--conversion", conversion] if conversion else [])


def _one_error(code: int, out: str, err: str) -> str:
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("method,conversion", METHODS)
def test_delta_at_the_largest_epsilon_is_zero(
    capsys: pytest.CaptureFixture[str], method: str, conversion: str | None
) -> None:
    obj = run_json(capsys, "delta", "--sigma", "3", "--epsilon", "1e308", *_method_args(method, conversion))
    assert obj["epsilon"] == 1e308
    assert 0.0 <= obj["delta"] <= (1e-15 if method == "pld" else 0.0)  # PLD: its documented tail floor


@pytest.mark.parametrize("method,conversion", METHODS + [("classic", None)])
def test_sigma_infinite_releases_nothing(
    capsys: pytest.CaptureFixture[str], method: str, conversion: str | None
) -> None:
    for delta in ("0", "1e-5", "1"):
        obj = run_json(capsys, "epsilon", "--sigma", "inf", "--delta", delta, *_method_args(method, conversion))
        assert obj["epsilon"] == 0.0 and obj["method"] == method
    for eps in ("0", "1", "inf"):
        obj = run_json(capsys, "delta", "--sigma", "inf", "--epsilon", eps, *_method_args(method, conversion))
        assert obj["delta"] == 0.0


def test_sigma_infinite_still_checks_the_other_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert "sensitivity" in _one_error(
        *run(capsys, "epsilon", "--sigma", "inf", "--delta", "1e-5", "--sensitivity", "0")
    )
    assert "delta" in _one_error(*run(capsys, "epsilon", "--sigma", "inf", "--delta", "2"))
    assert "compositions" in _one_error(*run(capsys, "methods", "--sigma", "inf", "--delta", "1e-5", "-k", "0"))


def test_methods_at_the_ends(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "methods", "--sigma", "inf", "--delta", "1e-5")
    assert set(obj["methods"]) == {k for k, _, _ in accountant.VARIANTS}
    assert all(v == 0.0 for v in obj["methods"].values()) and obj["mu"] == 0.0
    obj = run_json(capsys, "methods", "--sigma", "1e300", "--delta", "1e-5")  # dp-accounting overflowed here
    assert obj["refusals"] == {} and obj["methods"]["pld"] == obj["methods"]["exact"] == 0.0
    code, out, _ = run(capsys, "methods", "--sigma", "3", "--delta", "0")
    assert code == 0 and "nan" not in out  # no ratio inf/inf in the table


@pytest.mark.parametrize(
    "argv,sigma",
    [
        (["--epsilon", "inf", "--delta", "1e-5"], 0.0),
        (["--epsilon", "1", "--delta", "1"], 0.0),
        (["--epsilon", "1", "--delta", "0"], None),  # +inf (JSON has no Infinity)
    ],
)
def test_calibrate_at_the_ends_gives_the_answer(capsys: pytest.CaptureFixture[str], argv: list[str], sigma) -> None:
    assert run_json(capsys, "calibrate", *argv)["sigma"] == sigma
    exact = run_json(capsys, "calibrate", "--epsilon", "0", "--delta", "1e-5")  # δ(0) = 2Φ(μ/2) − 1
    assert exact["epsilon"] == 0.0 and exact["sigma"] == pytest.approx(1.0 / accountant.gdp_mu(0.0, 1e-5))
    line = _one_error(*run(capsys, "calibrate", "--epsilon", "0", "--delta", "1e-5", "--method", "zcdp", "--json"))
    assert "no finite sigma" in line


def test_budgets_at_the_ends_gives_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, "budgets", "--epsilons", "1,inf", "--compositions", "1", "--no-pld")["rows"]
    assert rows[1]["sigma"]["exact"] == 0.0 and rows[0]["sigma"]["exact"] > 0.0


CURVE = ["--orders", "2,4,inf", "--values", "0.1,0.3,1.5"]


def test_convert_rdp_with_order_infinity(capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "convert", "rdp", *CURVE, "--delta", "0")
    assert obj["epsilon"] == 1.5 and obj["order"] is None  # α = ∞ (JSON has no Infinity)
    for delta in ("1e-300", "1e-5", "0.3"):
        obj = run_json(capsys, "convert", "rdp", *CURVE, "--delta", delta)
        assert obj["epsilon"] <= 1.5
        assert obj["epsilon"] == accountant.rdp_epsilon([2, 4, math.inf], [0.1, 0.3, 1.5], float(delta)).epsilon
    for eps in ("1.5", "2", "1e308", "inf"):
        assert run_json(capsys, "convert", "rdp", *CURVE, "--epsilon", eps)["delta"] == 0.0
    obj = run_json(capsys, "convert", "rdp", *CURVE, "--epsilon", "0.5", "--method", "mironov")
    assert obj["delta"] == accountant.rdp_delta([2, 4, math.inf], [0.1, 0.3, 1.5], 0.5, conversion="mironov").delta
    code, out, _ = run(capsys, "convert", "rdp", *CURVE, "--epsilon", "2")
    assert code == 0 and out.strip() == "delta = 0 at epsilon = 2 (order α = inf, improved)"
    obj = run_json(capsys, "convert", "rdp", "--orders", "2,4", "--values", "0.1,inf", "--delta", "1e-5")
    assert obj["order"] == 2.0


def test_convert_rdp_pastes_a_dp_accounting_curve(capsys: pytest.CaptureFixture[str]) -> None:
    acc = dp_accounting.rdp.RdpAccountant()  # default orders: finite
    event = dp_accounting.PoissonSampledDpEvent(256 / 60000, dp_accounting.GaussianDpEvent(1.1))
    acc.compose(dp_accounting.SelfComposedDpEvent(event, 14062))
    ref = accountant.rdp_epsilon(acc.orders, acc.rdp, 1e-5).epsilon
    assert acc.get_epsilon(1e-5) <= ref
    pasted = [  # a Python list, numpy's own print (white space, line breaks) at full precision
        (str(acc.orders.tolist()), str(acc.rdp.tolist())),
        (
            np.array2string(acc.orders, floatmode="unique", threshold=10**6),
            np.array2string(acc.rdp, floatmode="unique", threshold=10**6),
        ),
    ]
    for orders, values in pasted:
        obj = run_json(capsys, "convert", "rdp", "--orders", orders, "--values", values, "--delta", "1e-5")
        assert obj["epsilon"] == ref


@pytest.mark.parametrize("conversion", accountant.ZCDP_CONVERSIONS)
def test_convert_zcdp_gives_delta_of_epsilon(capsys: pytest.CaptureFixture[str], conversion: str) -> None:
    for eps in ("0", "1", "3.5", "1e308", "inf"):
        obj = run_json(capsys, "convert", "zcdp", "--rho", "0.5", "--epsilon", eps, "--method", conversion)
        assert obj["delta"] == accountant.zcdp_delta(0.5, float(eps), conversion=conversion)  # type: ignore[arg-type]
        assert obj["rho"] == 0.5 and obj["method"] == conversion
    assert run_json(capsys, "convert", "zcdp", "--rho", "0.5", "--epsilon", "inf")["delta"] == 0.0
    assert run_json(capsys, "convert", "zcdp", "--rho", "0.5", "--epsilon", "1e308")["delta"] == 0.0
    code, out, _ = run(capsys, "convert", "zcdp", "--rho", "0.5", "--epsilon", "1")
    d = accountant.zcdp_delta(0.5, 1.0)
    assert code == 0 and out.strip() == f"delta = {d:.12g} at epsilon = 1 (bun-steinke)"


@pytest.mark.parametrize("sub", [["zcdp", "--rho", "0.5"], ["rdp", *CURVE]])
def test_convert_needs_exactly_one_of_delta_and_epsilon(capsys: pytest.CaptureFixture[str], sub: list[str]) -> None:
    for extra in ([], ["--delta", "1e-5", "--epsilon", "1"]):
        line = _one_error(*run(capsys, "convert", *sub, *extra, "--json"))
        assert "exactly one of --delta and --epsilon" in line
    assert "epsilon" in _one_error(*run(capsys, "convert", *sub, "--epsilon", "-1"))
