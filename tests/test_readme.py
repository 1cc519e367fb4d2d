"""The README's examples run as written: every Python block executes, and every ``$ dpkit …`` command in a
console block runs and prints what the README shows (compared token by token; ``…`` stands for anything)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DPKIT = str(Path(sys.executable).with_name("dpkit"))
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
BOX = "│┃┏┓┗┛━┳┻╇┡┩└┘─┴┬┼╭╮╰╯┌┐├┤═║╔╗╚╝"
#: Commands too slow for the suite, with what runs them instead.
SLOW = {
    "dpkit report --out reports/out": "`make run` runs it",
    "dpkit audit --target mech.py:release --neighbours mech.py:PAIR --mu 0.268 --trials 1000000 "
    "--json": "10⁶ trials per dataset; tests/dpkit/test_cli_audit.py audits the same mechanism at 2·10⁴",
}


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README) if lang == language]


def _commands() -> list[tuple[str, str]]:
    """(command line as typed, the output the README shows after it) for every ``$ dpkit`` line."""
    out = []
    for body in _blocks("console"):
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


def _typed(command: str) -> tuple[list[str], bool]:
    """The argv the user types (no ``[alternatives]``, no ``# comment``) and whether ``; echo "exit $?"`` follows."""
    echo = '; echo "exit $?"' in command
    command = command.replace('; echo "exit $?"', "")
    command = re.sub(r"\s+#.*$", "", command)
    command = re.sub(r"\s*\[[^\]]*\]", "", command)
    return shlex.split(command), echo


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(rf"[\s{BOX}]+", text) if t]


def _matches(shown: str, actual: str) -> bool:
    """Whether ``actual`` holds the tokens of ``shown`` in a row, ``…`` matching any run of characters (the README
    may leave out a table's title or caption, never change a line it shows)."""
    pattern = r"\s+".join(
        r".*?" if token == "…" else ".*?".join(re.escape(part) for part in token.split("…")) for token in _tokens(shown)
    )
    return re.search(rf"(?:^|\s){pattern}(?:\s|$)", " ".join(_tokens(actual)), re.S) is not None


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the README's files (``mech.py``, ``ledger.toml``) for the commands to run in."""
    work = tmp_path_factory.mktemp("readme")
    for body in _blocks("python"):
        first = body.splitlines()[0]
        if re.fullmatch(r"# [\w.]+\.py", first.strip()):
            (work / first[2:].strip()).write_text(body, encoding="utf-8")
    for body in _blocks("toml"):
        (work / "ledger.toml").write_text(body, encoding="utf-8")
    return work


def test_the_readme_has_examples() -> None:
    assert len(_blocks("python")) >= 3 and len(_commands()) >= 15


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_block_runs(index: int, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = _blocks("python")[index]
    monkeypatch.chdir(workdir)
    exec(compile(body, f"README.md python block {index}", "exec"), {"__name__": f"readme_{index}"})


@pytest.mark.parametrize(("command", "shown"), _commands(), ids=[c[:60] for c, _ in _commands()])
def test_console_command_prints_what_the_readme_shows(command: str, shown: str, workdir: Path) -> None:
    argv, echo = _typed(command)
    if " ".join(argv) in SLOW:
        pytest.skip(SLOW[" ".join(argv)])
    assert argv[0] == "dpkit"
    env = dict(os.environ, COLUMNS="120", NO_COLOR="1")
    run = subprocess.run([DPKIT, *argv[1:]], cwd=workdir, capture_output=True, text=True, env=env, timeout=600)
    output = run.stdout + (f"exit {run.returncode}\n" if echo else "")
    if not echo:
        assert run.returncode == 0, run.stderr
    if shown.strip():  # a command the README shows without output need only run
        assert _matches(shown, output), f"README shows:\n{shown}\n\nthe command printed:\n{output}"
