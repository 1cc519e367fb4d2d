"""docs/make_regret.py: its quick mode writes the tables and figures; docs/regret.md is there with its columns."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "make_regret.py"


@pytest.fixture(scope="module")
def module() -> dict[str, Any]:
    return runpy.run_path(str(SCRIPT))


def _header(columns: tuple[str, ...]) -> str:
    return "| " + " | ".join(("panel",) + columns) + " |"


def _tables(text: str, columns: tuple[str, ...]) -> list[list[list[str]]]:
    """Every table of ``text`` whose header is the regret table's, as rows of cells."""
    tables, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line == _header(columns):
            rows = []
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip("|").split("|")])
            tables.append(rows)
    return tables


def _check(text: str, columns: tuple[str, ...], sigmas: list[str]) -> None:
    tables = _tables(text, columns)
    assert tables, "no regret table"
    for rows in tables:
        assert any("uniform" in r[1] for r in rows), "every table has the uniform-random baseline"
        private = [r for r in rows if r[3] != "—"]
        # every table runs some of the σ choices (seed 000's part: the paper's and the tight σ, or the tight alone)
        assert private and {r[3] for r in private} <= set(sigmas), "a table with no private rows or an unknown σ"
        assert any(r[3] == "—" and "uniform" not in r[1] for r in rows), "every table has a non-private baseline"
        for r in rows:
            assert len(r) == len(columns) + 1
            verdict = r[-1].strip("*")
            assert verdict in {"sublinear", "near-linear", "linear", "not shown sublinear"}
            if r[1].startswith("uniform"):
                continue
            m = re.fullmatch(r"(-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]", r[columns.index("slope [95% interval]") + 1])
            assert m, r
            slope, low, high = map(float, m.groups())
            assert low <= slope + 1e-9 and slope <= high + 1e-9
            assert (verdict in ("sublinear", "near-linear")) == (high < 1.0), r
            assert (verdict == "near-linear") == (0.95 < high < 1.0), r
            assert re.fullmatch(r"[\d,.e+-]+ ± [\d,.e+-]+", r[5]), r[5]


def _run(module: dict[str, Any], out: Path, *extra: str) -> str:
    sigmas = module["supported_sigmas"](module["SIGMAS"])
    module["main"](["--quick", "--out", str(out), "--sigmas", *sigmas, *extra])
    return (out / "regret.md").read_text(encoding="utf-8")


def test_sigma_choices(module: dict[str, Any]) -> None:
    assert module["SIGMAS"] == ("paper", "tight", "optimal")
    assert {"paper", "tight"} <= set(module["supported_sigmas"](module["SIGMAS"]))


def test_quick_rlsvi_part(module: dict[str, Any], tmp_path: Path) -> None:
    text = _run(module, tmp_path, "--only", "rlsvi")
    _check(text, module["TABLE_COLUMNS"], module["supported_sigmas"](module["SIGMAS"]))
    assert (tmp_path / "regret_rlsvi.png").stat().st_size > 10_000


@pytest.mark.slow
def test_quick_run_of_every_part(module: dict[str, Any], tmp_path: Path) -> None:
    """The whole --quick mode (about 15 s on one core)."""
    text = _run(module, tmp_path)
    _check(text, module["TABLE_COLUMNS"], module["supported_sigmas"](module["SIGMAS"]))
    for key in ("seed000_riverswim", "seed000_riverswim-inhomogeneous", "linopt", "lq", "rlsvi"):
        assert f"](regret_{key}.png)" in text
        assert (tmp_path / f"regret_{key}.png").stat().st_size > 10_000
    assert "where ours differs" in text


def test_docs_regret_md_is_there_with_its_columns(module: dict[str, Any]) -> None:
    doc = ROOT / "docs" / "regret.md"
    assert doc.is_file(), "docs/regret.md is missing: run `python docs/make_regret.py`"
    text = doc.read_text(encoding="utf-8")
    assert "Quick smoke run" not in text, "docs/regret.md comes from a --quick run"
    sigmas = re.search(r"σ choices: ([\w, ]+)\.", text)
    assert sigmas, "docs/regret.md does not state its σ choices"
    _check(text, module["TABLE_COLUMNS"], sigmas.group(1).split(", "))
    for png in re.findall(r"\]\((regret_[\w-]+\.png)\)", text):
        assert (ROOT / "docs" / png).is_file(), png


