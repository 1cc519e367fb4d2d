"""``dpkit audit --train FILE.py:NAME``: one DP-SGD training run with canaries, and one ``error:`` line (exit 2) for
bad input — naming the user's file and line where their code fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import run

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "dp_sgd_train.py")
CLAIM = ("--noise-multiplier", "3.42", "--sampling-rate", "1", "--steps", "10")
USER = """import numpy as np


def fails(dataset, rng):
    return dataset.features[10**9]


def final_only(dataset, rng):
    return np.zeros(2048)
"""


def _train(capsys: pytest.CaptureFixture[str], train: str, *extra: str) -> tuple[int, str, str]:
    return run(capsys, "audit", "--train", train, "--examples", f"{EXAMPLE}:DATASET", *CLAIM, *extra)


@pytest.mark.slow  # the bound of a clear violation reads DP-SGD curves of little noise: wide PLDs, seconds each
def test_unclipped_training_is_a_violation_with_the_threat_model_stated(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _train(capsys, f"{EXAMPLE}:train_unclipped", "--parameters", "2048", "--canaries", "400", "--json")
    said = json.loads(out)
    assert code == 1, err
    assert said["verdict"] == "violation" and said["threat_model"] == "white-box" and said["canaries"] == 400
    assert said["epsilon_lower"] > said["claimed_epsilon"] > 3.99


@pytest.mark.parametrize(
    ("train", "extra", "says"),
    [
        ("fails", ("--parameters", "2048"), "user_train.py:5 (fails): IndexError"),
        ("final_only", ("--parameters", "2048"), "final_only must return every iterate θ0…θT"),
        ("final_only", ("--parameters", "2048", "--canaries", "0"), "canaries must be between 2"),
        ("final_only", ("--parameters", "2048", "--mu", "1"), "--mu does not apply to a --train audit"),
        ("final_only", (), "a white-box audit needs parameters"),
        ("final_only", ("--parameters", "2048", "--loss", f"{EXAMPLE}:loss"), "loss applies to a black-box"),
    ],
)
def test_bad_input_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, train: str, extra: tuple[str, ...], says: str
) -> None:
    user = tmp_path / "user_train.py"
    user.write_text(USER, encoding="utf-8")
    code, out, err = _train(capsys, f"{user}:{train}", *extra)
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("error: "), err
    assert says in lines[0], lines[0]


@pytest.mark.parametrize(
    ("claim", "says"),
    [
        (("--noise-multiplier", "0", "--sampling-rate", "1", "--steps", "10"), "noise multiplier > 0"),
        (("--noise-multiplier", "2", "--sampling-rate", "1.5", "--steps", "10"), "sampling_rate"),
        (("--noise-multiplier", "2", "--sampling-rate", "1", "--steps", "0"), "steps"),
        (("--noise-multiplier", "2", "--sampling-rate", "1"), "--train needs the run's claim: --steps"),
    ],
)
def test_a_claim_that_is_not_dp_sgd_is_one_error_line(
    capsys: pytest.CaptureFixture[str], claim: tuple[str, ...], says: str
) -> None:
    code, out, err = run(capsys, "audit", "--train", f"{EXAMPLE}:train", "--parameters", "2048", *claim)
    assert code == 2 and out == "" and err.startswith("error: ") and says in err and len(err.strip().splitlines()) == 1
