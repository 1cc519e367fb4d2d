"""``dpkit audit --agent FILE.py:NAME``: a user's own agent audited from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_runs import run

from dpkit.algorithms import registry

AGENT = str(Path(__file__).resolve().parents[2] / "examples" / "ldp_agent.py")


@pytest.fixture(autouse=True)
def _forget_agents():
    yield
    for name in ("make_agent", "make_agent_without_clipping", "Over"):
        if name in registry.names():
            registry.unregister(name)


@pytest.mark.slow
def test_a_correct_agent_is_consistent_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "audit", "--agent", f"{AGENT}:make_agent", "--runs", "1500", "--seed", "1", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["algorithm"] == "make_agent" and result["verdict"] == "consistent"


@pytest.mark.slow
def test_an_agent_without_clipping_is_a_violation_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "audit", "--agent", f"{AGENT}:make_agent_without_clipping", "--runs", "1500", "--json")
    assert code == 1
    assert json.loads(out)["verdict"] == "violation"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agent", f"{AGENT}:nothing"], "has no name 'nothing'"),
        (["--agent", "no_such_file.py:make_agent"], "no such file"),
        (["--agent", f"{AGENT}:declare", "--runs", "10"], "declare()"),  # not a factory: the call fails, one line
        (["--agent", f"{AGENT}:NoisyRewardsAgent", "--runs", "10"], "argument"),
        (["rlsvi", "--agent", f"{AGENT}:make_agent"], "not both"),
        (["--agent", f"{AGENT}:make_agent", "--trials", "10"], "--trials"),
    ],
)
def test_bad_agents_are_refused_with_one_error_line(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, "audit", *argv)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


@pytest.mark.slow
def test_one_run_audits_of_a_users_agent(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["audit", "--one-run", "--epsilon", "1", "--delta", "1e-5", "--json"]
    code, out, err = run(capsys, *base, "--agent", f"{AGENT}:make_agent")
    assert code == 0, err
    result = json.loads(out)
    assert result["mode"] == "one-run" and result["verdict"] == "consistent" and result["canaries"] == 5000
    code, out, _ = run(capsys, *base, "--agent", f"{AGENT}:make_agent_without_clipping")
    assert code == 1 and json.loads(out)["verdict"] == "violation"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["rlsvi", "--one-run", "--runs", "10"], "--runs does not apply to a --one-run audit"),
        (["rlsvi", "--canaries", "10"], "--canaries does not apply to a many-run audit"),
        (["ucrl-vtr", "--one-run", "--canaries", "10"], "ALGORITHM must be one of"),
        (["ldp-ucrl-vtr", "--one-run", "--canaries", "50", "--attack", "learned"], "offers no features"),
        (["ldp-ucrl-vtr", "--one-run", "--canaries", "50", "--attack", "boosting"], "must be auto, white-box or"),
    ],
)
def test_one_run_refusals(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run(capsys, "audit", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1, err


@pytest.mark.slow
def test_one_run_with_a_learned_score_catches_the_unnoised_twin(capsys: pytest.CaptureFixture[str]) -> None:
    jdp = Path(__file__).resolve().parents[2] / "examples" / "jdp_agent.py"
    base = ["audit", "--one-run", "--sigma", "paper", "--canaries", "20000", "--seed", "2", "--attack", "auto"]
    base.append("--json")
    code, out, err = run(capsys, *base, "--agent", f"{jdp}:Unnoised")
    result = json.loads(out)
    assert code == 1 and result["verdict"] == "violation" and result["attack"] == "learned", err
    assert result["run_canaries"] == 20000 and result["canaries"] == 10000 and result["correct"] == result["guesses"]


def test_an_agent_file_imports_its_neighbours(tmp_path: Path) -> None:
    # as `python FILE.py` would: examples/jdp_prefix_agent.py imports jdp_agent from its own folder
    from dpkit.loading import load_object

    (tmp_path / "helper_module_of_mine.py").write_text("VALUE = 41\n")
    (tmp_path / "agent_file.py").write_text("from helper_module_of_mine import VALUE\n\nANSWER = VALUE + 1\n")
    (tmp_path / "broken_file.py").write_text("import no_such_module_of_mine\n")
    try:
        assert load_object("--agent", f"{tmp_path / 'agent_file.py'}:ANSWER") == 42
        assert sys.path[-1] == str(tmp_path.resolve())  # after every installed package: it shadows none
    finally:
        sys.path.remove(str(tmp_path.resolve()))
    with pytest.raises(ValueError, match="no_such_module_of_mine"):
        load_object("--agent", f"{tmp_path / 'broken_file.py'}:x")
    assert str(tmp_path.resolve()) not in sys.path  # a file that fails to import leaves the path as it was


def test_a_count_of_neither_structure_is_one_error_line(capsys, tmp_path: Path) -> None:
    jdp = Path(AGENT).with_name("jdp_agent.py")
    (tmp_path / "over.py").write_text(
        f"import sys\nsys.path.insert(0, {str(jdp.parent)!r})\nfrom dataclasses import replace\n"
        "from jdp_agent import CountingAgent\n\n\nclass Over(CountingAgent):\n"
        "    def __init__(self, *a, **k):\n        super().__init__(*a, **k)\n"
        "        self.declaration = replace(self.declaration, releases=tuple(replace(r, count=r.count + 2) "
        "for r in self.declaration.releases))\n"
    )
    code, out, err = run(capsys, "audit", "--agent", f"{tmp_path / 'over.py'}:Over", "--runs", "10")
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "declares count 4" in err and err.count("\n") == 1, err


def test_the_help_names_both_protocols_and_the_default_target(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 43: --agent's help named only the messages protocol, and the target ε = 8 an agent is audited at by
    default was in neither the help nor the output."""
    code, out, _ = run(capsys, "audit", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "local DP, the messages protocol" in text and "joint DP, the billboard protocol" in text
    assert "ε = 8, δ = 1e-5 for an --agent" in text


def test_the_target_dpkit_chose_is_said_after_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["audit", "--agent", f"{AGENT}:make_agent", "--runs", "20", "--position", "first"]
    code, out, err = run(capsys, *base)
    assert code in (0, 1), err
    note = "target (ε, δ) = (8, 1e-05): the default of make_agent's audit, not a claim you made"
    assert out.strip().splitlines()[-1].startswith(note), out
    assert "claimed ε (target) at δ = 1e-05" in out  # the table's figure it explains
    code, out, err = run(capsys, *base, "--epsilon", "2")
    assert (
        out.strip().splitlines()[-1]
        == "target (ε, δ) = (2, 1e-05): δ is the default of make_agent's audit (--delta sets it)"
    )
    code, out, err = run(capsys, *base, "--epsilon", "2", "--delta", "1e-6")
    assert "target (ε, δ)" not in out + err
    code, out, err = run(capsys, *base, "--json")  # the object holds the target: nothing beside it
    assert len(out.strip().splitlines()) == 1 and json.loads(out)["claimed_epsilon"] == 8.0 and "target" not in err
