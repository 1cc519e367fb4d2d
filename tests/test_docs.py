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
