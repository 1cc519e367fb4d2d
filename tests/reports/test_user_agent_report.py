"""A report of a user's own jointly private agent (a plugin naming its agent factory, examples/jdp_agent.py) and of
two seed algorithms on a user's Gymnasium environment (FrozenLake): ledger, audit verdict and regret, like the
seeds' reports (issue 35)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from cli_runs import run

from dpkit.algorithms import registry
from dpkit.reports.schemas import schemas

pytest.importorskip("gymnasium")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CONFIG = """
seeds = 2
workers = 1
plugins = ["jdp_agent.py:CountingAgent"]

[[algorithm]]
name = "CountingAgent"
epsilon = 8.0
delta = 1e-5
episodes = 30
[algorithm.audit]
runs = 600

[[algorithm]]
name = "ldp-ucrl-vtr"
env = "gymnasium:FrozenLake-v1,is_slippery=false"
epsilon = 8.0
delta = 1e-5
episodes = 30
horizon = 8
[algorithm.audit]
runs = 300

[[algorithm]]
name = "rlsvi"
env = "gymnasium:FrozenLake-v1"
delta = 0.1
episodes = 30
horizon = 8
[algorithm.audit]
runs = 800
"""


@pytest.mark.slow
def test_a_users_agent_and_environment_are_reported_like_the_seeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(EXAMPLES / "jdp_agent.py", tmp_path / "jdp_agent.py")
    (tmp_path / "report.toml").write_text(CONFIG, encoding="utf-8")
    try:
        code, _, err = run(capsys, "report", "--config", str(tmp_path / "report.toml"), "--out", str(tmp_path / "out"))
    finally:
        if "CountingAgent" in registry.names():
            registry.unregister("CountingAgent")
    assert code == 0, err
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, schemas()["report.schema.json"])
    agent, ldp, rlsvi = data["algorithms"]
    assert [a["name"] for a in data["algorithms"]] == ["CountingAgent", "ldp-ucrl-vtr", "rlsvi"]
    for section in (agent, ldp, rlsvi):
        assert section["audit"]["available"] and section["regret"]["paper"], section["name"]
        assert section["audit"]["result"]["verdict"] == "consistent", section["audit"]["result"]["positions"]
        assert section["settings"]["episodes"] == 30
    # the user's agent: its own declaration (two counters through a binary tree), audited at every tree position
    assert sorted(r["name"] for r in agent["ledger"]["releases"]) == ["rewards", "visits"]
    assert len(agent["audit"]["result"]["positions"]) >= 3
    # on FrozenLake: S and A come from the environment's model
    assert ldp["settings"]["states"] == rlsvi["settings"]["states"] == 16
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "CountingAgent" in html and "FrozenLake" in html
