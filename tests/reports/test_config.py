"""Report configurations: the shipped default, --quick caps, and bad files rejected with the key named."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from user_files import LEDGER_TOML, dp_accounting_json, dp_sgd

from dpkit.accountant import Ledger
from dpkit.accountant.declarations import algorithm_ledger
from dpkit.accountant.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpkit.algorithms.envs.lq import random_lq
from dpkit.algorithms.envs.tabular import make_tabular
from dpkit.algorithms.registry import declare
from dpkit.reports.config import (
    DEFAULT_DELTAS,
    LedgerConfig,
    ReportConfig,
    ledger_parameters,
    load_config,
    parse_config,
)

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
        ({}, "algorithm is required unless ledger is given"),
        ({"ledger": []}, "ledger must be a non-empty array"),
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


# -- [[ledger]] entries: ledger and event files ------------------------------------------------------------

#: DP-SGD as dp-accounting writes it: q = 0.01, noise multiplier 1.1, 1000 steps.
DPSGD = dp_sgd(1000)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder with a config's neighbours: a ledger file, a DpEvent file, dpkit's event JSON and bad files."""
    (tmp_path / "ledger.toml").write_text(LEDGER_TOML, encoding="utf-8")
    (tmp_path / "sgd.json").write_text(dp_accounting_json(DPSGD), encoding="utf-8")
    (tmp_path / "gauss.json").write_text('{"kind": "gaussian", "noise_multiplier": 2.0}', encoding="utf-8")
    (tmp_path / "bad_event.json").write_text('{"kind": "gaussian", "noise_multiplier": -2.0}', encoding="utf-8")
    (tmp_path / "bad_ledger.toml").write_text("[[release]]\nsensitivity = 1.0\nsigma = 2.0\n", encoding="utf-8")
    (tmp_path / "other.toml").write_text("x = 1\n", encoding="utf-8")
    return tmp_path


def _config(folder: Path, text: str) -> ReportConfig:
    path = folder / "sub" / "report.toml"  # files are relative to the config's folder, not to the working one
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_a_ledger_file_and_a_dp_event_parse(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(files / "..")
    config = _config(
        files,
        '[[ledger]]\nname = "gram"\nfile = "../ledger.toml"\ndelta = 1e-5\nepsilon = 1.0\nusers = 1000\n'
        '[[ledger]]\nname = "sgd"\nfile = "../sgd.json"\ndelta = 1e-5\nrelation = "replace_one"\n',
    )
    assert config.algorithms == () and [e.name for e in config.ledgers] == ["gram", "sgd"]
    gram, sgd = config.ledgers
    assert isinstance(gram, LedgerConfig) and gram.kind == "ledger file"
    assert gram.path == str((files / "ledger.toml").resolve())
    ledger = gram.target()
    assert isinstance(ledger, Ledger) and ledger.to_dicts() == [
        {"name": "gram", "sensitivity": 1.5, "sigma": 30.0, "count": 20}
    ]
    assert (gram.epsilon, gram.users, gram.relation) == (1.0, 1000, None)
    assert sgd.kind == "event file" and sgd.target() == SelfComposedEvent(
        PoissonSampledEvent(0.01, GaussianEvent(1.1, relation="replace_one")), 1000
    )
    assert sgd.target() is sgd.target()  # read once, when the config was
    d = config.to_dict()["ledgers"]
    assert d[0]["file"] == "../ledger.toml" and d[0]["path"] == gram.path and d[1]["relation"] == "replace_one"
    assert config.shrunk().ledgers == config.ledgers  # nothing to shrink


def test_dpkit_event_json_and_algorithms_beside_ledgers(files: Path) -> None:
    config = parse_config(
        {**MINIMAL, "ledger": [{"name": "g", "file": "gauss.json", "delta": 0.01}]}, str(files / "report.toml")
    )
    assert [a.name for a in config.algorithms] == ["ldp-ucrl-vtr"]
    (entry,) = config.ledgers
    assert entry.kind == "event file" and entry.target() == GaussianEvent(2.0)


@pytest.mark.parametrize(
    ("entry", "names"),
    [
        ({"file": "nope.json"}, "ledger[0].file 'nope.json': cannot read"),
        ({"file": "bad_event.json"}, "ledger[0].file 'bad_event.json': event (gaussian): noise_multiplier"),
        ({"file": "bad_ledger.toml"}, "ledger[0].file 'bad_ledger.toml': release[0].name is required"),
        ({"file": "other.toml"}, "ledger[0].file 'other.toml': a TOML file must be a ledger file"),
        ({"relation": "add_remove"}, "ledger[0].relation applies to DpEvent files only, not a ledger file"),
        ({"file": "gauss.json", "relation": "add_remove"}, "ledger[0].relation applies to DpEvent files only"),
        ({"relation": "both"}, "ledger[0].relation must be"),
        ({"delta": 1.0}, "ledger[0].delta must be < 1.0"),
        ({"delta": 0.0}, "ledger[0].delta must be > 0"),
        ({"epsilon": 0.0}, "ledger[0].epsilon must be > 0"),
        ({"epsilon": "1"}, "ledger[0].epsilon must be a finite number"),
        ({"users": 0}, "ledger[0].users must be >= 1"),
        ({"users": 2.5}, "ledger[0].users must be an integer"),
        ({"colour": "red"}, "unknown key 'ledger[0].colour'"),
        ({"file": None}, "ledger[0].file must be a string"),
        ({"name": " "}, "ledger[0].name must be a non-empty string"),
    ],
)
def test_bad_ledger_entries_name_the_key(files: Path, entry: dict, names: str) -> None:
    data = {"ledger": [{"name": "gram", "file": "ledger.toml", "delta": 1e-5, **entry}]}
    with pytest.raises(ValueError) as info:
        parse_config(data, str(files / "report.toml"))
    assert names in str(info.value)


def test_ledger_names_are_unique_among_all_entries(files: Path) -> None:
    source = str(files / "report.toml")
    entry = {"name": "ldp-ucrl-vtr", "file": "ledger.toml", "delta": 1e-5}
    with pytest.raises(ValueError, match=r"ledger\[0\]\.name 'ldp-ucrl-vtr' is taken by an algorithm entry"):
        parse_config({**MINIMAL, "ledger": [entry]}, source)
    other = {**entry, "name": "gram"}
    with pytest.raises(ValueError, match=r"ledger\[1\]\.name 'gram' is taken by another ledger entry"):
        parse_config({"ledger": [other, other]}, source)
