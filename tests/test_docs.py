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


#: Where the code and the docs cite documents: the README, docs/, and every source file of the repository.
SOURCES = ("accountant", "algorithms", "audits", "reports", "dpkit", "docs", "bench", "tests")


def _texts() -> dict[str, str]:
    paths = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    for folder in SOURCES:
        paths += [p for p in (ROOT / folder).rglob("*") if p.suffix in {".py", ".md", ".j2", ".toml"}]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths if p.is_file()}


def test_every_cited_doc_is_in_the_repository() -> None:
    """The docs the code and the README cite (docs/FORMULAS.md, docs/ledgers.md, …) are in docs/."""
    import re

    texts = _texts()
    cited = {c: name for name, text in texts.items() for c in re.findall(r"\bdocs/[\w.-]+\.md\b", text)}
    assert {"docs/FORMULAS.md", "docs/ledgers.md", "docs/audits.md"} <= set(cited)
    missing = sorted(f"{c} (cited in {name})" for c, name in cited.items() if not (ROOT / c).is_file())
    assert not missing, missing
    # the formulas are cited at their home in the repository, never at the spec folder they were copied from
    pattern = re.compile(r"shared/spec|(?<!docs/)(?<!\.\./)FORMULAS\.md")  # ../FORMULAS.md: a site page's link
    elsewhere = sorted(name for name, text in texts.items() if pattern.search(text) and name != "tests/test_docs.py")
    assert not elsewhere, elsewhere
