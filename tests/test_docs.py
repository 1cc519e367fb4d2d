"""Generated documentation stays in step with the code."""

from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ledgers_doc_is_current() -> None:
    module = runpy.run_path(str(ROOT / "docs" / "make_ledgers.py"))
    assert (ROOT / "docs" / "ledgers.md").read_text(encoding="utf-8") == module["render"](), (
        "docs/ledgers.md is stale: run `make docs`"
    )


def test_every_cited_doc_is_in_the_repository() -> None:
    """The docs the code and the README cite (docs/FORMULAS.md, docs/ledgers.md, …) are in docs/."""
    import re

    cited = set()
    for path in [ROOT / "README.md", *ROOT.glob("[a-z]*/**/*.py")]:
        if ".venv" in path.parts:
            continue
        cited.update(re.findall(r"\bdocs/[\w-]+\.md\b", path.read_text(encoding="utf-8")))
    assert "docs/FORMULAS.md" in cited
    missing = sorted(c for c in cited if not (ROOT / c).is_file())
    assert not missing, missing
