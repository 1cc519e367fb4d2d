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
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpkit.cli import main

CASES: dict[str, int] = {}
PROFILE = settings(
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=300,
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
