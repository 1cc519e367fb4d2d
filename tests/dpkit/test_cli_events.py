"""The command line beyond the Gaussian: --sampling-rate (DP-SGD), --event FILE (a DpEvent JSON written by
dp-accounting's own objects, or dpkit's event JSON), ledger files holding events, and the calibration ends."""

from __future__ import annotations

import json
import math
from pathlib import Path

import dp_accounting
import pytest
from cli_runs import run, run_json

Q, STEPS, NM = 256 / 60000, 14062, 1.1  # tensorflow-privacy's MNIST example


def _named_tuple_json(dp_event: dp_accounting.DpEvent) -> str:
    """A DpEvent as JSON straight from dp-accounting's own to_named_tuple() (no dpkit code)."""

    def plain(x: object) -> object:
        if hasattr(x, "_asdict"):
            return {k: plain(v) for k, v in x._asdict().items()}  # type: ignore[attr-defined]
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        return x

    return json.dumps(plain(dp_event.to_named_tuple()))


def _dp_sgd() -> dp_accounting.DpEvent:
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(Q, dp_accounting.GaussianDpEvent(NM)), STEPS
    )


def test_a_dp_event_written_by_dp_accounting_gives_its_pld_epsilon(capsys, tmp_path: Path) -> None:
    from dp_accounting.pld import pld_privacy_accountant

    path = tmp_path / "mnist.json"
    path.write_text(_named_tuple_json(_dp_sgd()), encoding="utf-8")
    obj = run_json(capsys, "epsilon", "--event", str(path), "--delta", "1e-5")
    theirs = pld_privacy_accountant.PLDAccountant().compose(_dp_sgd()).get_epsilon(1e-5)
    assert obj["method"] == "pld" and obj["epsilon"] == pytest.approx(theirs, rel=1e-3)
    assert obj["epsilon"] >= theirs * (1 - 1e-6) and obj["error"] >= 0.0
    same = run_json(
        capsys, "epsilon", "--sigma", str(NM), "--sampling-rate", str(Q), "-k", str(STEPS), "--delta", "1e-5"
    )
    assert same["epsilon"] == obj["epsilon"]
    rdp = run_json(capsys, "epsilon", "--event", str(path), "--delta", "1e-5", "--method", "rdp")
    assert rdp["epsilon"] >= obj["epsilon"] and rdp["order"] > 1


def test_calibrate_with_a_sampling_rate_meets_the_target_and_is_tight(capsys) -> None:
    obj = run_json(
        capsys, "calibrate", "--epsilon", "3", "--delta", "1e-5", "--sampling-rate", str(Q), "-k", str(STEPS)
    )
    nm = obj["noise_multiplier"]
    assert obj["epsilon"] <= 3.0 and obj["sampling_rate"] == Q and obj["method"] == "pld"
    check = run_json(
        capsys, "epsilon", "--sigma", str(nm), "--sampling-rate", str(Q), "-k", str(STEPS), "--delta", "1e-5"
    )
    assert check["epsilon"] <= 3.0 + 5e-3  # at dp-accounting's default interval (the calibration's own may be coarser)
    lower = run_json(
        capsys, "epsilon", "--sigma", str(nm * 0.99), "--sampling-rate", str(Q), "-k", str(STEPS), "--delta", "1e-5"
    )
    assert lower["epsilon"] > 3.0  # 1 % less noise misses the target
    rdp = run_json(
        capsys,
        "calibrate",
        "--epsilon",
        "3",
        "--delta",
        "1e-5",
        "--sampling-rate",
        str(Q),
        "-k",
        str(STEPS),
        "--method",
        "rdp",
    )
    assert rdp["noise_multiplier"] >= nm


def test_methods_and_budgets_with_a_sampling_rate(capsys) -> None:
    obj = run_json(capsys, "methods", "--sigma", "1.1", "--sampling-rate", "0.01", "-k", "100", "--delta", "1e-5")
    assert set(obj["refusals"]) == {"exact", "zcdp", "zcdp-rdp-optimal", "classic"}
    assert obj["methods"]["pld"] <= obj["methods"]["rdp"]
    table = run_json(
        capsys, "budgets", "--sampling-rate", "0.01", "--epsilons", "1", "--compositions", "100", "--no-pld"
    )
    row = table["rows"][0]
    assert row["sigma"]["exact"] is None and row["sigma"]["rdp"] > 0 and table["sampling_rate"] == 0.01


