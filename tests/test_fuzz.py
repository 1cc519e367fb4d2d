"""A fuzz suite of hostile and broken input for the ``dpkit`` command line (issue 21).

Hypothesis draws option values (random strings, huge, tiny, NaN, infinite and negative numbers, random
option combinations) for the accounting commands, and file contents (random bytes, deep nesting, huge
numbers, markup) for ledger files and report configs. Every case must end with exit code 0, 1 or 2, no
traceback, one ``error: …`` line on stderr when it fails, and within 30 s. The profile is fixed
(derandomized, a set number of examples) so CI runs the same cases every time; ``CASES`` counts them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.cli import main

CASES: dict[str, int] = {}
PROFILE = settings(
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=examples(300),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

NUMBERS = st.one_of(
    st.sampled_from(
        [
            "0",
            "-0",
            "1",
            "-1",
            "nan",
            "inf",
            "-inf",
            "1e308",
            "1e400",
            "-1e400",
            "5e-324",
            "1e-300",
            "1e300",
            "2.5",
            "1e15",
            "1e18",
            "0.5",
            "1e-5",
            "10",
            "3",
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.text(max_size=12),
)


def _check(capsys: pytest.CaptureFixture[str], name: str, argv: list[str]) -> None:
    CASES[name] = CASES.get(name, 0) + 1
    started = time.monotonic()
    code = main(argv)
    seconds = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    if code == 2:
        lines = err.strip("\n").split("\n")
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
    assert seconds < 30.0, (argv, seconds)


# -- options -----------------------------------------------------------------------------------------------

SIMPLE = {
    "calibrate": ["--epsilon", "--delta", "--sensitivity", "--compositions"],
    "epsilon": ["--sigma", "--delta", "--sensitivity", "--compositions"],
    "delta": ["--sigma", "--epsilon", "--sensitivity", "--compositions"],
    "methods": ["--sigma", "--delta", "--sensitivity", "--compositions"],
    "convert zcdp": ["--rho", "--delta"],
    "convert gdp": ["--mu", "--delta", "--epsilon"],
    "convert budget": ["--epsilon", "--delta"],
    "tree": ["--steps", "--sigma", "--delta", "--epsilon", "--sensitivity"],
    "rlsvi": ["--states", "--actions", "--horizon", "--episodes", "--delta"],
    "budgets --no-pld": ["--delta", "--sensitivity", "--epsilons", "--compositions"],
    "ledger rlsvi": ["--delta", "--epsilon", "--states", "--actions", "--horizon", "--episodes", "--beta"],
    "ledger ldp-ucrl-vtr": ["--delta", "--epsilon", "--states", "--horizon", "--episodes"],
    "ledger private-linopt-vi": ["--delta", "--epsilon", "--dim", "--horizon", "--episodes"],
    "ledger private-ofu-rl": ["--delta", "--epsilon", "--gamma", "--horizon", "--episodes"],
    "convert rdp": ["--orders", "--values", "--delta"],
}


@given(command=st.sampled_from(sorted(SIMPLE)), data=st.data())
@PROFILE
def test_accounting_commands_never_crash(capsys: pytest.CaptureFixture[str], command: str, data: st.DataObject) -> None:
    options = SIMPLE[command]
    chosen = data.draw(st.lists(st.sampled_from(options), unique=True, min_size=0, max_size=len(options)))
    argv = command.split()
    for opt in chosen:
        argv += [opt, data.draw(NUMBERS)]
    if data.draw(st.booleans()):
        argv.append("--json")
    if command in ("calibrate", "epsilon", "delta", "tree") and data.draw(st.booleans()):
        argv += ["--method", data.draw(st.sampled_from(["exact", "rdp", "zcdp", "classic"]))]
    _check(capsys, "options", argv)


@given(argv=st.lists(st.text(max_size=15), max_size=6))
@PROFILE
def test_random_words_never_crash(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    if argv and argv[0] in ("audit", "report", "simulate"):  # these run long jobs on valid input
        argv = argv[1:]
    _check(capsys, "words", argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["convert", "budget", "--epsilon", "1e300", "--delta", "1e-5"],
        ["convert", "budget", "--epsilon", "1e308", "--delta", "1e-300"],
        ["delta", "--sigma", "3", "--epsilon", "1e308"],
        ["epsilon", "--sigma", "3", "--delta", "1e-5", "--compositions", "1e400"],
        ["calibrate", "--epsilon", "1e308", "--delta", "1e-5"],
        ["convert", "gdp", "--mu", "1e-308", "--epsilon", "1e308"],
        ["convert", "zcdp", "--rho", "1e308", "--delta", "1e-300"],
    ],
)
def test_extreme_values_answer_or_refuse(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    _check(capsys, "extremes", argv)


def test_budgets_refuses_long_lists_before_work(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["budgets", "--no-pld", "--epsilons", ",".join(["1"] * 1000)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --epsilons has 1,000 values")


def test_huge_epsilon_has_delta_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["delta", "--sigma", "3", "--epsilon", "1e308", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["delta"] == 0.0


# -- files -------------------------------------------------------------------------------------------------


def _nested(depth: int) -> str:
    return '{"release": ' + "[" * depth + "]" * depth + "}"


CONTENTS = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.integers(min_value=1, max_value=5000).map(lambda d: _nested(d).encode()),
    st.builds(
        lambda name, s, sigma, count: json.dumps(
            {"release": [{"name": name, "sensitivity": s, "sigma": sigma, "count": count}]}
        ).encode(),
        st.text(max_size=30),
        NUMBERS,
        NUMBERS,
        st.one_of(NUMBERS, st.integers(min_value=-5, max_value=10**400)),
    ),
    st.sampled_from(
        [
            b"release = 1e400",
            b'[[release]]\nname = "[/bold]"\nsensitivity = 1e308\nsigma = 1e-308\n',
            b"\xff\xfe\x00\x00",
            b"a = " + b"[" * 3000 + b"]" * 3000,
            b"\x00" * 100,
        ]
    ),
)


@given(content=CONTENTS, toml=st.booleans(), use_epsilon=st.booleans())
@PROFILE
def test_ledger_files_never_crash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, toml: bool, use_epsilon: bool
) -> None:
    path = tmp_path / ("ledger.toml" if toml else "ledger.json")
    path.write_bytes(content)
    _check(capsys, "ledger files", ["ledger", str(path), "--epsilon" if use_epsilon else "--delta", "1e-5"])


@given(content=CONTENTS)
@PROFILE
def test_report_configs_are_refused_or_read_without_crash(tmp_path: Path, content: bytes) -> None:
    from dpkit.reports.config import load_config

    CASES["report configs"] = CASES.get("report configs", 0) + 1
    path = tmp_path / "config.toml"
    path.write_bytes(content)
    try:
        load_config(path)
    except ValueError as err:
        assert "\n" not in str(err).strip() or "config" in str(err)


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null", "/"])
def test_special_files_are_refused_without_reading_them(capsys: pytest.CaptureFixture[str], target: str) -> None:
    if not Path(target).exists():
        pytest.skip(f"no {target} here")
    _check(capsys, "special files", ["ledger", target, "--delta", "1e-5"])
    _check(capsys, "special files", ["report", "--config", target, "--out", "/nonexistent-dir/x"])


def test_interrupt_is_one_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from dpkit import accountant

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(accountant, "zcdp_epsilon", interrupted)
    assert main(["convert", "zcdp", "--rho", "1", "--delta", "1e-5"]) == 130
    assert capsys.readouterr().err == "error: interrupted\n"


@pytest.mark.parametrize(
    "extra",
    [
        ["--episodes", "1e15"],
        ["--episodes", "10", "--seeds", "1e9"],
        ["--episodes", "10", "--states", "1e12"],
        ["--episodes", "1000000", "--seeds", "1000"],
        ["--episodes", "1e400"],
        ["--episodes", "10", "--workers", "1e6"],
    ],
)
def test_simulate_sizes_are_refused_before_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, extra: list[str]
) -> None:
    CASES["sizes"] = CASES.get("sizes", 0) + 1
    code = main(["simulate", "ucrl-vtr", "--out", str(tmp_path / "sim"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert not (tmp_path / "sim").exists()


def test_simulate_out_below_a_file_is_refused_before_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    code = main(["simulate", "ucrl-vtr", "--episodes", "10", "--out", str(tmp_path / "file" / "sim")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --out") and "is not a directory" in err


def test_zz_report_the_number_of_cases() -> None:
    """Prints how many fuzz cases ran (``pytest -s`` shows it); fails if a fuzz test ran none."""
    print(f"\nfuzz cases: {sum(CASES.values())} ({CASES})")
    assert sum(CASES.values()) > 0


# -- the last hostile inputs (issue 34) ----------------------------------------------------------------------------


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_swapped_epsilon_and_delta_is_answered_with_a_warning(
    capsys: pytest.CaptureFixture[str], json_flag: list[str]
) -> None:
    """calibrate --epsilon 1e-5 --delta 1: δ = 1 is a valid (vacuous) target, σ = 0; said on stderr and in the JSON."""
    code = main(["calibrate", "--epsilon", "1e-5", "--delta", "1", *json_flag])
    out, err = capsys.readouterr()
    assert code == 0
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("warning: delta = 1 is ") for line in lines), err
    assert "at least 0.5" in lines[0] and "larger than epsilon = 1e-05: were they swapped?" in lines[1]
    if json_flag:
        obj = json.loads(out)
        assert obj["sigma"] == 0.0 and [f"warning: {w}" for w in obj["warnings"]] == lines
    assert main(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["warnings"] == []


def test_budgets_at_delta_zero_has_no_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    """At δ = 0 every σ is +inf: the ratio is undefined (—), never nan; the JSON stays valid (null)."""
    assert main(["budgets", "--delta", "0", "--no-pld", "--epsilons", "1,2", "--compositions", "1,10"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "At δ = 0 every σ is +inf: no ratio (—)." in " ".join(out.split())
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) == 4 and all(row.rstrip(" │").endswith("—") for row in rows)
    assert main(["budgets", "--delta", "0", "--no-pld", "--epsilons", "1", "--compositions", "1", "--json"]) == 0
    obj = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))
    assert obj["rows"][0]["sigma"]["exact"] is None  # +inf, written null


def test_a_bare_memory_error_prints_no_empty_parentheses(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import dpkit.commands.calibrate_events as calibrate_events

    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(calibrate_events, "calibrate_sigma", out_of_memory)
    assert main(["calibrate", "--epsilon", "1", "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert err == "error: not enough memory for these sizes; lower the episodes, states, horizon or dimensions\n"


def test_a_ledger_file_of_a_count_beyond_the_doubles_is_answered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """count = 10**400 (the issue's file): μ = 1e200, ε = +inf under every method that composes it, and the methods
    that cannot say why, naming the count — not "a number is too large to compute with"."""
    path = tmp_path / "big.toml"
    path.write_text(f'[[release]]\nname = "a"\nsensitivity = 1.0\nsigma = 1.0\ncount = {10**400}\n', encoding="utf-8")
    obj = json.loads(_run_ok(capsys, ["ledger", str(path), "--delta", "1e-5", "--json"]))
    assert obj["mu"] == pytest.approx(1e200, rel=1e-12)
    assert obj["methods"]["exact"] is None and obj["methods"]["rdp"] is None  # +inf, written null
    assert "a.count = 1.000e+400" in obj["refusals"]["pld"]
    table = _run_ok(capsys, ["ledger", str(path), "--delta", "1e-5"])
    assert "│ exact              │ inf │" in table and "nan" not in table


def _run_ok(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


# -- every numeric option of every command at a huge value: an answer, or a refusal naming it (and the value) ---------

_MECH = (
    "import numpy as np\n"
    "def release(ds, rng, n):\n"
    "    return np.sum(ds) + 2.0 * rng.standard_normal((n, 1))\n"
    "PAIR = ([0.0], [0.0, 1.0])\n"
)
_EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "gaussian_sum.py")


def _sweep_bases(tmp: Path) -> dict[str, list[str]]:
    """The smallest valid command line of every form of every command (a file it needs written in ``tmp``)."""
    (tmp / "mech.py").write_text(_MECH, encoding="utf-8")
    mech, out = str(tmp / "mech.py"), str(tmp / "out")
    ucrl = ["--epsilon", "1", "--delta", "1e-5"]
    return {
        "calibrate": ["calibrate", "--epsilon", "1", "--delta", "1e-5"],
        "calibrate --solve": ["calibrate", *ucrl, "--solve", "steps", "--sigma", "1", "--sampling-rate", "0.01"],
        "epsilon": ["epsilon", "--sigma", "1", "--delta", "1e-5"],
        "delta": ["delta", "--sigma", "1", "--epsilon", "1"],
        "methods": ["methods", "--sigma", "1", "--delta", "1e-5"],
        "budgets": ["budgets", "--no-pld", "--epsilons", "1", "--compositions", "10"],
        "convert budget": ["convert", "budget", "--epsilon", "1", "--delta", "1e-5"],
        "convert gdp": ["convert", "gdp", "--mu", "1", "--delta", "1e-5"],
        "convert rdp": ["convert", "rdp", "--orders", "2,4", "--values", "0.5,1", "--delta", "1e-5"],
        "convert zcdp": ["convert", "zcdp", "--rho", "0.5", "--delta", "1e-5"],
        "ledger ldp-ucrl-vtr": [
            "ledger",
            "ldp-ucrl-vtr",
            *ucrl,
            "--horizon",
            "4",
            "-S",
            "2",
            "--reading",
            "experiment",
        ],
        "ledger private-linopt-vi": ["ledger", "private-linopt-vi", *ucrl, "-H", "4", "-K", "10", "--dim", "4"],
        "ledger private-ofu-rl": ["ledger", "private-ofu-rl", *ucrl, "-H", "4", "-K", "10", "--gamma", "1"],
        "ledger rlsvi": ["ledger", "rlsvi", "--delta", "1e-5", "-H", "4", "-K", "10", "-S", "2", "-A", "2"],
        "tree": ["tree", "--steps", "10", "--sigma", "1", "--delta", "1e-5"],
        "tree calibration": ["tree", "--steps", "10", "--epsilon", "1", "--delta", "1e-5"],
        "rlsvi": ["rlsvi", "-S", "2", "-A", "2", "-H", "4", "-K", "10", "--delta", "1e-5"],
        "rlsvi --run": ["rlsvi", "-S", "2", "-K", "10", "--delta", "1e-5", "--run"],
        "audit ALGORITHM": ["audit", "rlsvi", "--runs", "6", "--episodes", "2"],
        "audit --one-run": ["audit", "ldp-ucrl-vtr", "--one-run", "--canaries", "20"],
        "audit --target": ["audit", "--target", f"{mech}:release", "--neighbours", f"{mech}:PAIR", "--mu", "1"]
        + ["--trials", "1000", "--attack", "lr"],
        "audit --target --one-run": ["audit", "--target", f"{_EXAMPLE}:release", "--one-run", "--mu", "0.92"]
        + ["--canary-records", f"{_EXAMPLE}:canaries", "--canaries", "20"],
        "simulate": ["simulate", "ldp-ucrl-vtr", "-K", "5", "--epsilon", "1", "--delta", "0.1", "--out", out],
        "simulate tabular": ["simulate", "ucrl-vtr", "--env", "tabular", "-K", "5", "--out", out],
        "simulate lq": ["simulate", "private-ofu-rl", "-K", "5", "--epsilon", "1", "--delta", "0.1", "--out", out],
    }


def _numeric_options(argv: list[str]) -> list[tuple[str, str]]:
    """(long flag, parameter name) of every number or number-list option of the command ``argv`` starts with."""
    import click

    from dpkit.cli import cli
    from dpkit.commands.option_types import Number, NumberList

    command: click.Command = cli
    ctx = click.Context(cli)
    for word in argv[:2]:
        if isinstance(command, click.Group):
            found = command.get_command(ctx, word)
            assert found is not None
            command = found
    return [
        (max(p.opts, key=len), str(p.name))
        for p in command.params
        if isinstance(p, click.Option) and isinstance(p.type, Number | NumberList)
    ]


def _with_value(argv: list[str], flag: str, value: str, short: dict[str, str]) -> list[str]:
    """``argv`` with ``flag`` (or its short form) set to ``value``: a list's first item replaced, else added."""
    out = list(argv)
    for name in (flag, short.get(flag, flag)):
        if name in out:
            i = out.index(name) + 1
            out[i] = ",".join([value, *out[i].split(",")[1:]])
            return out
    return [*out, flag, value]


_SHORT = {"--episodes": "-K", "--horizon": "-H", "--states": "-S", "--actions": "-A", "--compositions": "-k"}
#: How a refusal may show each huge value typed.
_SHOWN = {
    "1e300": ("1e+300", "1.000e+300", "1e300"),
    "1e18": ("1e+18", "1.000e+18", "1,000,000,000,000,000,000", "1000000000000000000"),
}
#: The cases the sweep leaves out, and why (reported: the DP-SGD solver is being reworked under issue 33).
KNOWN = {
    ("calibrate --solve", "--epsilon"): "the DP-SGD steps search at ε >= 1e18 takes minutes",
    ("calibrate --solve", "--sigma"): "dp-accounting's subsampled PLD overflows squaring a noise multiplier of 1e300",
    ("calibrate --solve", "--sensitivity"): "dp-accounting's PLD grid of a noise multiplier of 1e-18 exceeds numpy",
}


@pytest.mark.slow
def test_every_numeric_option_of_every_command_answers_or_refuses_a_huge_value_naming_it(tmp_path: Path) -> None:
    """Every number option of every form of every command, at 1e300 and at 1e18 (each in turn, the others at their
    base), under a 1 GiB address-space cap and 60 s a case: exit 0 or 1 (an answer), or 2 with one ``error:`` line
    that names the option — and the value, where the value is what it refuses (issue 34: sizes guarded before work)."""
    import subprocess
    import sys

    cases = []
    for form, base in _sweep_bases(tmp_path).items():
        for flag, name in _numeric_options(base):
            if (form, flag) in KNOWN:
                continue
            for value in _SHOWN:
                cases.append((form, flag, name, value, _with_value(base, flag, value, _SHORT)))
    code = (
        "import contextlib, io, json, resource, signal, sys, time\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from dpkit.cli import main\n"
        "class Late(BaseException): pass\n"
        "def late(*a): raise Late('over 60 s')\n"
        "signal.signal(signal.SIGALRM, late)\n"
        "for argv in json.loads(sys.stdin.read()):\n"
        "    err, started = io.StringIO(), time.monotonic()\n"
        "    signal.alarm(60)\n"
        "    try:\n"
        "        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err): rc = main(argv)\n"
        "    except BaseException as e: rc = f'{type(e).__name__}: {e}'\n"
        "    signal.alarm(0)\n"
        "    print(json.dumps([rc, err.getvalue(), time.monotonic() - started]), flush=True)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps([c[-1] for c in cases]), capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(results) == len(cases)
    CASES["huge options"] = len(cases)
    for (form, flag, name, value, argv), (rc, err, seconds) in zip(cases, results, strict=True):
        where = f"{form} {flag} {value}: {' '.join(argv)}\n{err}"
        assert rc in (0, 1, 2), where
        assert "Traceback" not in err and seconds < 60, where
        if rc != 2:
            continue
        lines = [line for line in err.splitlines() if not line.startswith("warning: ")]
        assert len(lines) == 1 and lines[0].startswith("error: "), where
        names = {flag, flag.lstrip("-"), name, name.replace("_", "-"), name.replace("_", " ")}
        assert any(n in lines[0] for n in names), where
        if "must" in lines[0] or "above the limit" in lines[0]:  # the value is what is refused: it is named
            assert any(shown in lines[0] for shown in _SHOWN[value]), where


# -- every numeric field of a report config, at huge values ------------------------------------------------------

#: Fields whose huge values have a meaning (a target ε, a σ, a seed, the users of a file: δ = min(1e-5, 1/users)):
#: read, not refused.
_MEANINGFUL_HUGE = {"epsilon", "sigma", "seed", "users"}


def _numeric_paths(schema: dict, node: dict, path: tuple) -> Iterator[tuple[tuple, str]]:
    """(path, JSON type) of every integer or number field reachable from ``node`` of the config schema."""
    for key, prop in node.get("properties", {}).items():
        options = prop.get("anyOf", [prop])
        for option in options:
            if "$ref" in option:
                target = schema["$defs"][option["$ref"].rsplit("/", 1)[1]]
                yield from _numeric_paths(schema, target, (*path, key))
            elif option.get("type") in ("integer", "number"):
                yield (*path, key), option["type"]
            elif option.get("type") == "array" and "$ref" in option.get("items", {}):
                target = schema["$defs"][option["items"]["$ref"].rsplit("/", 1)[1]]
                yield from _numeric_paths(schema, target, (*path, key, 0))
            elif option.get("type") == "array" and option.get("items", {}).get("type") in ("integer", "number"):
                yield (*path, key, 0), option["items"]["type"]


def _config_fields() -> list[tuple[tuple, str]]:
    from dpkit.reports.config import config_schema

    schema = config_schema()
    return sorted(set(_numeric_paths(schema, schema, ())), key=str)


def test_the_sweep_finds_every_numeric_field_of_a_report_config() -> None:
    names = {path[-1] if isinstance(path[-1], str) else path[-2] for path, _ in _config_fields()}
    assert {"episodes", "states", "actions", "horizon", "seeds", "workers", "runs", "users", "audit_runs"} <= names


@pytest.mark.parametrize("value", [10**18, 1e300])
@pytest.mark.parametrize(
    ("path", "kind"), _config_fields(), ids=lambda v: ".".join(map(str, v)) if isinstance(v, tuple) else v
)
def test_every_numeric_field_of_a_report_config_is_checked_before_work(
    tmp_path: Path, path: tuple, kind: str, value: float
) -> None:
    """A huge value in any numeric field of a report config is refused while the config is read — naming the field
    and within a small memory budget (nothing sized by it is allocated) — or, where a huge value means something
    (a target ε, a σ, a seed), read."""
    import tracemalloc

    from dpkit.reports.config import parse_config

    (tmp_path / "mine.toml").write_text('[[release]]\nname = "g"\nsensitivity = 1.0\nsigma = 30.0\ncount = 20\n')
    data: dict = {
        "seeds": 2,
        "quick": {"episodes": 10},
        "algorithm": [
            {"name": "rlsvi", "episodes": 20, "delta": 0.1, "audit": {"runs": 100}, "episode_grid": [10, 20]},
            {"name": "private-ofu-rl", "episodes": 20, "epsilon": 1.0, "delta": 0.1},
        ],
        "ledger": [{"name": "mine", "file": "mine.toml", "delta": 1e-5, "users": 100}],
        "deltas": [1e-6],
    }
    if path[0] == "algorithm" and path[1] in ("control_dim", "state_dim"):
        path = ("algorithm", 1, *path[1:])  # the LQ entry's sizes
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[path[-1]] = int(value) if kind == "integer" and value == 10**18 else value
    tracemalloc.start()
    try:
        parse_config(data, source=str(tmp_path / "report.toml"))
        accepted, message = True, ""
    except ValueError as err:
        accepted, message = False, str(err)
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{path}: {peak / 2**20:.0f} MiB allocated while reading the config"
    field = next(k for k in reversed(path) if isinstance(k, str))
    if accepted:
        assert field in _MEANINGFUL_HUGE or path[0] == "deltas" and value > 1, f"{path} = {value!r} was accepted"
    else:
        assert field in message or (path[0] == "deltas" and "deltas" in message), message
