"""The distribution installs one top-level import, ``dpkit``, and nothing else (issue 16, item 1).

Builds the wheel from the working tree (``--no-deps``; the build backend comes from the index, as in any install),
checks the
top-level names it contains, installs it into a scratch directory and imports from a directory that
is not the repository, so that neither the source folders nor an editable install can mask a fault.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    (built,) = out.glob("dpkit-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_holds_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"dpkit"}
    for package in ("accountant", "algorithms", "algorithms/envs", "audits", "reports", "commands"):
        assert f"dpkit/{package}/__init__.py" in names
    assert "dpkit/reports/default.toml" in names and "dpkit/reports/report.schema.json" in names
    assert any(n.startswith("dpkit/reports/templates/") for n in names)
    assert not any(n.startswith("dpkit/") and "/tests/" in n for n in names)


@pytest.mark.slow
def test_installed_wheel_imports_only_under_dpkit(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        text=True,
    )
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    # the scratch install first on the path, the repository nowhere on it (the editable finder is not consulted
    # for names the scratch install provides: dpkit resolves there, which the assertion checks)
    code = (
        "import sys, importlib.util\n"
        f"sys.path.insert(0, {str(target)!r})\n"
        "import dpkit, dpkit.accountant, dpkit.audits, dpkit.algorithms, dpkit.reports, dpkit.cli\n"
        f"assert dpkit.__file__.startswith({str(target)!r}), dpkit.__file__\n"
        "for name in ('accountant', 'algorithms', 'audits', 'reports'):\n"
        "    assert importlib.util.find_spec(name) is None, name\n"
        "print(dpkit.calibrate(epsilon=1.0, delta=1e-5).sigma)\n"
    )
    out = subprocess.run([sys.executable, "-I", "-c", code], cwd=elsewhere, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == pytest.approx(3.730631635, rel=1e-9)