def test_calibrate_an_event_file_scales_its_noise(capsys, tmp_path: Path) -> None:
    path = tmp_path / "laplace.json"
    path.write_text('{"kind": "laplace", "noise_multiplier": 1.0}', encoding="utf-8")
    obj = run_json(capsys, "calibrate", "--event", str(path), "--epsilon", "1", "--delta", "1e-5", "-k", "10")
    assert obj["epsilon"] <= 1.0 and 9.0 < obj["scale"] <= 10.0  # basic composition would need 10
    assert obj["event"]["event"]["noise_multiplier"] == pytest.approx(obj["scale"])


def test_a_ledger_file_with_events(capsys, tmp_path: Path) -> None:
    path = tmp_path / "ledger.toml"
    path.write_text(
        '[[release]]\nname = "gram"\nsensitivity = 1.5\nsigma = 30.0\ncount = 20\n'
        '[[release]]\nname = "sgd"\ncount = 1000\n'
        'event = { kind = "poisson_sampled", sampling_probability = 0.01, '
        'event = { kind = "gaussian", noise_multiplier = 1.1 } }\n',
        encoding="utf-8",
    )
    obj = run_json(capsys, "ledger", str(path), "--delta", "1e-5")
    assert obj["mu"] is None and obj["methods"]["pld"] <= obj["methods"]["rdp"] and "exact" in obj["refusals"]
    assert obj["dp_event"]["class_name"] == "ComposedDpEvent" and obj["dp_event"]["module_name"]
    from dpkit.accountant.interop import dp_event_from_json

    assert isinstance(dp_event_from_json(json.dumps(obj["dp_event"])), dp_accounting.ComposedDpEvent)
    path.write_text('[[release]]\nname = "x"\nsigma = 1.0\nevent = { kind = "laplace", noise_multiplier = 1.0 }\n')
    code, out, err = run(capsys, "ledger", str(path), "--delta", "1e-5")
    assert code == 2 and out == "" and err.startswith("error:") and "not both" in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["epsilon", "--delta", "1e-5"], "--sigma"),
        (["epsilon", "--sigma", "1", "--delta", "1e-5", "--sampling-rate", "1.5"], "sampling-rate"),
        (["epsilon", "--sigma", "1", "--delta", "1e-5", "--relation", "replace_one"], "--relation"),
        (["epsilon", "--event", "/nonexistent.json", "--delta", "1e-5"], "nonexistent"),
        (
            ["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.1", "--method", "zcdp"],
            "pld or rdp",
        ),
        (["methods", "--sigma", "1", "--delta", "1e-5", "--sampling-rate", "nan"], "sampling-rate"),
    ],
)
def test_bad_mechanisms_are_one_error_line(capsys, argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 2 and out == "" and err.startswith("error:") and needle in err and len(err.splitlines()) == 1


def test_an_event_option_refuses_the_options_of_the_other_forms(capsys, tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text('{"kind": "gaussian", "noise_multiplier": 2.0}', encoding="utf-8")
    code, _, err = run(capsys, "epsilon", "--event", str(path), "--sigma", "1", "--delta", "1e-5")
    assert code == 2 and "--sigma does not apply to --event" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"module_name": "os", "class_name": "system"}', encoding="utf-8")
    code, _, err = run(capsys, "epsilon", "--event", str(bad), "--delta", "1e-5")
    assert code == 2 and err.startswith("error:")


def test_calibration_ends_are_answered(capsys) -> None:
    assert run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "0")["sigma"] is None  # +inf, as JSON null
    assert run_json(capsys, "calibrate", "--epsilon", "inf", "--delta", "1e-5")["sigma"] == 0.0
    assert run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "1")["sigma"] == 0.0
    zero = run_json(capsys, "calibrate", "--epsilon", "0", "--delta", "0.5")
    assert zero["sigma"] > 0 and zero["epsilon"] == 0.0
    nothing = run_json(capsys, "epsilon", "--sigma", "inf", "--delta", "1e-5", "-k", "1000")
    assert nothing["epsilon"] == 0.0 and not math.isnan(nothing["delta"])


