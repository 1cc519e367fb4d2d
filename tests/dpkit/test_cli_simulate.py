"""`dpkit simulate`: CSV, PNG and a JSON summary equal to the API; bad input exits 2 with nothing written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from cli_runs import run

from dpkit.algorithms.simulation import Experiment, regret_slope, simulate


@pytest.mark.parametrize(
    ("algorithm", "extra"),
    [
        ("ucrl-vtr", []),
        ("ldp-ucrl-vtr", ["--epsilon", "2", "--delta", "0.1", "--sigma", "tight"]),
        ("private-linopt-vi", ["--epsilon", "2", "--delta", "0.1"]),
        ("rlsvi", ["--env", "tabular"]),
        ("private-ofu-rl", ["--epsilon", "2", "--delta", "0.1", "--state-dim", "2", "--control-dim", "1"]),
    ],
)
def test_simulate_writes_csv_png_and_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, algorithm: str, extra: list[str]
) -> None:
    sizes = [] if algorithm == "private-ofu-rl" else ["--states", "3"]  # an LQ system has no --states
    code, out, err = run(
        capsys,
        "simulate",
        algorithm,
        *sizes,
        "--episodes",
        "30",
        "--seeds",
        "2",
        "--out",
        str(tmp_path),
        "--json",
        *extra,
    )
    assert code == 0, err
    summary = json.loads(out)
    rows = list(csv.DictReader((tmp_path / f"{algorithm}-regret.csv").open()))
    assert len(rows) == 2 * 30 and {r["seed"] for r in rows} == {"0", "1"}
    assert (tmp_path / f"{algorithm}-regret.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    e = Experiment(**{k: v for k, v in summary["experiment"].items() if k != "options"})
    runs = [simulate(e, s) for s in (0, 1)]
    cum = np.stack([r.cumulative_regret for r in runs])
    assert summary["final_regret_mean"] == pytest.approx(cum[:, -1].mean(), rel=1e-12)
    assert summary["loglog_slope"] == pytest.approx(regret_slope(cum.mean(axis=0)), rel=1e-12, nan_ok=True)
    seed1 = [float(r["cumulative_regret"]) for r in rows if r["seed"] == "1"]
    assert np.array_equal(seed1, runs[1].cumulative_regret)
    assert summary["sigmas"] == dict(runs[0].sigmas)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["ldp-ucrl-vtr", "private-ofu-rl"])
def test_simulate_is_reproducible_and_worker_independent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, algorithm: str
) -> None:
    sizes = [] if algorithm == "private-ofu-rl" else ["--states", "2"]  # an LQ system has no --states
    args = [
        "simulate",
        algorithm,
        *sizes,
        "--episodes",
        "20",
        "--seeds",
        "2",
        "--epsilon",
        "1",
        "--delta",
        "0.1",
        "--json",
    ]
    _, a, _ = run(capsys, *args, "--out", str(tmp_path / "a"))
    _, b, _ = run(capsys, *args, "--out", str(tmp_path / "b"), "--workers", "2")
    csv_name = f"{algorithm}-regret.csv"
    assert (tmp_path / "a" / csv_name).read_text() == (tmp_path / "b" / csv_name).read_text()
    ja, jb = json.loads(a), json.loads(b)
    assert ja["final_regret_mean"] == jb["final_regret_mean"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["ldp-ucrl-vtr", "--episodes", "10"], "epsilon"),
        (["ucrl-vtr", "--episodes", "0"], "episodes"),
        (["ucrl-vtr", "--episodes", "10", "--sigma", "tight"], "sigma"),
        (["ldp-ucrl-vtr", "--episodes", "10", "--epsilon", "1", "--delta", "0.1", "--sigma", "lots"], "lots"),
        (["ldp-ucrl-vtr", "--episodes", "10", "--epsilon", "-1", "--delta", "0.1"], "epsilon"),
        (["ofu-rl", "--env", "riverswim", "--episodes", "10"], "lq"),
        (["ucrl-vtr", "--env", "riverswim", "--actions", "3", "--episodes", "10"], "actions"),
        (["dqn", "--episodes", "10"], "dqn"),
        (["rlsvi", "--episodes", "10", "--sigma", "1e308"], "too large"),
        (["ldp-ucrl-vtr", "--episodes", "10", "--epsilon", "1", "--delta", "0.1", "--sigma", "nan"], "sigma"),
    ],
)
def test_bad_input_is_one_error_line_and_nothing_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], needle: str
) -> None:
    out_dir = tmp_path / "out"
    code, out, err = run(capsys, "simulate", *argv, "--out", str(out_dir))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and needle in err
    assert not out_dir.exists()


def test_out_of_memory_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpkit.algorithms.simulation as simulation

    def exhausted(*args: object, **kwargs: object) -> None:
        raise MemoryError("Unable to allocate 241. GiB")

    monkeypatch.setattr(simulation.Users, "draw", exhausted)
    code, out, err = run(capsys, "simulate", "ucrl-vtr", "--episodes", "10", "--out", str(tmp_path / "out"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("error: not enough memory") and "241. GiB" in err
    assert not (tmp_path / "out").exists()
