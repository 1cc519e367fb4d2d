"""`dpkit audit`: user files as targets, JSON identical under every executor, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runs import run

MECH = '''
import numpy as np
SIGMA = 2.0
def release(ds, rng, n):
    return np.sum(ds) + SIGMA * rng.standard_normal((n, 1))
def weak(ds, rng, n):
    return np.sum(ds) + SIGMA / 2 * rng.standard_normal((n, 1))
def bad_shape(ds, rng, n):
    return np.zeros((n + 1, 1))
def crashes(ds, rng, n):
    raise RuntimeError("boom")
PAIR = ([0.0], [0.0, 1.0])
PAIRS = [([0.0], [0.0, 0.2]), ([0.0], [0.0, 1.0])]
def make_pairs():
    return PAIRS
NOT_A_PAIR = 3
def score(x):
    return x[:, 0]
'''


@pytest.fixture()
def mech(tmp_path: Path) -> Path:
    path = tmp_path / "mech.py"
    path.write_text(MECH)
    return path


def audit_json(capsys: pytest.CaptureFixture[str], mech: Path, *extra: str) -> dict:
    code, out, err = run(capsys, "audit", "--target", f"{mech}:release", "--neighbours", f"{mech}:PAIR", "--json",
                         *extra)
    assert code == 0, err
    assert len(out.strip().splitlines()) == 1
    return json.loads(out)


def test_audit_json_fields_and_consistency(capsys: pytest.CaptureFixture[str], mech: Path) -> None:
    obj = audit_json(capsys, mech, "--mu", "0.5", "--trials", "20000")
    for key in ("epsilon_lower_bound", "mu_lower_bound", "mu_estimate", "claimed_epsilon", "delta", "confidence",
                "trials", "verdict"):
        assert key in obj
    assert obj["verdict"] == "consistent" and obj["trials"] == 20000 and obj["confidence"] == 0.95
    assert 0.35 < obj["mu_lower_bound"] <= 0.5


def test_audit_catches_a_weak_mechanism(capsys: pytest.CaptureFixture[str], mech: Path) -> None:
    code, out, err = run(capsys, "audit", "--target", f"{mech}:weak", "--neighbours", f"{mech}:PAIR", "--mu", "0.5",
                         "--trials", "20000", "--json")
    assert code == 0 and json.loads(out)["verdict"] == "violation"


@pytest.mark.parametrize("extra", [["--attack", "learned"], ["--attack", "SCORE"]])
def test_audit_attacks(capsys: pytest.CaptureFixture[str], mech: Path, extra: list[str]) -> None:
    extra = [e.replace("SCORE", f"{mech}:score") for e in extra]
    obj = audit_json(capsys, mech, "--epsilon", "1", "--delta", "1e-5", "--trials", "20000", *extra)
    assert obj["verdict"] == "consistent" and obj["claimed_epsilon"] == 1.0


def test_same_seed_identical_json_under_every_executor(capsys: pytest.CaptureFixture[str], mech: Path) -> None:
    base = ["--mu", "0.5", "--trials", "6000", "--chunk-size", "1000", "--seed", "7"]
    local = audit_json(capsys, mech, *base)
    assert audit_json(capsys, mech, *base) == local
    assert audit_json(capsys, mech, *base, "--executor", "processes", "--workers", "1") == local
    assert audit_json(capsys, mech, *base, "--executor", "processes", "--workers", "2") == local
    assert audit_json(capsys, mech, *base[:-1], "8") != local


def test_audit_several_pairs(capsys: pytest.CaptureFixture[str], mech: Path) -> None:
    for name in ("PAIRS", "make_pairs"):
        code, out, err = run(capsys, "audit", "--target", f"{mech}:release", "--neighbours", f"{mech}:{name}",
                             "--mu", "0.5", "--trials", "10000", "--json")
        obj = json.loads(out)
        assert code == 0 and obj["pairs"] == 2 and obj["strongest_pair"] == 1


@pytest.mark.parametrize(("target", "neighbours", "extra", "match"), [
    ("bad_shape", "PAIR", ["--mu", "1"], "shape"),
    ("crashes", "PAIR", ["--mu", "1"], "RuntimeError: boom"),
    ("release", "NOT_A_PAIR", ["--mu", "1"], "must be a pair"),
    ("missing", "PAIR", ["--mu", "1"], "has no name 'missing'"),
    ("release", "PAIR", [], "--epsilon and --delta, or --mu"),
    ("release", "PAIR", ["--mu", "1", "--epsilon", "1"], "not both"),
    ("release", "PAIR", ["--mu", "-1"], "mu"),
    ("release", "PAIR", ["--mu", "1", "--confidence", "1.5"], "confidence"),
    ("release", "PAIR", ["--mu", "1", "--trials", "0"], "trials"),
    ("release", "PAIR", ["--mu", "1", "--executor", "dask"], "scheduler"),
    ("release", "PAIR", ["--mu", "1", "--attack", "nofile.py:score"], "no such file"),
])
def test_bad_input_is_one_error_line(capsys: pytest.CaptureFixture[str], mech: Path, target: str, neighbours: str,
                                     extra: list[str], match: str) -> None:
    code, out, err = run(capsys, "audit", "--target", f"{mech}:{target}", "--neighbours", f"{mech}:{neighbours}",
                         "--trials", "1000", *extra, "--json")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and match in err, err


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "audit", "--target", f"{tmp_path}/none.py:f", "--neighbours", "x.py:P", "--mu", "1")
    assert code == 2 and out == "" and "no such file" in err


def test_dask_executor_gives_the_same_json(capsys: pytest.CaptureFixture[str], mech: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    base = ["--mu", "0.5", "--trials", "6000", "--chunk-size", "1000", "--seed", "7"]
    local = audit_json(capsys, mech, *base)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        remote = audit_json(capsys, mech, *base, "--executor", "dask", "--scheduler", cluster.scheduler_address)
    assert remote == local
