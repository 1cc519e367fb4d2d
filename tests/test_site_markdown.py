"""What the documentation site renders, checked at its sources (issue 43): every list of every page — and of the
command pages docs/hooks.py generates from ``dpkit COMMAND --help`` — is one Python-Markdown renders as a list
(tests/support/markdown_lists.py), and the docstrings the API reference renders (mkdocstrings, Google style) give
their examples in an ``Examples:`` section, which it shows as code, with no reST literal block (``::``), which it
shows as text. tests/test_site_pages.py checks the built pages themselves (second tier)."""

from __future__ import annotations

import importlib
import inspect
import re
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from markdown_lists import ITEM, list_problems

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "__pycache__" not in p.parts)
#: The modules the API reference renders (docs/reference/api/*.md: ``::: NAME``).
API_MODULES = sorted(
    {m for page in (DOCS / "reference" / "api").glob("*.md") for m in re.findall(r"^::: (\S+)", page.read_text(), re.M)}
)
SECTION = re.compile(r"^(\w[\w ]*):\s*$")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_list_of_a_page_renders_as_a_list(page: Path) -> None:
    assert list_problems(page.read_text(encoding="utf-8")) == []


def _commands() -> Iterator[tuple[list[str], click.Command]]:
    from dpkit.cli import COMMANDS, cli

    ctx = click.Context(cli, info_name="dpkit")
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        yield [name], command
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                subcommand = command.get_command(ctx, sub)
                assert subcommand is not None
                yield [name, sub], subcommand


def test_every_generated_command_page_renders_its_lists() -> None:
    """The command pages and their index, as docs/hooks.py writes them; and the help texts they are made of: a list in
    a command's help is kept as lines (click's ``\\b``) — click and the page's first paragraph would otherwise run it
    into one line (``--attack: - auto (default): … - lr: …``) — and no option's help holds one (click reflows it)."""
    hooks = runpy.run_path(str(DOCS / "hooks.py"))
    commands = dict(hooks["_commands"]())
    assert list_problems(hooks["_index"](commands)) == []
    for name, command in commands.items():
        assert list_problems(hooks["_page"](name, command)) == [], name
    problems = []
    for path, command in _commands():
        for paragraph in (command.help or "").split("\n\n"):
            lines = paragraph.strip("\n").split("\n")
            if any(ITEM.match(line.strip()) for line in lines[1:]) and lines[0].strip() != "\b":
                problems.append(f"dpkit {' '.join(path)}: a list in a help paragraph click rewraps: {lines[0][:60]}")
        for option in command.params:
            text = getattr(option, "help", None) or ""
            if any(ITEM.match(line.strip()) for line in text.split("\n")[1:]):
                problems.append(f"dpkit {' '.join(path)} {option.opts[0]}: a list in an option's help")
    assert problems == []


def _rendered(module: str) -> Iterator[tuple[str, Any]]:
    """The objects of ``module`` whose docstrings the API reference shows: the module, its public names (``__all__``)
    that are functions or classes, and their public methods and properties."""
    mod = importlib.import_module(module)
    yield module, mod
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    for name in names:
        obj = getattr(mod, name, None)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        yield f"{module}.{name}", obj
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_"):
                    continue
                function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
                if inspect.isfunction(function):
                    yield f"{module}.{name}.{attr}", function


def docstring_problems(doc: str) -> list[str]:
    """What mkdocstrings (Google style) would not render as written: a doctest outside an ``Examples:`` section (a
    quote bar per ``>``), a reST literal block (a line ending in ``::``), a list that runs into its paragraph."""
    problems = []
    section = None
    for line in doc.split("\n"):
        heading = SECTION.match(line)
        if heading:
            section = heading[1]
        elif line and not line[0].isspace():
            section = None  # a paragraph at the docstring's margin ends the section
        if line.lstrip().startswith(">>>") and section not in ("Examples", "Example"):
            problems.append(f"a doctest outside an Examples: section: {line.strip()[:60]}")
        if line.rstrip().endswith("::"):
            problems.append(f"a reST literal block: {line.strip()[-60:]}")
    return problems + list_problems(doc)


def test_the_api_reference_shows_examples_as_code_and_no_rest_literal() -> None:
    assert {"dpkit", "dpkit.accountant", "dpkit.audits", "dpkit.facade"} <= set(API_MODULES)
    problems = []
    for module in API_MODULES:
        for where, obj in _rendered(module):
            doc = inspect.getdoc(obj) or ""
            problems += [f"{where}: {problem}" for problem in docstring_problems(doc)]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("doc", "found"),
    [
        ("Calibrate.\n\n>>> calibrate()\n3.7\n", "a doctest outside an Examples: section"),
        ("Calibrate.\n\nExamples:\n    >>> calibrate()\n    3.7\n\nMore.\n\n>>> again()\n", "a doctest outside"),
        ("The three jobs::\n\n    dpkit.calibrate()\n", "a reST literal block"),
        ("Options:\n- a\n- b\n", "line 2: a list glued to the paragraph above"),
        ("Calibrate.\n\nExamples:\n    >>> calibrate()\n    3.7\n", None),
    ],
)
def test_the_docstring_check_finds_what_it_should(doc: str, found: str | None) -> None:
    problems = docstring_problems(doc)
    assert (problems == []) if found is None else any(p.startswith(found) for p in problems), problems


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("`--attack`:\n- `auto` (default): …\n- `lr`: …\n", "line 2: a list glued"),
        ("A list:\n\n- a\n  - nested by two\n", "line 4: a list item indented by 2"),
        ("A list:\n\n- a\n\n  more of a, indented by two\n", "line 5: a paragraph of a list item"),
        ("A list:\n\n- a\n\n    more of a\n- b\n", "line 6: a list glued"),
        ("A list:\n\n- a:\n\n  ```toml\n  x = 1\n  ```\n", "line 5: a fenced block of a list item"),
        ("## A heading\n- a\n- b\n\nText.\n\n1. one\n2. two\n    - nested\n\n    ```toml\n    x = 1\n    ```\n", None),
    ],
)
def test_the_list_check_finds_what_it_should(text: str, found: str | None) -> None:
    problems = list_problems(text)
    assert (problems == []) if found is None else any(p.startswith(found) for p in problems), problems
