"""The README's examples run as written.

Every Python block executes, in order, each in a namespace of its own; a block headed ``# NAME.py`` is also a
module, written to the directory the console examples run in (with the TOML block as ``ledger.toml``). Every
``$ dpkit …`` command of a console block runs there as a process, as typed (without ``[alternatives]`` and
``# comments``), and prints what the README shows after it: the tokens of the output (split on whitespace and
box-drawing characters) are compared in order, ``…`` standing for any run of tokens or, inside a token, any text."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DPKIT = str(Path(sys.executable).with_name("dpkit"))
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
BOX = "│┃┏┓┗┛━┳┻╇┡┩└┘─┴┬┼╭╮╰╯┌┐├┤═║╔╗╚╝"
#: Commands that take over a minute (measured on the 2-core machine): marked slow, which `make test` still runs
#: (``pytest -m "not slow"`` leaves them out).
SLOW = {
    "dpkit report --out reports/out",  # `make run`
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


def _pattern(shown: str) -> re.Pattern[str]:
    """The README's output as a pattern over the tokens of an output (each followed by one space): ``…`` as a
    token stands for any run of tokens (none included), inside a token for any characters (``0.3804…,``,
    ``[…]}``)."""
    parts = []
    for token in _tokens(shown):
        if token == "…":
            parts.append(r"(?:.*? )?")
        else:
            parts.append(".*?".join(re.escape(part) for part in token.split("…")) + " ")
    return re.compile("".join(parts), re.S)


def _matches(shown: str, actual: str) -> bool:
    """Whether ``actual`` is, token for token, what the README shows (``…`` matching anything)."""
    return _pattern(shown).fullmatch("".join(f"{t} " for t in _tokens(actual))) is not None


def test_the_comparison() -> None:
    assert _matches("a │ b\n┏━┓ c", "a b c")
    assert _matches("a … c", "a c") and _matches("a … c", "a x y c") and _matches("…\nc", "a b c")
    assert _matches('"x": 0.38…, "y": […]}', '"x": 0.3804, "y": [{"z": 1}, 2]}')
    assert not _matches("a b", "a b c") and not _matches("b c", "a b c") and not _matches("a c", "a b c")
    assert not _matches("0.38…,", "0.3804") and not _matches("a … c", "a b")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the README's files (``mech.py``, ``ledger.toml``) and the repository's ``examples/``
    for the commands to run in."""
    work = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", work / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    for body in _blocks("python"):
        first = body.splitlines()[0]
        if re.fullmatch(r"# [\w.]+\.py", first.strip()):
            (work / first[2:].strip()).write_text(body, encoding="utf-8")
    for body in _blocks("toml"):
        (work / "ledger.toml").write_text(body, encoding="utf-8")
    return work


def test_the_readme_has_examples() -> None:
    """A README that loses its examples (or a fence this test no longer reads) fails: 3 and 18 today."""
    assert len(_blocks("python")) >= 3 and len(_commands()) >= 18


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_block_runs(index: int, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = _blocks("python")[index]
    monkeypatch.chdir(workdir)
    exec(compile(body, f"README.md python block {index}", "exec"), {"__name__": f"readme_{index}"})


def _command_cases() -> list[pytest.ParameterSet]:
    cases = []
    for command, shown in _commands():
        slow = " ".join(_typed(command)[0]) in SLOW
        cases.append(pytest.param(command, shown, id=command[:60], marks=[pytest.mark.slow] if slow else []))
    return cases


@pytest.mark.parametrize(("command", "shown"), _command_cases())
def test_console_command_prints_what_the_readme_shows(command: str, shown: str, workdir: Path) -> None:
    """The command runs as a process, as the user types it, in the README's working directory; what the terminal
    shows (stdout and stderr as they interleave, then the exit code where the README echoes it) is compared."""
    argv, echo = _typed(command)
    assert argv[0] == "dpkit"
    env = dict(os.environ, COLUMNS="120", NO_COLOR="1", PYTHONUNBUFFERED="1")
    run = subprocess.run(
        [DPKIT, *argv[1:]], cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    output = run.stdout + (f"exit {run.returncode}\n" if echo else "")
    if not echo:
        assert run.returncode == 0, output
    if shown.strip():  # a command the README shows without output need only run
        assert _matches(shown, output), f"README shows:\n{shown}\n\nthe command printed:\n{output}"
