"""Errors of a user's own code (issue 43): one ``error:`` line (exit 2, no traceback) naming the user's file and
line, the exception, and the call dpkit made with the signature it expects; no internal class name in it."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from cli_runs import run

from dpkit.loading import FileFunction
from dpkit.user_code import UserCodeError

USER = """import numpy as np

PAIR = ([0.0], [0.0, 1.0])


def bad_index(dataset, rng, n):
    return dataset["x"] + rng.standard_normal((n, 1))


def two_args(dataset, rng):
    return rng.standard_normal((1, 1))


def crashes(dataset, rng, n):
    return {}["missing"]


def no_protocol(name, env, episodes, rng, **options):
    return object()
"""
#: The lines of USER the messages must name.
LINES = {"bad_index": 7, "two_args": 10, "crashes": 15}
#: The example local-DP agent with a method that fails, and one that does not take dpkit's call.
AGENT = Path(__file__).resolve().parents[2] / "examples" / "ldp_agent.py"
PLAN = "    def plan(self, k: int) -> Plan:\n"


@pytest.fixture()
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(USER, encoding="utf-8")
    agent = AGENT.read_text(encoding="utf-8")
    assert agent.count(PLAN) == 1
    failing = PLAN + '        if k >= 1:\n            raise KeyError("oops")\n'
    (tmp_path / "failing_agent.py").write_text(agent.replace(PLAN, failing), encoding="utf-8")
    (tmp_path / "arity_agent.py").write_text(agent.replace(PLAN, "    def plan(self) -> Plan:\n"), encoding="utf-8")
    (tmp_path / "broken.py").write_text("import numpy\n\nx = undefined_name\n", encoding="utf-8")
    return tmp_path


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, err = run(capsys, *argv)
    lines = [line for line in err.splitlines() if not line.startswith("expected time:")]  # an RL audit's estimate
    assert code == 2 and out == "" and len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "FileFunction" not in err and "_dpkit_user_" not in err, err
    return lines[0]


def _target(name: str) -> list[str]:
    return ["audit", "--target", f"mine.py:{name}", "--neighbours", "mine.py:PAIR", "--mu", "1", "--trials", "200"]


@pytest.mark.parametrize(
    ("name", "raised"),
    [
        ("bad_index", "TypeError: list indices must be integers or slices, not str"),
        ("crashes", "KeyError: 'missing'"),
    ],
)
def test_an_exception_in_a_release_function_names_its_file_and_line(
    capsys: pytest.CaptureFixture[str], files: Path, name: str, raised: str
) -> None:
    error = _error(capsys, *_target(name))
    assert error.startswith(f"error: mine.py:{LINES[name]} ({name}): {raised}"), error
    assert "dpkit calls as release(dataset, rng, n)" in error and f"--target mine.py:{name}" in error


def test_a_release_function_of_the_wrong_arity_is_told_the_signature_dpkit_expects(
    capsys: pytest.CaptureFixture[str], files: Path
) -> None:
    error = _error(capsys, *_target("two_args"))
    assert "must accept dpkit's call release(dataset, rng, n)" in error, error
    assert "two_args() takes 2 positional arguments but 3 were given" in error
    assert f"mine.py:{LINES['two_args']} defines two_args(dataset, rng)" in error


def test_an_error_in_a_worker_process_names_the_file_too(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    error = _error(capsys, *_target("bad_index"), "--executor", "processes", "--workers", "2")
    assert error.startswith("error: mine.py:7 (bad_index): TypeError: list indices"), error


def test_an_agent_following_no_protocol_is_named_as_the_user_wrote_it(
    capsys: pytest.CaptureFixture[str], files: Path
) -> None:
    error = _error(capsys, "audit", "--agent", "mine.py:no_protocol", "--runs", "20")
    assert "'mine.py:no_protocol' must follow one protocol" in error, error


def test_an_exception_in_an_agents_method_names_its_file_line_and_call(
    capsys: pytest.CaptureFixture[str], files: Path
) -> None:
    line = AGENT.read_text(encoding="utf-8").splitlines().index(PLAN.rstrip("\n")) + 3  # the raise, two lines down
    error = _error(capsys, "audit", "--agent", "failing_agent.py:make_agent", "--runs", "20")
    assert error.startswith(f"error: failing_agent.py:{line} (plan): KeyError: 'oops'"), error
    assert error.endswith("in the agent's plan, which dpkit calls as agent.plan(k)")


def test_an_agents_method_of_the_wrong_arity_is_told_the_call(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    error = _error(capsys, "audit", "--agent", "arity_agent.py:make_agent", "--runs", "20")
    assert "plan() takes 1 positional argument but 2 were given; dpkit calls agent.plan(k)" in error, error


def test_a_file_failing_to_import_names_its_line(capsys: pytest.CaptureFixture[str], files: Path) -> None:
    error = _error(capsys, "audit", "--target", "broken.py:f", "--neighbours", "mine.py:PAIR", "--mu", "1")
    said = "importing 'broken.py' failed at broken.py:3: NameError: name 'undefined_name' is not defined"
    assert error == f"error: {said}"


def test_a_file_function_is_shown_as_the_user_wrote_it_and_its_errors_pickle(files: Path) -> None:
    function = FileFunction("--target", "mine.py:crashes")
    assert repr(function) == function.__name__ == "mine.py:crashes"
    with pytest.raises(UserCodeError) as caught:
        function([0.0], None, 1)
    again = pickle.loads(pickle.dumps(caught.value))  # a worker's error reaches the parent whole
    assert isinstance(again, ValueError) and str(again) == str(caught.value)
    assert str(again).startswith("mine.py:15 (crashes): KeyError")
