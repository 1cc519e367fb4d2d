"""``import dpkit``: the three jobs and the main types, lazily imported and equal to the API underneath."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpkit
from dpkit.accountant import calibrate_sigma, gaussian_epsilon
from dpkit.audits import Claim, audit_pair
from dpkit.reports.config import parse_config


def test_import_dpkit_imports_nothing_heavy() -> None:
    code = (
        "import sys, dpkit; print(sorted(m for m in ('numpy', 'scipy', 'dp_accounting', 'matplotlib') if m in "
        "sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_exported_name_resolves() -> None:
    for name in dpkit.__all__:
        assert getattr(dpkit, name) is not None
    assert set(dpkit.__all__) <= set(dir(dpkit))
    with pytest.raises(AttributeError, match="no attribute 'calibrate_sigma'"):
        dpkit.calibrate_sigma  # noqa: B018


@pytest.mark.parametrize("method", ["exact", "rdp", "classic"])
def test_calibrate_is_calibrate_sigma(method: str) -> None:
    ours = dpkit.calibrate(epsilon=0.7, delta=1e-6, compositions=50, sensitivity=2.0, method=method)
    assert ours == calibrate_sigma(0.7, 1e-6, sensitivity=2.0, compositions=50, method=method)
    assert dpkit.gaussian_epsilon(ours.sigma, 1e-6, compositions=50, sensitivity=2.0, method=method).epsilon <= 0.7


def test_calibrate_refuses_positional_arguments() -> None:
    with pytest.raises(TypeError):
        dpkit.calibrate(1.0, 1e-5, 1000)  # type: ignore[misc]


def test_gaussian_epsilon_is_the_accountants() -> None:
    assert dpkit.gaussian_epsilon(3.0, 1e-5, compositions=4) == gaussian_epsilon(3.0, 1e-5, compositions=4)


def _release(dataset: float, rng: np.random.Generator, n: int) -> np.ndarray:
    return dataset + rng.normal(0.0, 1.0, size=(n, 1))


def test_audit_is_the_engines_audit() -> None:
    claim = Claim.gdp(1.0)
    ours = dpkit.audit(_release, 0.0, 1.0, claim=claim, runs=4000, seed=3, attack="histogram")
    theirs = audit_pair(_release, 0.0, 1.0, claim, runs=4000, seed=3, attack="histogram")
    assert ours.to_dict() == theirs.to_dict()
    assert ours.verdict != "violation"
    # a release four times less noisy than the claim is caught
    loud = dpkit.audit(_release, 0.0, 4.0, claim=claim, runs=4000, seed=3, attack="histogram")
    assert loud.verdict == "violation"


def test_report_writes_the_files(tmp_path: Path) -> None:
    config = parse_config(
        {
            "seeds": 1,
            "workers": 1,
            "deltas": [1e-4],
            "algorithm": [
                {
                    "name": "ldp-ucrl-vtr",
                    "states": 2,
                    "episodes": 20,
                    "epsilon": 1.0,
                    "delta": 0.1,
                    "audit": {"enabled": False},
                }
            ],
        },
        "tiny.toml",
    )
    out = tmp_path / "report"
    files = dpkit.report(config, out=out)
    assert "report.json" in files and (out / "report.json").is_file()
    assert json.loads((out / "report.json").read_text())["summary"][0]["algorithm"] == "ldp-ucrl-vtr"


def test_report_refuses_a_bad_config_before_writing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('seeds = -1\n\n[[algorithm]]\nname = "rlsvi"\nstates = 2\nepisodes = 10\ndelta = 0.1\n')
    with pytest.raises(ValueError, match="seeds"):
        dpkit.report(bad, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()