#: the page that shows the seed-000 regret table (the README did, before it became the front door)
RUNNING = ROOT / "docs" / "explanation" / "running.md"
_SEED_TABLE = "| ε | LDP-UCRL-VTR, σ paper | LDP-UCRL-VTR, σ tight |"


def _doc_cells(module: dict[str, Any]) -> dict[tuple[str, str], str]:
    """Seed 000's RiverSwim table of docs/regret.md as {(ε, σ): "R ± hw (slope [lo, hi], verdict)"}."""
    columns = module["TABLE_COLUMNS"]
    table = _tables((ROOT / "docs" / "regret.md").read_text(encoding="utf-8"), columns)[0]
    col = {name: i + 1 for i, name in enumerate(columns)}
    cells = {}
    for row in table:
        if not row[col["curve"]].startswith("LDP-UCRL-VTR"):
            continue
        verdict = row[col["verdict"]].strip("*")
        cells[(row[col["ε"]], row[col["σ"]])] = (
            f"{row[col['R(K): mean ± 95%']]} ({row[col['slope [95% interval]']]}, {verdict})"
        )
    return cells


def test_the_regret_table_of_the_running_page_is_the_generated_doc(module: dict[str, Any]) -> None:
    # every cell of the seed-000 table (docs/explanation/running.md) is the generated doc's, verdict included
    # ("sublinear" only where the slope interval lies below 1)
    cells = _doc_cells(module)
    lines = RUNNING.read_text(encoding="utf-8").splitlines()
    start = lines.index(_SEED_TABLE)
    rows = [line for line in lines[start + 2 :] if line.startswith("|")][: len({e for e, _ in cells})]
    assert rows, "the regret table of docs/explanation/running.md has no rows"
    for line in rows:
        eps, *shown = (c.strip() for c in line.strip("|").split("|"))
        for sigma, cell in zip(("paper", "tight", "optimal"), shown[:3]):
            assert cell == cells[(eps, sigma)], (eps, sigma, cell, cells[(eps, sigma)])


TUNING = ROOT / "docs" / "regret_tuning.json"


def test_the_tuned_constants_are_a_grid_search_on_seeds_disjoint_from_the_reported_ones(module: dict[str, Any]) -> None:
    tuning = json.loads(TUNING.read_text(encoding="utf-8"))
    assert tuning["command"] == "python docs/make_regret.py --tune"
    assert not set(tuning["seeds"]) & set(range(10)), "the tuning seeds overlap the reported seeds 0..9"
    tuned = {c["states"] for c in tuning["choices"]}
    assert tuned <= set(module["SEED000_PLAN"])
    wanted = {(e, s, m) for s in tuned for e in module["SEED000_ENVS"] for m in module["TUNING_GRID"]}
    assert sorted((c["env"], c["states"], c["method"]) for c in tuning["choices"]) == sorted(wanted)
    for choice in tuning["choices"]:
        grid = module["TUNING_GRID"][choice["method"]]
        assert [(g["bonus"], g["c"]) for g in choice["scores"]] == list(grid), "run --tune again: the grid changed"
        best = min(choice["scores"], key=lambda g: g["score"])
        assert (choice["bonus"], choice["c"]) == (best["bonus"], best["c"]), choice
        # an optimum at the grid's upper edge, the score still falling, is not a tuned constant: widen the grid
        assert choice["c"] < max(g["c"] for g in choice["scores"] if g["bonus"] == choice["bonus"]), choice


def _seed000_sections(module: dict[str, Any]) -> list[Any]:
    stored = module["load_stored"](ROOT / "docs" / "regret_data")
    assert "seed000" in stored, "docs/regret_data/seed000.json is missing"
    return stored["seed000"][0]


