"""`dpkit report`: --quick writes every file of the default report; its summary equals what `dpkit ledger`
and `dpkit audit` print with --json; a bad config is one error line, exit 2, and nothing written."""

from __future__ import annotations

import contextlib
import io
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from cli_runs import run, run_json

from dpkit.cli import main
from dpkit.reports.render import FILES

ALGORITHMS = ["ldp-ucrl-vtr", "private-linopt-vi", "private-linopt-po", "private-ofu-rl", "rlsvi"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, Path]:
    """``dpkit report --quick --out DIR --json``: (what it printed, report.json, DIR)."""
    out = tmp_path_factory.mktemp("quick") / "report"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):  # capsys is per test
        code = main(["report", "--quick", "--out", str(out), "--json"])
    assert code == 0, stderr.getvalue()
    lines = stdout.getvalue().strip().splitlines()
    assert len(lines) == 1, stdout.getvalue()
    printed = json.loads(lines[0])
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return printed, data, out


@pytest.mark.slow
def test_quick_writes_every_file(quick: tuple[dict, dict, Path]) -> None:
    printed, data, out = quick
    assert printed["out"] == str(out)
    for name in printed["files"]:
        assert (out / name).is_file(), name
    assert set(FILES) <= set(printed["files"])
    figures = [f for f in printed["files"] if f.startswith("figures/")]
    assert sorted(p.relative_to(out).as_posix() for p in (out / "figures").glob("*.png")) == sorted(figures)
    for algorithm in ALGORITHMS:
        for kind in ("epsilon-delta", "audit-tradeoff", "audit-roc", "regret"):
            assert f"figures/{algorithm}-{kind}.png" in figures
    for algorithm in ("private-linopt-vi", "private-linopt-po", "private-ofu-rl"):
        assert f"figures/{algorithm}-tree.png" in figures
    assert "figures/rlsvi-rlsvi.png" in figures
    assert [row["algorithm"] for row in data["summary"]] == ALGORITHMS
    assert printed["summary"] == data["summary"]
    assert data["provenance"]["command_line"] == [
        "dpkit",
        "report",
        "--quick",
    ]  # not --out: the JSON is the same anywhere
    assert data["provenance"]["config"]["source"] == "default" and data["provenance"]["config"]["quick"] is True


