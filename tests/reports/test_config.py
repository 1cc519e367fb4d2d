"""Report configurations: the shipped default, --quick caps, and bad files rejected with the key named."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from dpkit.accountant.declarations import algorithm_ledger
from dpkit.algorithms.envs.lq import random_lq
from dpkit.algorithms.envs.tabular import make_tabular
from dpkit.algorithms.registry import declare
from dpkit.reports.config import DEFAULT_DELTAS, ReportConfig, ledger_parameters, load_config, parse_config

#: The five private seed algorithms, which the shipped report covers (another registered algorithm need not be in it).
SEEDS = ("ldp-ucrl-vtr", "private-linopt-vi", "private-linopt-po", "private-ofu-rl", "rlsvi")
MINIMAL = {"algorithm": [{"name": "ldp-ucrl-vtr", "episodes": 50, "epsilon": 1.0, "delta": 0.1}]}


def test_default_config_covers_the_five_seed_algorithms() -> None:
    config = load_config()
    assert isinstance(config, ReportConfig) and config.source == "default"
    assert [a.name for a in config.algorithms] == list(SEEDS)
    assert all(a.audit.enabled for a in config.algorithms)
    assert config.seeds >= 3 and config.workers == 2


def test_default_config_is_package_data() -> None:
    text = resources.files("dpkit.reports").joinpath("default.toml").read_text(encoding="utf-8")
    assert parse_config(tomllib.loads(text)) == load_config()


def test_quick_caps_sizes_and_keeps_the_rest() -> None:
    config = load_config()
    quick = config.shrunk()
    q = config.quick
    assert quick.is_quick and not config.is_quick
    assert quick.seeds == min(config.seeds, q.seeds)
    for full, small in zip(config.algorithms, quick.algorithms):
        assert small.episodes == min(full.episodes, q.episodes)
        assert small.audit.runs == min(full.audit.runs, q.audit_runs)
        assert (small.name, small.epsilon, small.delta, small.env, small.states) == (
            full.name,
            full.epsilon,
            full.delta,
            full.env,
            full.states,
        )
    rlsvi = quick.algorithms[-1]
    assert rlsvi.episode_grid is not None and max(rlsvi.episode_grid) == rlsvi.episodes


@pytest.mark.parametrize("name", SEEDS)
def test_ledger_parameters_describe_what_the_regret_runs_use(name: str) -> None:
    """The report's ledger (dpkit ledger's) is the ledger of the agent the regret runs build."""
    a = next(x for x in load_config().shrunk().algorithms if x.name == name)
    e = a.experiment("paper", 0)
    rng = np.random.default_rng(0)
    if a.lq:
        from dpkit.algorithms import ofu_rl

        system = random_lq(e.state_dim, e.control_dim, e.horizon or 10, np.random.default_rng(e.env_seed))
        agent = ofu_rl.make_agent(name, system, e.episodes, rng, epsilon=e.epsilon, delta=e.delta)
        agent_declaration = agent.declaration
    else:
        from dpkit.algorithms.simulation import make_agent

        env = make_tabular(e.env, e.states, np.random.default_rng(e.env_seed), actions=e.actions, horizon=e.horizon)
        agent = make_agent(name, env, e.episodes, rng, epsilon=e.epsilon, delta=e.delta)
        agent_declaration = agent.declaration
    ours = algorithm_ledger(declare(name, a.epsilon, a.delta, **ledger_parameters(a, 0))).to_dict()
    theirs = algorithm_ledger(agent_declaration).to_dict()
    for key in ("releases", "sigma_paper", "sigma_tight", "noise_ratio", "epsilon_achieved_by_paper_sigma", "flags"):
        assert ours[key] == theirs[key], key


def _error(data: dict) -> str:
    with pytest.raises(ValueError) as info:
        parse_config(data)
    return str(info.value)


@pytest.mark.parametrize(
    ("data", "names"),
    [
        ({**MINIMAL, "seedz": 1}, "'seedz'"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "episode": 5}]}, "algorithm[0].episode"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "audit": {"runz": 5}}]}, "algorithm[0].audit.runz"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "episodes": "many"}]}, "algorithm[0].episodes must be an integer"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "episodes": 2.5}]}, "algorithm[0].episodes must be an integer"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "epsilon": True}]}, "algorithm[0].epsilon must be a finite number"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "audit": {"sigma": "loose"}}]}, "algorithm[0].audit.sigma"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "audit": {"position": "end"}}]}, "algorithm[0].audit.position"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "audit": 3}]}, "algorithm[0].audit must be a table"),
        ({"algorithm": [{"name": "ldp-ucrl-vtr", "epsilon": 1.0, "delta": 0.1}]}, "algorithm[0].episodes is required"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "name": "ucrl-vtr"}]}, "algorithm[0].name must be one of"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "delta": 2.0}]}, "algorithm[0] (ldp-ucrl-vtr): delta"),
        ({"algorithm": [{**MINIMAL["algorithm"][0], "env": "lq"}]}, "algorithm[0] (ldp-ucrl-vtr)"),
        (
            {"algorithm": [{**MINIMAL["algorithm"][0], "episode_grid": [10]}]},
            "algorithm[0].episode_grid applies to rlsvi",
        ),
        ({"algorithm": MINIMAL["algorithm"] * 2}, "'ldp-ucrl-vtr' appears more than once"),
        ({"algorithm": []}, "algorithm must be a non-empty array"),
        ({}, "algorithm is required"),
        ({**MINIMAL, "seeds": 0}, "seeds must be >= 1"),
        ({**MINIMAL, "deltas": [0.5, 1.5]}, "deltas[1] must be < 1.0, got 1.5"),
        ({**MINIMAL, "deltas": [0.5, 1e-3, float("nan")]}, "deltas[2] must be a finite number, got nan"),
        ({**MINIMAL, "deltas": [0.5, True]}, "deltas[1] must be a finite number, got True"),
        ({**MINIMAL, "deltas": []}, "deltas must not be empty"),
        ({**MINIMAL, "quick": {"episodes": "few"}}, "quick.episodes must be an integer"),
    ],
)
def test_bad_config_names_the_key(data: dict, names: str) -> None:
    assert names in _error(data)


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"cannot read config file .*nope\.toml"):
        load_config(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("title = \n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.toml' is not valid TOML"):
        load_config(bad)
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('colour = "red"\n[[algorithm]]\nname = "rlsvi"\nepisodes = 10\ndelta = 1e-5\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"unknown\.toml': unknown key 'colour'"):
        load_config(unknown)


def test_deltas_are_sorted_and_each_kept_once() -> None:
    assert parse_config(MINIMAL).deltas == DEFAULT_DELTAS
    assert parse_config({**MINIMAL, "deltas": [1e-3, 1e-6, 1e-3, 0.5]}).deltas == (1e-6, 1e-3, 0.5)


def test_integers_are_accepted_as_numbers() -> None:
    config = parse_config({"algorithm": [{"name": "ldp-ucrl-vtr", "episodes": 50, "epsilon": 1, "delta": 0.1}]})
    assert config.algorithms[0].epsilon == 1.0 and isinstance(config.algorithms[0].epsilon, float)
