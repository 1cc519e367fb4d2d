"""``dpkit audit --target FILE.py:FN --one-run --canary-records FILE.py:NAME``: one run of a release function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import run

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "gaussian_sum.py")
MU = "0.92493"  # Δ/σ of examples/gaussian_sum.py's σ: exactly (4, 1e-5)-DP


def _audit(capsys: pytest.CaptureFixture[str], release: str, *extra: str) -> tuple[int, dict, str]:
    argv = ["audit", "--target", f"{EXAMPLE}:{release}", "--one-run", "--canary-records", f"{EXAMPLE}:canaries"]
    code, out, err = run(capsys, *argv, *extra, "--json")
    return code, (json.loads(out) if out.strip() else {}), err


def test_the_example_at_its_sigma_is_consistent_and_at_half_a_violation(capsys: pytest.CaptureFixture[str]) -> None:
    code, right, err = _audit(capsys, "release", "--mu", MU)
    assert code == 0, err
    assert right["verdict"] == "consistent" and right["canaries"] == 1000 and right["mode"] == "one-run"
    code, half, _ = _audit(capsys, "release_half_sigma", "--mu", MU)
    assert code == 1
    assert half["verdict"] == "violation" and half["mu_lower"] > float(MU) and half["epsilon_lower"] > 4


def test_canaries_option_and_reproducibility(capsys: pytest.CaptureFixture[str]) -> None:
    a = _audit(capsys, "release", "--mu", MU, "--canaries", "400", "--seed", "5")[1]
    b = _audit(capsys, "release", "--mu", MU, "--canaries", "400", "--seed", "5")[1]
    assert a["canaries"] == 400
    assert {k: v for k, v in a.items() if k != "seconds"} == {k: v for k, v in b.items() if k != "seconds"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--mu", MU, "--canaries", "5000"], "at most 1000 canaries, got 5000"),
        (["--epsilon", "1"], "--epsilon needs --delta"),
        (["--mu", MU, "--score", f"{EXAMPLE}:nothing"], "has no name 'nothing'"),
        (["--mu", MU, "--dataset", f"{EXAMPLE}:DIM"], "dataset"),
    ],
)
def test_bad_input_is_one_error_line(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _audit(capsys, "release", *extra)
    assert code == 2 and out == {}
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err
