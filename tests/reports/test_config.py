"""Report configurations: the shipped default, --quick caps, and bad files rejected with the key named."""

from __future__ import annotations

import re
import tomllib
import typing
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from user_files import LEDGER_TOML, dp_accounting_json, dp_sgd

from dpkit.accountant import Ledger
from dpkit.accountant.algorithm_ledgers import algorithm_ledger
from dpkit.accountant.events import GaussianEvent, PoissonSampledEvent, SelfComposedEvent
from dpkit.algorithms.envs.lq import random_lq
from dpkit.algorithms.envs.tabular import make_tabular
from dpkit.algorithms.registry import declare
from dpkit.reports.config import (
    AUDIT_MODES,
    DEFAULT_DELTAS,
    SEQUENTIAL_MIN_RUNS,
    AuditConfig,
    LedgerConfig,
    ReportConfig,
    config_schema,
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
        (
            {"algorithm": [{**MINIMAL["algorithm"][0], "audit": {"mode": "anytime"}}]},
            "algorithm[0].audit.mode must be 'fixed' or 'sequential', got 'anytime'",
        ),
        (
            {"algorithm": [{**MINIMAL["algorithm"][0], "audit": {"mode": "sequential", "runs": 60}}]},
            "algorithm[0].audit.runs must be >= 200 for a sequential audit (mode = 'sequential'), got 60",
        ),
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


def test_the_audit_mode_is_fixed_unless_sequential_is_asked_for() -> None:
    """``mode``: the fixed audit by default; a sequential one needs the runs its plan does, which --quick keeps."""
    from dpkit.audits.sequential_plan import MIN_RUNS

    assert SEQUENTIAL_MIN_RUNS == MIN_RUNS
    assert typing.get_args(AuditConfig.model_fields["mode"].annotation) == AUDIT_MODES == ("fixed", "sequential")
    fixed = parse_config(MINIMAL).algorithms[0]
    assert fixed.audit.mode == "fixed" and fixed.to_dict()["audit"]["mode"] == "fixed"
    entry = {**MINIMAL["algorithm"][0], "audit": {"mode": "sequential", "runs": 4000}}
    config = parse_config({"algorithm": [entry], "quick": {"audit_runs": 50}})
    assert config.algorithms[0].to_dict()["audit"]["mode"] == "sequential"
    assert config.shrunk().algorithms[0].audit.runs == SEQUENTIAL_MIN_RUNS  # not the cap of 50: too few


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


# -- sizes: every numeric field has a stated limit, checked when the config is read (before any work) ----------

#: The integers of a config that are not sizes, so have no limit (each is answered for any value), and why.
UNLIMITED = {
    "seed": "a seed: any is drawn from as cheaply",
    "ledger[0].users": "K of the informative δ = min(1e-5, 1/K): answered for any K (0 beyond the doubles)",
}


def _full(folder: Path) -> dict:
    """A config that sets every table (an RLSVI algorithm with an audit and a grid, a ledger file, [quick]), so
    that every numeric field of the schema has its place; ``ledger.toml`` is written in ``folder``."""
    (folder / "ledger.toml").write_text(LEDGER_TOML, encoding="utf-8")
    return {
        "seeds": 2,
        "algorithm": [
            {"name": "rlsvi", "episodes": 40, "delta": 0.1, "episode_grid": [20], "audit": {"runs": 10, "episodes": 2}}
        ],
        "ledger": [{"name": "gram", "file": "ledger.toml", "delta": 1e-5, "users": 100}],
        "quick": {"episodes": 10},
    }


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _numeric_fields(schema: dict, node: dict, path: tuple = ()) -> list[tuple[tuple, dict]]:
    """(path, schema) of every integer and number field and every array of the config schema (through $ref, the
    optional fields' anyOf and arrays, whose items are at index 0)."""
    out: list[tuple[tuple, dict]] = []
    node = _resolve(schema, node)
    options = node["anyOf"] if "anyOf" in node and "properties" not in node else [node]  # the root's anyOf: required
    for option in options:
        option = _resolve(schema, option)
        kind = option.get("type")
        if kind in ("integer", "number"):
            out.append((path, option))
        elif kind == "array":
            out.append((path, option))
            out += _numeric_fields(schema, option["items"], (*path, 0))
        elif kind == "object":
            for key, sub in option.get("properties", {}).items():
                out += _numeric_fields(schema, sub, (*path, key))
    return out


def _key(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path))


def _with(data: dict, path: tuple, value: object) -> dict:
    """A deep copy of ``data`` with ``value`` at ``path`` (tables created, a list's item 0 replaced)."""
    import copy

    out = copy.deepcopy(data)
    node: Any = out
    for i, part in enumerate(path[:-1]):
        if isinstance(node, dict) and part not in node:
            node[part] = [] if isinstance(path[i + 1], int) else {}
        if isinstance(node, list) and not node:
            node.append({})
        node = node[part]
    last = path[-1]
    if isinstance(node, list):
        node[:] = [value]
    else:
        node[last] = value
    return out


FIELDS = _numeric_fields(config_schema(), config_schema())


def test_the_walk_finds_the_sizes_of_every_table() -> None:
    keys = {_key(path) for path, _ in FIELDS}
    for key in ("seeds", "workers", "quick.audit_runs", "algorithm[0].states", "algorithm[0].episode_grid[0]"):
        assert key in keys
    for key in ("algorithm[0].audit.runs", "algorithm[0].audit.episodes", "ledger[0].users", "deltas"):
        assert key in keys


