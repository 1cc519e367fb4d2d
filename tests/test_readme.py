"""The README's examples run as written, as the site's do (tests/support/doc_examples.py says how a console, python
or pycon block is read and run): every ``$ dpkit …`` command prints what the README shows after it, every Python
block executes, each in a fresh directory holding the README's files (``mech.py``) and a copy of ``examples/``. The
README is the front door: at most 200 lines, its links into the site resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_examples import ROOT, Block, blocks, commands, matches, run_block, typed, workdir

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = blocks(README)
#: Commands that take more than ~10 s on the 2-core machine: marked slow (``pytest -m "not slow"`` leaves them out).
SLOW = {
    "dpkit report --config examples/my_report.toml --out my_report",
}


def test_the_comparison() -> None:
    assert matches("a │ b\n┏━┓ c", "a b c")
    assert matches("a … c", "a c") and matches("a … c", "a x y c") and matches("…\nc", "a b c")
    assert matches('"x": 0.38…, "y": […]}', '"x": 0.3804, "y": [{"z": 1}, 2]}')
    assert not matches("a b", "a b c") and not matches("b c", "a b c") and not matches("a c", "a b c")
    assert not matches("0.38…,", "0.3804") and not matches("a … c", "a b")


def test_the_readme_is_the_front_door() -> None:
    """At most 200 lines, the two commands first, an example per job, and its relative links land on files."""
    assert len(README.splitlines()) <= 200
    first = next(b for b in BLOCKS)
    assert "make run" in first.body and "make test" in first.body
    typed_commands = [" ".join(typed(c)[0]) for b in BLOCKS if b.lang == "console" for c, _ in commands(b.body)]
    for job in ("dpkit calibrate", "dpkit audit", "dpkit report"):
        assert any(c.startswith(job) for c in typed_commands), job
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert links and all((ROOT / link).is_file() for link in links), [x for x in links if not (ROOT / x).is_file()]


def _cases() -> list[pytest.ParameterSet]:
    cases = []
    for block in BLOCKS:
        if block.lang not in {"console", "python", "pycon"}:
            continue
        slow = block.lang == "console" and any(" ".join(typed(c)[0]) in SLOW for c, _ in commands(block.body))
        cases.append(pytest.param(block, id=f"README.md:{block.line}", marks=[pytest.mark.slow] if slow else []))
    return cases


@pytest.mark.parametrize("block", _cases())
def test_example_runs(block: Block, tmp_path: Path) -> None:
    cwd = workdir(tmp_path / "work", BLOCKS)
    name = f"README.md line {block.line}"
    run_block(block, cwd, name)
