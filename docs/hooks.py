"""MkDocs hooks of the documentation site (mkdocs.yml names this file).

* The command reference is generated from the command line itself: a page per command of
  :data:`dpkit.cli.COMMANDS` (and its subcommands, for a group such as ``convert``) holding what
  ``dpkit COMMAND --help`` prints, listed under *Reference → Commands* in the navigation.
* The API reference reads the installed layout (``dpkit.accountant``, ``dpkit.audits``, …), whose folders live at the
  repository root: the folders are linked into ``build/api/dpkit`` first, as ``make typecheck`` links them for mypy,
  and mkdocstrings reads them there. The docstrings' Sphinx roles (``:class:`~dpkit.x.Y` ``) are shown as the code
  they name (``Y``), not as the role's text.
* The search works from disk (``build/site/index.html`` opened as a file): :func:`on_post_build` writes the index as
  a script, and docs/javascripts/file-worker.js runs the theme's search worker where a file:// page can start none.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import click
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[1]
#: Where the command pages sit in the site.
COMMANDS_DIR = "reference/commands"
#: The width the help is wrapped at: what an 80-column terminal shows, and what a code block of the theme shows
#: without a scroll bar in a 1280-px window.
WIDTH = 80


def _commands() -> dict[str, click.Command]:
    from dpkit.cli import COMMANDS, cli

    ctx = click.Context(cli, info_name="dpkit")
    found = {name: cli.get_command(ctx, name) for name in COMMANDS}
    return {name: command for name, command in found.items() if command is not None}


def command_help(path: list[str]) -> str:
    """What ``dpkit PATH… --help`` prints, at a width of WIDTH columns."""
    from dpkit.cli import cli

    ctx = click.Context(cli, info_name="dpkit", terminal_width=WIDTH, max_content_width=WIDTH)
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        sub = command.get_command(ctx, name)
        assert sub is not None, f"no command dpkit {' '.join(path)}"
        ctx = click.Context(sub, info_name=name, parent=ctx, terminal_width=WIDTH, max_content_width=WIDTH)
        command = sub
    return command.get_help(ctx)


def _page(name: str, command: click.Command) -> str:
    lines = [
        f"# dpkit {name}",
        "",
        " ".join((command.help or "").split("\n\n")[0].split()),  # the help's first paragraph
        "",
        "Generated at build time from the command line itself: this is what `dpkit " + name + " --help` prints.",
        "",
        "```text",
        command_help([name]),
        "```",
    ]
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=name)
        for sub in command.list_commands(ctx):
            lines += ["", f"## dpkit {name} {sub}", "", "```text", command_help([name, sub]), "```"]
    return "\n".join(lines) + "\n"


def _index(commands: dict[str, click.Command]) -> str:
    lines = [
        "# Commands",
        "",
        "Every command takes `--json` and then prints exactly one JSON object on stdout. Bad input — a value out of",
        "range, an option that does not apply, an option another tool would name — is one line `error: …` on",
        "stderr and exit code 2, never a traceback. `dpkit audit` exits 1 on a `violation`, so an audit can gate CI.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    lines += [f"| [`dpkit {n}`]({n}.md) | {c.get_short_help_str(limit=150)} |" for n, c in commands.items()]
    lines += ["", "```text", command_help([]), "```"]
    return "\n".join(lines) + "\n"


def _link_api_tree(root: Path) -> None:
    """build/api/dpkit: the dpkit package as installed (its own modules and the four folders mapped into it)."""
    target = root / "dpkit"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for path in (ROOT / "dpkit").iterdir():
        if path.name != "__pycache__":
            os.symlink(path, target / path.name)
    for folder in ("accountant", "algorithms", "audits", "reports"):
        os.symlink(ROOT / folder, target / folder)


def on_startup(**kwargs: Any) -> None:
    # before any plugin's on_config: mkdocstrings looks its paths up there
    _link_api_tree(ROOT / "build" / "api")


def on_config(config: MkDocsConfig, **kwargs: Any) -> MkDocsConfig:
    commands = _commands()
    entry = {"Commands": [f"{COMMANDS_DIR}/index.md", *({f"dpkit {n}": f"{COMMANDS_DIR}/{n}.md"} for n in commands)]}
    for section in config.nav or []:
        if isinstance(section, dict) and "Reference" in section:
            section["Reference"].insert(1, entry)
            break
    else:
        raise ValueError("mkdocs.yml: no Reference section in nav to list the commands in")
    return config


def on_files(files: Files, config: MkDocsConfig, **kwargs: Any) -> Files:
    commands = _commands()
    files.append(File.generated(config, f"{COMMANDS_DIR}/index.md", content=_index(commands)))
    for name, command in commands.items():
        files.append(File.generated(config, f"{COMMANDS_DIR}/{name}.md", content=_page(name, command)))
    return files


def on_post_build(config: MkDocsConfig, **kwargs: Any) -> None:
    """search/search_index.js: the search index as a script (``var __index = …``), which the theme loads instead of
    fetching search_index.json where the site is opened from disk (file://, where nothing can be fetched); with
    docs/javascripts/file-worker.js the search then works there too."""
    index = Path(config.site_dir) / "search" / "search_index.json"
    if index.is_file():
        text = index.read_text(encoding="utf-8")
        (index.parent / "search_index.js").write_text(f"var __index = {text}\n", encoding="utf-8")


#: A Sphinx role as the docstrings write it, once Markdown has rendered it: ``:class:<code>~dpkit.x.Y</code>``.
ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|exc|obj):<code>(~?)([^<]+)</code>")


def on_page_content(html: str, page: Page, **kwargs: Any) -> str:
    return ROLE.sub(lambda m: f"<code>{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}</code>", html)
