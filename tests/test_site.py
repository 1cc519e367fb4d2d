"""Every code example on every page of the documentation site runs as written (tests/support/doc_examples.py says
how a page's console, python and pycon blocks are read and run).

The pages are the Markdown files under docs/ (mkdocs.yml's ``docs_dir``). Each runnable block is one test, in a
fresh directory holding the page's files; a block with a command that takes more than ~10 s on the 2-core machine
is marked slow (SLOW, measured), and so is a block of commands that together take more than ~4 s or a Python
block on a page of SLOW_PAGES (process pools, clusters), so ``pytest -m "not slow"`` (``make test``) leaves it to the
second tier, which runs every example.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_examples import ROOT, Block, blocks, commands, run_block, typed, workdir

DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "__pycache__" not in p.parts)
RUNNABLE = {"console", "python", "pycon"}
#: Command lines (as typed, normalised by ``typed``) that take more than ~10 s on the 2-core machine, or whose
#: block takes more than ~4 s (measured with ``--durations``).
SLOW = {
    "dpkit ledger events.toml --delta 1e-5",
    "dpkit ledger ledger.toml --delta 1e-6",
    "dpkit epsilon --event examples/mnist_dp_sgd.json --delta 1e-5 --method rdp",
    "dpkit convert zcdp --rho 0.5 --delta 1e-5",
    "dpkit methods --sigma 3.7306 --delta 1e-5",
    "dpkit audit --target mech.py:release --neighbours mech.py:PAIR --mu 0.268 --trials 100000",
    "dpkit audit --target examples/gaussian_sum.py:release_half_sigma --one-run --canary-records "
    "examples/gaussian_sum.py:canaries --mu 0.92493 --json",
    "dpkit report --out reports/out",
    "dpkit report --config examples/my_report.toml --out my_report",
    "dpkit audit ldp-ucrl-vtr --runs 4000 --seed 1 --max-time 1h",
    "dpkit audit rlsvi --runs 200",
    "dpkit audit --agent examples/jdp_agent.py:CountingAgent --sigma paper --runs 600 --seed 1",
    "dpkit audit --agent examples/jdp_agent.py:ExactPlanner --sigma paper --runs 600 --seed 1",
    "dpkit simulate ldp-ucrl-vtr --env gymnasium:FrozenLake-v1,is_slippery=false --horizon 8 --episodes 200 "
    "--seeds 2 --epsilon 8 --delta 1e-5 --out fl",
    "dpkit audit --agent my_agent.py:make_agent --one-run --epsilon 1 --delta 1e-5",
    "dpkit audit --agent examples/jdp_agent.py:CountingAgent --runs 1000",
    "dpkit audit --agent examples/jdp_agent.py:Unnoised --one-run --sigma paper --canaries 20000 --seed 2 "
    "--attack auto --json",
    "dpkit audit --agent examples/jdp_agent.py:SharedNoise --one-run --sigma paper --canaries 5000 --seed 2 "
    "--attack auto --json",
    "dpkit audit --agent examples/jdp_prefix_agent.py:FreshPrefixAgent --sigma paper --runs 600 --seed 1",
    "dpkit audit --agent examples/jdp_agent.py:SharedNoise --sigma paper --runs 600 --seed 1",
    "dpkit audit --agent billboard_agent.py:BillboardAgent --sigma paper --runs 600 --seed 1",
    "dpkit audit --agent my_agent.py:make_agent --runs 1000 --max-time 1h",
    "dpkit budgets --compositions 1,1000 --epsilons 0.5,1,4",
    "dpkit calibrate --epsilon 3 --delta 1e-5 --dataset-size 60000 --batch-size 256 --epochs 60 --save-event run.json",
    "dpkit audit --target mech.py:release --neighbours mech.py:PAIR --mu 0.268 --trials 1000000 --json",
    "dpkit audit --target mech.py:release --neighbours mech.py:PAIR --mu 0.268 --trials 1000000 --sequential --json",
    "dpkit simulate ldp-ucrl-vtr --env riverswim --states 2 --episodes 2000 --seeds 3 --epsilon 10 --delta 0.1 "
    "--sigma tight --out out/",
    "dpkit audit --target mech.py:release --neighbours mech.py:PAIR --mu 0.268 --trials 200000 --executor dask "
    "--workers 2 --json",
    "dpkit audit --train examples/dp_sgd_train.py:train --examples examples/dp_sgd_train.py:DATASET "
    "--noise-multiplier 3.42 --sampling-rate 1 --steps 10 --parameters 2048",
}


def _page_blocks(page: Path) -> list[Block]:
    return blocks(page.read_text(encoding="utf-8"))


#: Pages whose Python blocks start process pools or clusters, or train a model (seconds each).
SLOW_PAGES = {"how-to/dask.md", "how-to/audit-dp-sgd.md"}


def _slow(block: Block, page: str) -> bool:
    if block.lang != "console":
        return block.lang == "python" and page in SLOW_PAGES
    return any(" ".join(typed(command)[0]) in SLOW for command, _ in commands(block.body))


def _cases() -> list[pytest.ParameterSet]:
    cases = []
    for page in PAGES:
        for block in _page_blocks(page):
            if block.lang not in RUNNABLE or (block.lang == "python" and block.file and not block.file.endswith(".py")):
                continue
            name = f"{page.relative_to(DOCS)}:{block.line}"
            marks = [pytest.mark.slow] if _slow(block, str(page.relative_to(DOCS))) else []
            cases.append(pytest.param(page, block, id=name, marks=marks))
    return cases


CASES = _cases()


def test_the_site_has_examples() -> None:
    """A site that loses its examples (or a fence this test no longer reads) fails."""
    langs = [case.values[1].lang for case in CASES]  # type: ignore[union-attr]
    assert langs.count("console") >= 25 and langs.count("python") >= 5
    # every slow command named above is still on a page (a renamed one would silently move to the fast tier)
    typed_commands = {
        " ".join(typed(c)[0])
        for case in CASES
        for c, _ in commands(case.values[1].body)  # type: ignore[union-attr]
    }
    assert SLOW <= typed_commands, sorted(SLOW - typed_commands)


def test_no_example_hides_in_an_unread_fence() -> None:
    """A command or a snippet in a fence this test does not run (```sh, ```bash, ```text holding ``$ dpkit``) would
    go stale unseen: every ``$ dpkit`` line is in a console block."""
    for page in PAGES:
        for block in _page_blocks(page):
            if block.lang not in RUNNABLE:
                stray = [line for line in block.body.splitlines() if re.match(r"\$ dpkit", line)]
                assert not stray, f"{page.relative_to(DOCS)}:{block.line}: {stray}"


def _run_example(page: Path, block: Block, tmp_path: Path) -> None:
    cwd = workdir(tmp_path / "work", _page_blocks(page))
    name = f"{page.relative_to(DOCS)} line {block.line}"
    run_block(block, cwd, name)


@pytest.mark.parametrize(("page", "block"), [case for case in CASES if not case.marks])
def test_example_runs(page: Path, block: Block, tmp_path: Path) -> None:
    _run_example(page, block, tmp_path)


def _slow_example_class(case: pytest.ParameterSet) -> type:
    """A class of one slow example: pytest-xdist's ``--dist loadscope`` sends a module's tests to one worker but
    each class to its own, so the slow examples (minutes each) run side by side instead of one after another."""

    @pytest.mark.parametrize(("page", "block"), [case])
    def test_example_runs(self: object, page: Path, block: Block, tmp_path: Path) -> None:
        _run_example(page, block, tmp_path)

    suffix = re.sub(r"\W", "_", str(case.id))
    return type(f"TestSlowExample_{suffix}", (), {"test_example_runs": test_example_runs})


for _case in CASES:
    if _case.marks:
        _cls = _slow_example_class(_case)
        globals()[_cls.__name__] = _cls