def test_every_size_of_the_config_has_a_stated_limit() -> None:
    """The schema states a maximum for every integer (but the few that are not sizes) and every array."""
    integers = {_key(path) for path, node in FIELDS if node["type"] == "integer" and "maximum" not in node}
    assert integers == set(UNLIMITED)
    arrays = [_key(path) for path, node in FIELDS if node["type"] == "array" and "maxItems" not in node]
    assert arrays == []


@pytest.mark.parametrize("path", [p for p, node in FIELDS if node["type"] == "integer" and "maximum" in node], ids=_key)
def test_a_size_above_its_limit_is_refused_naming_it_and_the_value(path: tuple, tmp_path: Path) -> None:
    base, source = _full(tmp_path), str(tmp_path / "report.toml")
    parse_config(base, source)  # the base is valid: the refusals below are the value's
    limit = dict(FIELDS)[path]["maximum"]
    for value, shown_value in ((limit + 1, f"{limit + 1:,}"), (10**400, "1.000e+400")):
        with pytest.raises(ValueError) as info:
            parse_config(_with(base, path, value), source)
        assert str(info.value) == f"{_key(path)} = {shown_value} is above the limit of {limit:,}"


@pytest.mark.parametrize("path", [p for p, node in FIELDS if node["type"] == "array"], ids=_key)
def test_an_array_longer_than_its_limit_is_refused_before_its_entries_are_read(path: tuple, tmp_path: Path) -> None:
    base, source = _full(tmp_path), str(tmp_path / "report.toml")
    limit = dict(FIELDS)[path]["maxItems"]
    data = _with(base, path, None)
    node: Any = data
    for part in path[:-1]:
        node = node[part]
    item = {"deltas": 1e-3, "plugins": "missing.py:SPEC"}.get(path[-1], 10)  # a plugin's file is never opened
    if path[-1] in ("algorithm", "ledger"):
        item = base[path[-1]][0]
    node[path[-1]] = [item] * (limit + 1)
    with pytest.raises(ValueError, match=rf"^{re.escape(_key(path))} has {limit + 1:,} entries, above the limit of"):
        parse_config(data, source)


@pytest.mark.parametrize("path", [p for p, node in FIELDS if node["type"] == "number"], ids=_key)
def test_a_huge_number_is_read_or_refused_naming_it(path: tuple, tmp_path: Path) -> None:
    """ε, δ and σ are not sizes: 1e300 is a valid ε (its σ is tiny) and an invalid δ; never another error."""
    base, source = _full(tmp_path), str(tmp_path / "report.toml")
    try:
        parse_config(_with(base, path, 1e300), source)
    except ValueError as err:  # "deltas[0] must be < 1.0, got 1e+300", "algorithm[0] (rlsvi): delta must lie in …"
        name = next(p for p in reversed(path) if isinstance(p, str))
        assert str(err).startswith(_key(path[:2])) and name in str(err) and "1e+300" in str(err), err


_ALGORITHM = '[[algorithm]]\nname = "ldp-ucrl-vtr"\nepsilon = 1.0\ndelta = 0.1\n'
#: The issue's cases as TOML files: huge seeds, states and episodes, an audit's 2e6 runs, too many steps in all.
ISSUE_SIZES = [
    ("seeds = 1000000\n" + _ALGORITHM + "episodes = 50\n", "seeds = 1,000,000 is above the limit of 1,000"),
    (_ALGORITHM + "episodes = 50\nstates = 100000000\n", "algorithm[0].states = 100,000,000 is above the limit"),
    (_ALGORITHM + "episodes = 1000000000000\n", "algorithm[0].episodes = 1,000,000,000,000 is above the limit"),
    (_ALGORITHM + "episodes = 50\n[algorithm.audit]\nruns = 2000000\n", "algorithm[0].audit.runs = 2,000,000 is above"),
    (_ALGORITHM + "episodes = 50\n[algorithm.audit]\nruns = 2e6\n", "algorithm[0].audit.runs must be an integer"),
    (
        "seeds = 1000\n" + _ALGORITHM + "episodes = 1000000\nhorizon = 10\n",
        "algorithm[0] (ldp-ucrl-vtr): (episodes × seeds + Σ episode_grid) × horizon = 10,000,000,000 steps is above",
    ),
]


def test_the_issue_sizes_are_refused_by_dpkit_report_before_any_work_under_a_memory_cap(tmp_path: Path) -> None:
    """Huge seeds, states and episodes and an audit's 2e6 runs: one error line naming the key and the value, exit 2,
    nothing written, the report's first stage never entered — run under a 1 GiB address-space cap."""
    import json
    import subprocess
    import sys

    cases = []
    for i, (text, message) in enumerate(ISSUE_SIZES):
        path = tmp_path / f"c{i}.toml"
        path.write_text(text, encoding="utf-8")
        cases.append((str(path), str(tmp_path / f"out{i}"), message))
    code = (
        "import contextlib, io, json, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "import dpkit.reports.job as job\n"
        "def refuse(*a, **k): raise SystemExit('the report started computing')\n"
        "job.compute_report = refuse\n"
        "from dpkit.cli import main\n"
        "for config, out, _ in json.loads(sys.argv[1]):\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stderr(err): rc = main(['report', '--config', config, '--out', out])\n"
        "    print(json.dumps([rc, err.getvalue()]))\n"
    )
    run = subprocess.run([sys.executable, "-c", code, json.dumps(cases)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    for (config, out, message), line in zip(cases, run.stdout.splitlines(), strict=True):
        rc, err = json.loads(line)
        assert rc == 2 and err.startswith(f"error: config {config!r}: ") and err.count("\n") == 1, err
        assert message in err, err
        assert not Path(out).exists()