@pytest.mark.slow
def test_quick_json_validates_against_the_schema(quick: tuple[dict, dict, Path]) -> None:
    schema = json.loads(resources.files("dpkit.reports").joinpath("report.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(quick[1], schema)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.slow
def test_summary_equals_dpkit_ledger_json(
    capsys: pytest.CaptureFixture[str], quick: tuple[dict, dict, Path], algorithm: str
) -> None:
    _, data, _ = quick
    row = next(r for r in data["summary"] if r["algorithm"] == algorithm)
    section = next(s for s in data["algorithms"] if s["name"] == algorithm)
    printed = run_json(capsys, *section["ledger_command"])
    assert row["claimed_epsilon"] == printed["epsilon_claimed_by_paper"]
    assert row["epsilon_at_paper_sigma"] == printed["epsilon_achieved_by_paper_sigma"]
    assert row["noise_ratio"] == printed["noise_ratio"]
    assert row["delta"] == printed["delta"] and row["relation"] == printed["relation"]
    assert section["ledger"] == printed  # the whole ledger, release by release


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.slow
def test_summary_equals_dpkit_audit_json(
    capsys: pytest.CaptureFixture[str], quick: tuple[dict, dict, Path], algorithm: str
) -> None:
    _, data, _ = quick
    row = next(r for r in data["summary"] if r["algorithm"] == algorithm)
    section = next(s for s in data["algorithms"] if s["name"] == algorithm)
    assert section["audit"]["available"], section["audit"]["reason"]
    result = section["audit"]["result"]
    assert row["audited_epsilon_lower"] == result["epsilon_lower"] and row["verdict"] == result["verdict"]
    printed = run_json(capsys, *section["audit"]["command"])
    assert row["audited_epsilon_lower"] == printed["epsilon_lower"]
    assert row["verdict"] == printed["verdict"]
    for key in ("claimed_epsilon", "exact_epsilon", "exact_mu", "pair_mu", "mu_lower", "sigmas", "runs", "episodes"):
        assert result[key] == printed[key], key
    _assert_close(result, printed)


def _assert_close(a: object, b: object, path: str = "") -> None:
    """Equal, floats to 1e-12 relative (the command line's α = 1 − confidence differs from 0.05 in the last bit)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), path
        for key in a:
            _assert_close(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-300), path
    else:
        assert a == b, path


def _bad(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    out = tmp_path / "out"
    code, stdout, err = run(capsys, "report", *args, "--out", str(out))
    assert code == 2
    assert stdout == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert not out.exists()  # nothing written
    return lines[0]


BASE = '[[algorithm]]\nname = "ldp-ucrl-vtr"\nepisodes = 20\nepsilon = 1.0\ndelta = 0.1\n'


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (BASE + "colour = 3\n", "algorithm[0].colour"),
        ("seedz = 1\n" + BASE, "'seedz'"),
        (BASE + "[algorithm.audit]\nrunz = 10\n", "algorithm[0].audit.runz"),
        (BASE.replace("episodes = 20", 'episodes = "twenty"'), "algorithm[0].episodes must be an integer"),
        (BASE.replace("epsilon = 1.0", 'epsilon = "one"'), "algorithm[0].epsilon must be a finite number"),
        ("seeds = 1.5\n" + BASE, "seeds must be an integer"),
        (BASE + "[algorithm.audit]\nsigma = []\n", "algorithm[0].audit.sigma"),
        (
            BASE + '[algorithm.audit]\nmode = "anytime"\n',
            "algorithm[0].audit.mode must be 'fixed' or 'sequential', got 'anytime'",
        ),
        (BASE.replace('name = "ldp-ucrl-vtr"', 'name = "ucrl-vtr"'), "algorithm[0].name"),
        ("title = \n", "is not valid TOML"),
    ],
)
def test_bad_config_is_one_error_line_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, names: str
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text, encoding="utf-8")
    line = _bad(capsys, tmp_path, "--config", str(config))
    assert names in line and "bad.toml" in line


def test_missing_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    line = _bad(capsys, tmp_path, "--config", str(tmp_path / "missing.toml"))
    assert "cannot read config file" in line and "missing.toml" in line


def test_existing_out_is_left_alone_on_a_bad_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    config = tmp_path / "bad.toml"
    config.write_text(BASE + "colour = 3\n", encoding="utf-8")
    code, _, err = run(capsys, "report", "--config", str(config), "--out", str(out))
    assert code == 2 and err.startswith("error: ")
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_out_must_not_be_a_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x", encoding="utf-8")
    code, _, err = run(capsys, "report", "--out", str(target))
    assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert target.read_text(encoding="utf-8") == "x"


@pytest.mark.slow
def test_same_config_gives_byte_identical_json_wherever_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "tiny.toml"
    config.write_text(
        "seeds = 2\n" + BASE.replace("episodes = 20", "episodes = 30") + "[algorithm.audit]\nruns = 40\n",
        encoding="utf-8",
    )
    for name in ("a", "b"):
        code, out, err = run(capsys, "report", "--config", str(config), "--out", str(tmp_path / name))
        assert code == 0, err
        assert "report written to" in err
    first, second = ((tmp_path / name / "report.json").read_bytes() for name in ("a", "b"))
    assert first == second
    assert json.loads(first)["provenance"]["command_line"] == ["dpkit", "report", "--config", str(config)]


def test_unwritable_out_is_one_error_line_before_any_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    parent = tmp_path / "file"
    parent.write_text("x", encoding="utf-8")
    code, out, err = run(capsys, "report", "--quick", "--out", str(parent / "sub" / "report"))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "cannot write" in lines[0]
    assert "computing" not in err


def test_stage_clock_counts_each_stage_and_says_when_it_finished(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each stage finishes once, when its steps add up to its total (in any order and in fractions); the time is
    counted from the start given, so stages that run side by side are not added up."""
    from dpkit.stages import StageClock

    now = [100.0]
    monkeypatch.setattr("dpkit.stages.time.perf_counter", lambda: now[0])
    seen: list[tuple[str, float]] = []
    clock = StageClock({"a": 2, "b": 1, "c": 0.0}, start=90.0, on_finish=lambda stage, at: seen.append((stage, at)))
    clock.advance("a", 0.5)
    now[0] = 105.0
    clock.advance("b", 1)
    clock.advance("a", 1.5)
    clock.advance("a", 0.0)  # once finished, a stage is not finished again
    assert seen == [("b", 15.0), ("a", 15.0)] and clock.summary() == "a 15.0 s, b 15.0 s"
    with pytest.raises(ValueError, match="unknown stage 'd'"):
        clock.advance("d", 1)


@pytest.mark.slow
def test_a_report_of_files_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A config with [[ledger]] entries and no algorithm: no empty algorithm table, each file with its claim; the
    stage lines say when each stage was done."""
    import shutil

    examples = Path(__file__).resolve().parents[2] / "examples"
    for name in ("my_report.toml", "my_ledger.toml", "mnist_dp_sgd.json"):
        shutil.copy(examples / name, tmp_path / name)
    code, out, err = run(capsys, "report", "--config", str(tmp_path / "my_report.toml"), "--out", str(tmp_path / "o"))
    assert code == 0, err
    assert "ledgers done at" in err and "figures done at" in err and "stages done at:" in err
    assert "algorithm" not in out and "mnist-dp-sgd" in out and "my-ledger" in out
    data = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert data["summary"] == [] and data["algorithms"] == [] and len(data["ledgers"]) == 2
    assert [s["assessment"]["claim_status"] for s in data["ledgers"]] == ["met", "met"]


SEQUENTIAL = (
    '[[algorithm]]\nname = "private-linopt-vi"\nepisodes = 12\nepsilon = 1.0\ndelta = 0.1\n'
    '[algorithm.audit]\nmode = "sequential"\nsigma = 0.1\nruns = 200\nepisodes = 2\n'
)


@pytest.mark.slow
def test_a_sequential_audit_prints_the_runs_it_used_and_its_command_prints_its_result(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``mode = "sequential"`` (σ far below the tight one: a violation): the summary gives the runs it used in place of
    a power, and the audit's command (``dpkit audit … --sequential --json``) prints the report's result."""
    config = tmp_path / "sequential.toml"
    config.write_text(SEQUENTIAL, encoding="utf-8")
    code, out, err = run(capsys, "report", "--config", str(config), "--out", str(tmp_path / "out"))
    assert code == 0, err
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    row, section = data["summary"][0], data["algorithms"][0]
    assert row["verdict"] == "violation" and "(sequential," in out and f"{row['audit_runs_used']}" in out  # cell wraps
    code, out, err = run(capsys, *section["audit"]["command"], "--json")
    assert code == 1, err  # a violation
    printed = json.loads(out)
    assert printed["sequential"] is True
    _assert_close(section["audit"]["result"], printed)