def test_the_seed000_runs_use_the_tuned_constants(module: dict[str, Any]) -> None:
    tuning = module["load_tuning"]()
    for s in _seed000_sections(module):
        states = int(re.search(r"S = (\d+)", s.setting).group(1))  # type: ignore[union-attr]
        env = s.setting.split(",")[0]
        _, c = module["chosen"](tuning, env, states, "ldp-ucrl-vtr")
        base_form, base_c = module["chosen"](tuning, env, states, "ucrl-vtr")
        assert f"k^{{1/4}}, c = {c:g}," in s.setting, s.setting
        assert f"UCRL-VTR with the {base_form} bonus, c = {base_c:g}" in s.setting, s.setting


def test_the_page_is_the_rendering_of_its_stored_rows(module: dict[str, Any]) -> None:
    # what --render writes from docs/regret_data/*.json (and the sections of parts without data, kept) is the page
    doc = ROOT / "docs" / "regret.md"
    text = doc.read_text(encoding="utf-8")
    sigmas = re.search(r"σ choices: ([\w, ]+)\.", text).group(1).split(", ")  # type: ignore[union-attr]
    stored = module["load_stored"](ROOT / "docs" / "regret_data")
    tuning = module["load_tuning"]()
    planned = tuple(module["SEED000_PLAN"])
    why = module["shift_lines"](stored["seed000"][0])
    legacy = module["legacy_sections"](text)
    assert module["render"](stored, legacy, sigmas, False, tuning, planned=planned, why=why) == text


def test_the_findings_of_seed000_read_off_its_tables(module: dict[str, Any]) -> None:
    # every "falls as ε grows" and "lies between" sentence is what the σ-tight rows say
    text = (ROOT / "docs" / "regret.md").read_text(encoding="utf-8")
    for s in _seed000_sections(module):
        rows = s.rows.get("σ tight")
        if rows is None:
            continue
        big = sorted((r for r in rows if r.kind == "private" and r.epsilon >= 2), key=lambda r: r.epsilon)
        base = next(r for r in rows if r.kind == "baseline")
        uniform = next(r for r in rows if r.kind == "uniform")
        line = next(x for x in text.splitlines() if x.startswith(f"- **{s.title}**"))
        finals = [r.final for r in big]
        assert ("falls as ε grows" in line) == all(a >= b for a, b in zip(finals, finals[1:], strict=False))
        assert (" lies between" in line) == all(base.final < f < uniform.final for f in finals)
        for r in big:
            assert (
                f"ε = {r.epsilon:g}: {r.slope.slope:.3f} [{r.slope.low:.3f}, {r.slope.high:.3f}], {r.verdict}" in line
            )
            assert (r.verdict == "sublinear") == (r.slope.high <= 0.95)


def _stored_rows(out: Path) -> list[dict[str, Any]]:
    return json.loads((out / "regret_data" / "seed000.json").read_text(encoding="utf-8"))["sections"]


@pytest.mark.slow
def test_dask_gives_the_process_pools_rows(module: dict[str, Any], tmp_path: Path) -> None:
    # seed 000's quick part through `--executor dask` on a LocalCluster: the same seeds give the same rows (every
    # R(K), slope interval and thinned curve) as a pool of as many processes (the same chunks of seeds)
    distributed = pytest.importorskip("dask.distributed")
    quick = ["--quick", "--only", "seed000", "--states", "2", "--sigmas", "tight"]
    module["main"]([*quick, "--out", str(tmp_path / "pool"), "--executor", "processes", "--workers", "2"])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        module["main"]([*quick, "--out", str(tmp_path / "dask"), "--executor", "dask", "--scheduler", address])
    pool, dask = _stored_rows(tmp_path / "pool"), _stored_rows(tmp_path / "dask")
    assert [s["key"] for s in pool] == ["seed000_riverswim_s2", "seed000_riverswim-inhomogeneous_s2"]
    assert dask == pool
    timing = json.loads((tmp_path / "dask" / "regret_data" / "seed000.json").read_text(encoding="utf-8"))["timing"]
    assert timing[-1]["executor"].startswith("dask"), timing