def test_solve_for_the_steps_or_the_sampling_rate(capsys) -> None:
    """The largest number of steps for (q, σ), the largest q for (σ, K): each meets the target, one more step (or 1 %
    more q) does not."""
    from dpkit.accountant.event_calibration import dpsgd_epsilon

    steps = run_json(capsys, "calibrate", "--epsilon", "3", "--delta", "1e-5", "--solve", "steps", "--sigma", "1.1",
                     "--sampling-rate", str(Q))  # fmt: skip
    t = int(steps["steps"])
    assert steps["parameter"] == "steps" and steps["epsilon"] <= 3.0
    assert dpsgd_epsilon(1e-5, sampling_probability=Q, noise_multiplier=1.1, steps=int(t * 1.01)) > 3.0
    rate = run_json(capsys, "calibrate", "--epsilon", "3", "--delta", "1e-5", "--solve", "sampling-rate", "--sigma",
                    "1.1", "-k", str(STEPS))  # fmt: skip
    q = rate["sampling_probability"]
    assert rate["epsilon"] <= 3.0 and q > Q  # the MNIST run at σ = 1.1 has ε ≈ 2.38 < 3: a larger q fits
    assert dpsgd_epsilon(1e-5, sampling_probability=q * 1.01, noise_multiplier=1.1, steps=STEPS) > 3.0
    for argv, needle in (
        (["--solve", "steps", "--sigma", "1"], "--sampling-rate"),
        (["--solve", "steps", "--sampling-rate", "0.1"], "--sigma"),
        (["--solve", "sampling-rate", "--sigma", "1", "--sampling-rate", "0.1"], "--sampling-rate does not apply"),
        (["--solve", "steps", "--sigma", "1", "--sampling-rate", "0.1", "--method", "exact"], "pld or rdp"),
    ):
        code, out, err = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", *argv, "--json")
        assert code == 2 and out == "" and needle in err, err


def test_calibration_beyond_the_pld_reach_says_so(capsys, tmp_path: Path) -> None:
    """Found by a second reading: a δ below the PLD's resolution looped until an overflow, an event with no noise
    scale gave a range error, and σ = nm·Δ was rounded to nearest."""
    code, out, err = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-16", "--sampling-rate", "0.01", "--json")
    assert code == 2 and out == "" and "use method rdp" in err
    rr = tmp_path / "rr.json"
    rr.write_text('{"kind": "randomized_response", "noise_parameter": 0.5, "num_buckets": 2}', encoding="utf-8")
    code, out, err = run(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--event", str(rr), "--json")
    assert code == 2 and "no noise scale" in err
    obj = run_json(capsys, "calibrate", "--epsilon", "1", "--delta", "1e-5", "--sampling-rate", "0.01", "-k", "1000",
                   "--sensitivity", "3", "--method", "rdp")  # fmt: skip
    assert obj["sigma"] >= obj["noise_multiplier"] * 3.0


@pytest.mark.parametrize(
    "content",
    ["[1, 2]", '"an event"', "3", '{"releases": [[1, 2]]}', '{"kind": "no-such-kind"}', '{"release": [{"name": 1}]}'],
)
@pytest.mark.parametrize("form", ["ledger", "epsilon --event"])
def test_a_bad_event_or_ledger_file_is_named_in_its_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, form: str
) -> None:
    """Issue 43: ``dpkit ledger FILE`` on a JSON list said ``an event must be a JSON object, got [1, 2]`` without
    naming the file. Every error about a file's content names it, on one ``error:`` line (exit 2)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.json").write_text(content, encoding="utf-8")
    argv = ["ledger", "mine.json"] if form == "ledger" else ["epsilon", "--event", "mine.json"]
    code, out, err = run(capsys, *argv, "--delta", "1e-5")
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert "'mine.json'" in err and "Traceback" not in err, err
    if content == "[1, 2]":
        assert "must be a JSON object, got [1, 2]" in err
