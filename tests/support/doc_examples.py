"""The code examples of a Markdown page (the README, the site's pages under docs/), read and run as a user would.

* A fenced ``console`` block holds ``$ dpkit …`` command lines (a line ending in ``\\`` continues on the next), each
  followed by the output the page shows. The command runs as a process, as typed (without ``[alternatives]`` and
  ``# comments``; ``; echo "exit $?"`` appends the exit code), and prints what the page shows: the tokens of the
  output (split on whitespace and box-drawing characters) are compared in order, ``…`` standing for any run of
  tokens or, inside a token, any text. A command shown with no output need only succeed.
* A fenced ``python`` block executes in a namespace of its own; a ``pycon`` block (``>>>`` prompts) runs as a
  doctest, with ``...`` matching any text.
* A block (python, toml, json) whose first line is ``# NAME.py`` / ``# NAME.toml`` (``// NAME.json`` is not JSON, so a
  JSON file is named by a ``<!-- file: NAME.json -->`` line just above its fence) is also a file of the page: every
  example of the page runs in a fresh directory holding the page's files and a copy of the repository's
  ``examples/``. So each block stands alone: a command reading what another wrote runs that command first in its own
  block.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DPKIT = str(Path(sys.executable).with_name("dpkit"))
BLOCK = re.compile(r"^(?:<!-- file: (?P<file>[\w.-]+) -->\n)?```(?P<lang>\w+)\n(?P<body>.*?)^```", re.S | re.M)
HEADER = re.compile(r"(?:#|//) ([\w.-]+\.(?:py|toml|json))")
BOX = "│┃┏┓┗┛━┳┻╇┡┩└┘─┴┬┼╭╮╰╯┌┐├┤═║╔╗╚╝"


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, its text, its line in the page and the file it names (if any)."""

    lang: str
    body: str
    line: int
    file: str | None


def blocks(text: str) -> list[Block]:
    out = []
    for m in BLOCK.finditer(text):
        body = m["body"]
        first = body.splitlines()[0].strip() if body.strip() else ""
        header = HEADER.fullmatch(first)
        name = m["file"] or (header[1] if header else None)
        out.append(Block(m["lang"], body, text.count("\n", 0, m.start("body")) + 1, name))
    return out


def commands(body: str) -> list[tuple[str, str]]:
    """(command line as typed, the output shown after it) for every ``$ `` line of a console block."""
    out = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            i += 1
            continue
        command = line[2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        out.append((command, "\n".join(shown)))
    return out


def typed(command: str) -> tuple[list[str], bool]:
    """The argv the user types (no ``[alternatives]``, no ``# comment``) and whether ``; echo "exit $?"`` follows."""
    echo = '; echo "exit $?"' in command
    command = command.replace('; echo "exit $?"', "")
    command = re.sub(r"\s+#.*$", "", command)
    command = re.sub(r"\s*\[[^\]]*\]", "", command)
    return shlex.split(command), echo


def tokens(text: str) -> list[str]:
    return [t for t in re.split(rf"[\s{BOX}]+", text) if t]


def pattern(shown: str) -> re.Pattern[str]:
    """The page's output as a pattern over the tokens of an output (each followed by one space): ``…`` as a
    token stands for any run of tokens (none included), inside a token for any characters (``0.3804…,``,
    ``[…]}``)."""
    parts = []
    for token in tokens(shown):
        if token == "…":
            parts.append(r"(?:.*? )?")
        else:
            parts.append(".*?".join(re.escape(part) for part in token.split("…")) + " ")
    return re.compile("".join(parts), re.S)


def matches(shown: str, actual: str) -> bool:
    """Whether ``actual`` is, token for token, what the page shows (``…`` matching anything)."""
    return pattern(shown).fullmatch("".join(f"{t} " for t in tokens(actual))) is not None


def workdir(where: Path, page: list[Block]) -> Path:
    """A directory holding the page's files and a copy of the repository's ``examples/``."""
    where.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "examples", where / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    for block in page:
        if block.file:
            (where / block.file).write_text(block.body, encoding="utf-8")
    return where


def run_console(body: str, cwd: Path) -> None:
    """Runs every command of a console block in order, in ``cwd``; fails on the first that does not print what the
    page shows (or, echoing no exit code, does not succeed)."""
    env = dict(os.environ, COLUMNS="120", NO_COLOR="1", PYTHONUNBUFFERED="1")
    for command, shown in commands(body):
        argv, echo = typed(command)
        assert argv[0] == "dpkit", command
        run = subprocess.run(
            [DPKIT, *argv[1:]], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        output = run.stdout + (f"exit {run.returncode}\n" if echo else "")
        if not echo:
            assert run.returncode == 0, f"$ {command}\n{output}"
        if shown.strip():
            assert matches(shown, output), f"$ {command}\n\nthe page shows:\n{shown}\n\nthe command printed:\n{output}"


def run_python(body: str, cwd: Path, name: str) -> None:
    """Executes a python block in a namespace of its own, in ``cwd`` (which is on ``sys.path`` for its imports)."""
    old = Path.cwd()
    os.chdir(cwd)
    sys.path.insert(0, str(cwd))
    try:
        exec(compile(body, name, "exec"), {"__name__": name.replace(" ", "_")})
    finally:
        sys.path.remove(str(cwd))
        os.chdir(old)


def run_pycon(body: str, cwd: Path, name: str) -> None:
    """Runs a pycon block as a doctest (``...`` matches any text), in ``cwd``."""
    test = doctest.DocTestParser().get_doctest(body, {"__name__": name}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    old = Path.cwd()
    os.chdir(cwd)
    try:
        results = runner.run(test, out=report.append)
    finally:
        os.chdir(old)
    assert results.failed == 0, "".join(report)


def run_block(block: Block, cwd: Path, name: str) -> None:
    """Runs one console, pycon or python block of a page (``name`` says where, in a failure) in ``cwd``."""
    if block.lang == "console":
        run_console(block.body, cwd)
    elif block.lang == "pycon":
        run_pycon(block.body, cwd, name)
    else:
        run_python(block.body, cwd, name)
