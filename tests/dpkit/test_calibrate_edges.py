"""``dpkit calibrate`` at its edges: pure ε-DP (δ = 0), a count of compositions past what doubles hold, and an ε so
small that the certified value is 0 — each a clear answer or a clear refusal, and no ε printed below its truth."""

from __future__ import annotations

import math

import mpmath
import pytest
from cli_runs import run, run_json
from hypothesis import given
from hypothesis import strategies as st

from dpkit.commands.options import MAX_COMPOSITIONS
from dpkit.render import certainty_cells


def _cells(out: str) -> list[str]:
    """The cells of the one row of a calibrate table."""
    [row] = [line for line in out.splitlines() if line.startswith("│")]
    return [c.strip() for c in row.strip("│").split("│")]


@pytest.mark.parametrize("method", ["exact", "pld", "rdp", "zcdp"])
def test_pure_dp_of_a_gaussian_is_answered_sigma_infinite_and_why(
    method: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """δ = 0 for K Gaussian releases is answered, not refused: the mathematics is defined — a Gaussian's δ(ε) is
    positive at every ε, so no finite σ meets it and σ = ∞ (nothing released) is the answer under every method.
    It is said in one sentence, and no certified ε is printed (a "certified ε 0" read as if a Gaussian met it)."""
    code, out, err = run(capsys, "calibrate", "--epsilon", "1", "--delta", "0", "--method", method)
    assert code == 0 and err == ""
    assert _cells(out)[1:] == ["∞", "∞", "—", "—"]
    assert "no finite σ gives pure ε-DP (δ = 0)" in " ".join(out.split())
    obj = run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "0", "--method", method)
    assert obj["sigma"] is None and obj["epsilon_upper"] is None and obj["epsilon"] is None
    assert obj["note"].startswith("no finite σ gives pure ε-DP")


def test_pure_dp_of_dp_sgd_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """DP-SGD at δ = 0 is refused (exit 2, one ``error:`` line saying why): its answer is a noise multiplier and
    a DP-SGD event to write (``--save-event``), of which σ = ∞ has none; its noise is Gaussian, so no finite one
    meets δ = 0 either. An event's calibration refuses δ = 0 too (dp-accounting's needs 0 < δ < 1), naming it."""
    dp_sgd = ("--dataset-size", "60000", "--batch-size", "256", "--epochs", "1")
    code, out, err = run(capsys, "calibrate", "--epsilon", "1", "--delta", "0", *dp_sgd)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("error: delta = 0 (pure ε-DP) is met by no finite noise multiplier")


@pytest.mark.parametrize(
    ("typed", "shown"),
    [("1e29", "100,000,000,000,000,000,000,000,000,000"), ("9007199254740993", "9,007,199,254,740,993")],
)
def test_compositions_past_what_doubles_hold_are_refused_naming_the_value(
    typed: str, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--compositions", typed)
    assert (code, out) == (2, "")
    limit = "compositions must be at most 2**53 = 9,007,199,254,740,992 (the counts a double holds exactly)"
    assert err == f"error: {limit}, got {shown}\n"


@pytest.mark.parametrize(("typed", "count"), [("1e3", 1000), (str(MAX_COMPOSITIONS), MAX_COMPOSITIONS), ("7", 7)])
def test_a_count_is_echoed_exactly(typed: str, count: int, capsys: pytest.CaptureFixture[str]) -> None:
    obj = run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--compositions", typed)
    assert obj["compositions"] == count
    code, out, _ = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "-k", typed)
    assert code == 0 and f"K = {count}" in out


def test_a_count_that_is_no_integer_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "epsilon", "--sigma", "3", "--delta", "1e-5", "--compositions", "2.5")
    assert code == 2 and err == "error: compositions must be an integer >= 1, got 2.5\n"


def _delta_of(sigma: float, epsilon: float) -> mpmath.mpf:
    """δ(ε) of one Gaussian release of sensitivity 1 and noise σ (Balle & Wang's exact curve, 50 digits)."""
    mpmath.mp.dps = 50
    mu, eps = 1 / mpmath.mpf(sigma), mpmath.mpf(epsilon)
    return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.e**eps * mpmath.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("epsilon", ["1e-300", "1e-100", "1e-20", "1e-8", "0.3"])
@pytest.mark.parametrize("method", ["exact", "pld"])
def test_a_tiny_epsilon_is_never_printed_below_its_truth(
    epsilon: str, method: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The certified ε printed holds at the σ printed (mpmath: δ(ε printed) <= δ at the σ of the answer), and is
    never below the ε the accountant certified; a certified 0 says why (the releases are (0, δ)-DP there)."""
    argv = ("calibrate", "--epsilon", epsilon, "--delta", "1e-5", "--method", method)
    obj = run_json(capsys, *argv)
    code, out, _ = run(capsys, *argv)
    printed = float(_cells(out)[3])
    assert code == 0 and printed >= obj["epsilon_upper"]
    assert _delta_of(obj["sigma"], printed) <= mpmath.mpf("1e-5")
    if printed == 0.0:
        assert "certified ε = 0: at this σ the releases are (0, δ)-DP" in " ".join(out.split())


@given(st.floats(min_value=0.0, max_value=1e300, allow_subnormal=True))
def test_an_exact_value_is_printed_rounded_up(x: float) -> None:
    shown = certainty_cells(x, x)
    assert shown[1] == "exact" and float(shown[0]) >= x and math.isfinite(float(shown[0]))
