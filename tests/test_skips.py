"""The skips a run may make (tests/support/skips.py): each declared with why; any other fails .ci/run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from skips import DECLARED, undeclared

ROOT = Path(__file__).resolve().parents[1]


def test_declared_reasons_pass_and_others_do_not() -> None:
    seen = [
        ("a", "no headless Chromium: apt-get install chromium and pip install playwright (missing: Chromium)"),
        ("b", "seed file /x/003.txt not available (set DPKIT_SEEDS)"),
        ("c", "could not import 'gymnasium': No module named 'gymnasium'"),
        ("d", "the second tier's time budget of 720 s is spent"),
        ("e", "no atheris here"),
    ]
    assert undeclared(seen) == [("d", "the second tier's time budget of 720 s is spent")]
    assert all(why for _, why in DECLARED)


def test_an_undeclared_skip_fails_a_strict_run(tmp_path: Path) -> None:
    (tmp_path / "test_one.py").write_text(
        "import pytest\n\n\ndef test_skipped():\n    pytest.skip('for no declared reason')\n\n\n"
        "def test_runs():\n    pass\n",
        encoding="utf-8",
    )
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), str(tmp_path)]
    conftest = ["-p", "conftest"]  # tests/conftest.py, whose summary counts the run's tests and its skips
    env = {"PYTHONPATH": f"{ROOT / 'tests'}:{ROOT / 'tests' / 'support'}"}
    lenient = subprocess.run(args + conftest, capture_output=True, text=True, env=env | _base_env(), check=False)
    assert lenient.returncode == 0, lenient.stdout + lenient.stderr
    assert "dpkit: 1 tests ran, 1 skipped" in lenient.stdout
    strict = subprocess.run(
        args + conftest,
        capture_output=True,
        text=True,
        env=env | _base_env() | {"DPKIT_STRICT_SKIPS": "1"},
        check=False,
    )
    assert strict.returncode == 1 and "not declared" in strict.stdout, strict.stdout


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "VIRTUAL_ENV")}
