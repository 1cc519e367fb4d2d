"""A report replaces its --out atomically: a fault in any file move keeps the previous complete report,
and a new report leaves no stale files of an older one."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dpkit.reports import render
from dpkit.reports.config import parse_config
from dpkit.reports.job import compute_report
from dpkit.reports.render import FILES, write_report

CONFIG = {
    "seed": 0,
    "algorithm": [
        {
            "name": "private-linopt-vi",
            "states": 2,
            "episodes": 20,
            "epsilon": 1.0,
            "delta": 0.1,
            "audit": {"enabled": False},
        }
    ],
}


@pytest.fixture(scope="module")
def data() -> dict:
    return compute_report(parse_config(CONFIG, "atomic.toml"), command=["dpkit", "report"])


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _old_report(out: Path) -> dict[str, bytes]:
    """A previous complete report (with a stale figure a new report does not draw)."""
    out.mkdir()
    (out / "figures").mkdir()
    for name in FILES:
        (out / name).write_text(f"old {name}\n", encoding="utf-8")
    (out / "figures" / "stale-figure.png").write_bytes(b"\x89PNG old")
    return _snapshot(out)


def test_a_new_report_leaves_no_stale_files(data: dict, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _old_report(out)
    files = write_report(data, out)
    assert sorted(_snapshot(out)) == sorted(files)
    assert not (out / "figures" / "stale-figure.png").exists()
    assert json.loads((out / "report.json").read_text(encoding="utf-8")) == json.loads(render.report_json(data))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no temporary or old directory left


@pytest.mark.slow
@pytest.mark.parametrize("fail_at", [0, 1, 2])
def test_a_fault_in_any_move_keeps_the_previous_report(
    data: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail_at: int
) -> None:
    out = tmp_path / "out"
    before = _old_report(out)
    real_rename, real_rmtree = os.rename, shutil.rmtree
    calls = {"n": 0}

    def faulty(src: object, dst: object) -> None:
        n = calls["n"]
        calls["n"] += 1
        if n == fail_at:
            raise OSError(28, "No space left on device (injected)")
        real_rename(src, dst)

    def faulty_rmtree(path: object, *args: object, **kwargs: object) -> None:
        if fail_at == 2 and ".old-" in str(path):
            raise KeyboardInterrupt  # interrupted while removing the old report: the new one is already in place
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(os, "rename", faulty)
    monkeypatch.setattr(os, "replace", faulty)
    monkeypatch.setattr(shutil, "move", faulty)
    monkeypatch.setattr(shutil, "rmtree", faulty_rmtree)
    if fail_at == 2:  # the two renames succeed: the new report is complete in --out
        with pytest.raises(KeyboardInterrupt):
            write_report(data, out)
        monkeypatch.undo()
        assert json.loads((out / "report.json").read_text(encoding="utf-8")) == json.loads(render.report_json(data))
        return
    with pytest.raises(ValueError, match="cannot write the report"):
        write_report(data, out)
    monkeypatch.undo()
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_interrupt_while_drawing_keeps_the_previous_report(
    data: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    before = _old_report(out)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(render, "render_html", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_report(data, out)
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_directory_that_is_not_a_report_is_refused(data: dict, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match="not a dpkit report"):
        write_report(data, tmp_path)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"
