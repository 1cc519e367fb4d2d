"""DP-SGD in its users' terms on the command line (issue 33): --dataset-size N --batch-size B --epochs E (or
--steps T, or --sampling-rate as a fraction), every ε with the interval the truth lies in, calibrate and epsilon
agreeing on the certified ε of one σ, --save-event read back everywhere, and the option that does the job suggested."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runs import run, run_json

MNIST = ["--dataset-size", "60000", "--batch-size", "256", "--epochs", "10"]
TARGET = ["--epsilon", "3", "--delta", "1e-5"]


@pytest.fixture(scope="module")
def calibrated() -> dict:
    import contextlib
    import io

    from dpkit.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["calibrate", *TARGET, *MNIST, "--json"]) == 0
    return json.loads(out.getvalue())


def test_calibrate_in_epochs_and_batches(capsys: pytest.CaptureFixture[str], calibrated: dict) -> None:
    obj = calibrated
    assert obj["sampling_rate"] == 256 / 60000 and obj["steps"] == 2344 and obj["compositions"] == 2344
    assert obj["dataset_size"] == 60000 and obj["batch_size"] == 256 and obj["epochs"] == 10.0
    assert obj["sampling_rate_fraction"] == "256/60000"
    assert obj["epsilon_lower"] <= obj["epsilon_upper"] == obj["epsilon"] <= 3.0
    # the same σ as the sampling rate and number of steps typed by hand
    same = run_json(capsys, "calibrate", *TARGET, "--sampling-rate", "0.004266666666666667", "--compositions", "2344")
    assert same["sigma"] == obj["sigma"] and same["epsilon_upper"] == obj["epsilon_upper"]
    fraction = run_json(capsys, "calibrate", *TARGET, "--sampling-rate", "256/60000", "--steps", "2344")
    assert fraction["sigma"] == obj["sigma"] and fraction["sampling_rate_fraction"] == "256/60000"
    code, out, err = run(capsys, "calibrate", *TARGET, *MNIST)  # the table prints q and T back
    assert code == 0 and "q = 256/60000 = 0.0042667" in out and "⌈10 · 60000/256⌉ = 2,344" in out
    assert "certified ε" in out and "truth ≥" in out


def test_epsilon_and_calibrate_agree_on_the_certified_epsilon(
    capsys: pytest.CaptureFixture[str], calibrated: dict
) -> None:
    sigma = str(calibrated["sigma"])  # ten significant digits: what the table prints
    assert len(sigma.replace("0.", "").lstrip("0")) <= 10
    obj = run_json(capsys, "epsilon", "--sigma", sigma, "--delta", "1e-5", *MNIST)
    assert obj["epsilon_upper"] == calibrated["epsilon_upper"] and obj["epsilon_lower"] == calibrated["epsilon_lower"]
    assert obj["epsilon"] - obj["epsilon_lower"] <= 0.01 * obj["epsilon"] and obj["exact"] is False
    code, out, err = run(capsys, "epsilon", "--sigma", sigma, "--delta", "1e-5", *MNIST)
    assert out.startswith("ε ≤ 2.99") and ", truth in [2.99" in out and "(pld)" in out
    assert "q = 256/60000" in out and "T = ⌈10 · 60000/256⌉ = 2,344 steps" in out


def test_every_value_says_how_sure_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "epsilon", "--sigma", "3.7306", "--delta", "1e-5")
    assert out.strip() == "ε = 1.0000093121 at δ = 1e-05 (exact)"
    code, out, _ = run(capsys, "epsilon", "--sigma", "3.7306", "--delta", "1e-5", "--method", "rdp")
    assert out.startswith("ε ≤ 1.0921604 at δ = 1e-05, truth in [1.00000931, 1.0921604]")  # the exact ε is the truth
    obj = run_json(capsys, "delta", "--sigma", "3.73", "--epsilon", "1")
    assert obj["delta_upper"] == obj["delta_lower"] == obj["delta"] and obj["exact"] is True
    dp_sgd = ["--sigma", "1.1", "--sampling-rate", "256/60000", "--steps", "14062"]
    obj = run_json(capsys, "epsilon", *dp_sgd, "--delta", "1e-5", "--method", "rdp")
    assert obj["epsilon_lower"] is None  # RDP bounds from above only
    code, out, _ = run(capsys, "epsilon", *dp_sgd, "--delta", "1e-5", "--method", "rdp")
    assert ", an upper bound (rdp, improved" in out
    obj = run_json(capsys, "delta", *dp_sgd, "--epsilon", "2")
    assert 0 < obj["delta_lower"] < obj["delta_upper"] == obj["delta"] <= 1.01 * obj["delta_lower"]


def test_solve_for_epochs_and_batch_size(capsys: pytest.CaptureFixture[str]) -> None:
    from dpkit.accountant.event_calibration import dpsgd_epsilon

    epochs = run_json(capsys, "calibrate", *TARGET, "--solve", "epochs", "--sigma", "1.1", "--dataset-size", "60000",
                      "--batch-size", "256")  # fmt: skip
    t = epochs["steps"]
    assert epochs["epochs"] == pytest.approx(t * 256 / 60000) and epochs["epochs"] <= t * 256 / 60000
    assert epochs["epsilon"] <= 3.0 and epochs["epsilon_lower"] <= epochs["epsilon"]
    assert dpsgd_epsilon(1e-5, sampling_probability=256 / 60000, noise_multiplier=1.1, steps=int(t * 1.01)) > 3.0
    batch = run_json(capsys, "calibrate", *TARGET, "--solve", "batch-size", "--sigma", "1.1", "--dataset-size",
                     "60000", "--epochs", "60")  # fmt: skip
    b = batch["batch_size"]
    assert batch["epsilon"] <= 3.0 and 256 < b < 60000 and batch["steps"] == -(-60 * 60000 // b)
    t2 = -(-60 * 60000 // (b + 2))
    more = dpsgd_epsilon(1e-5, sampling_probability=(b + 2) / 60000, noise_multiplier=1.1, steps=t2)
    assert more > 3.0  # two more examples per batch miss the target
    code, out, err = run(capsys, "calibrate", *TARGET, "--solve", "batch-size", "--sigma", "1.1", "--dataset-size",
                         "60000", "--batch-size", "10", "--epochs", "1")  # fmt: skip
    assert code == 2 and "--batch-size does not apply to --solve batch-size" in err


def test_save_event_is_read_back_everywhere(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    obj = run_json(capsys, "calibrate", *TARGET, *MNIST, "--save-event", str(path))
    assert obj["saved_event"] == str(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["class_name"] == "SelfComposedDpEvent" and saved["count"] == 2344
    assert saved["event"]["event"]["noise_multiplier"] == obj["noise_multiplier"]
    again = run_json(capsys, "epsilon", "--event", str(path), "--delta", "1e-5")  # --event
    assert again["epsilon_upper"] == obj["epsilon_upper"]
    ledger = run_json(capsys, "ledger", str(path), "--delta", "1e-5")  # dpkit ledger FILE
    assert ledger["methods"]["pld"] == obj["epsilon_upper"]
    config = tmp_path / "report.toml"  # a report's [[ledger]] entry
    config.write_text(f'[[ledger]]\nname = "run"\nfile = "{path.name}"\ndelta = 1e-5\nepsilon = 3.0\n')
    from dpkit.reports.config import load_config

    assert load_config(config).ledgers[0].kind == "event file"
    code, out, err = run(capsys, "epsilon", "--sigma", "1", "--delta", "1e-5", "--save-event", str(tmp_path), "-k", "3")
    assert code == 2 and "is a directory" in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--steps", "2344"], "--steps is DP-SGD's"),
        (["--epochs", "10"], "--epochs is DP-SGD's"),
        (["--dataset-size", "60000", "--epochs", "1"], "--dataset-size needs --batch-size"),
        (["--dataset-size", "60000", "--batch-size", "256"], "needs --epochs E"),
        (["--dataset-size", "60000", "--batch-size", "256", "--sampling-rate", "0.1", "--epochs", "1"], "give one"),
        ([*MNIST, "--steps", "10"], "--epochs and --steps"),
        (["--sampling-rate", "0.1", "--steps", "10", "-k", "10"], "say the same"),
        (["--sampling-rate", "0.01", "--epochs", "3"], "--epochs needs --dataset-size"),
        (["--sampling-rate", "256/0", "--steps", "3"], "fraction"),
        (["--dataset-size", "100", "--batch-size", "256", "--epochs", "1"], "--batch-size = 256 is larger"),
    ],
)
def test_options_that_do_not_go_together(capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, "epsilon", "--sigma", "1", "--delta", "1e-5", *argv, "--json")
    assert code == 2 and out == "" and needle in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize(
    ("command", "typed", "offered"),
    [
        ("calibrate", "--num-steps", "--steps"),
        ("epsilon", "--noise-multiplier", "--sigma"),
        ("calibrate", "--num-epochs", "--epochs"),
        ("calibrate", "--lot-size", "--batch-size"),
        ("methods", "--sample-rate", "--sampling-rate"),
        ("budgets", "--steps", "--compositions"),  # budgets has no --steps: the option that does the job there
        ("calibrate", "--epsilno", "--epsilon"),  # a typo: click's near names
    ],
)
def test_an_unknown_option_suggests_the_one_that_does_the_job(
    capsys: pytest.CaptureFixture[str], command: str, typed: str, offered: str
) -> None:
    code, out, err = run(capsys, command, typed, "1")
    assert code == 2 and f"no such option: {typed}; did you mean {offered}" in err
