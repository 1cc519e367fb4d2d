"""A whole report through the Python API: every file, the JSON schema, byte-identical JSON for the same
config, embedded PNG figures, the numbers behind the summary, and the HTML in a headless browser."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from dpkit.accountant.declarations import algorithm_ledger
from dpkit.algorithms.registry import declare
from dpkit.reports.config import ledger_parameters, parse_config
from dpkit.reports.job import compute_report, count_steps, regret_checkpoints
from dpkit.reports.render import FILES, figure_list, report_json, write_report

PNG = b"\x89PNG\r\n\x1a\n"
SMALL = {
    "title": "small test report",
    "seeds": 2,
    "workers": 1,
    "deltas": [1e-8, 1e-4],
    "algorithm": [
        {"name": "ldp-ucrl-vtr", "states": 2, "episodes": 40, "epsilon": 1.0, "delta": 0.1, "audit": {"runs": 60}},
        {
            "name": "private-linopt-vi",
            "states": 2,
            "episodes": 40,
            "epsilon": 1.0,
            "delta": 0.1,
            "audit": {"enabled": False},
        },
        {"name": "rlsvi", "states": 2, "episodes": 40, "delta": 1e-5, "episode_grid": [10, 40], "audit": {"runs": 60}},
    ],
}
COMMAND = ["dpkit", "report", "--config", "small.toml"]


def _schema() -> dict:
    return json.loads(resources.files("dpkit.reports").joinpath("report.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    config = parse_config(SMALL, "small.toml")
    steps = []
    data = compute_report(config, command=COMMAND, progress=steps.append)
    assert sum(steps) == pytest.approx(count_steps(config), abs=1e-9)
    assert all(k > 0 for k in steps)
    out = tmp_path_factory.mktemp("report")
    write_report(data, out)
    return data, out


def test_every_file_is_written(small: tuple[dict, Path]) -> None:
    data, out = small
    for name in FILES:
        assert (out / name).is_file()
    pngs = sorted(p.relative_to(out).as_posix() for p in (out / "figures").glob("*.png"))
    assert pngs == sorted(f.file for f in figure_list(data))
    kinds = {(f.algorithm, f.kind) for f in figure_list(data)}
    assert ("private-linopt-vi", "tree") in kinds and ("rlsvi", "rlsvi") in kinds
    assert ("ldp-ucrl-vtr", "audit-tradeoff") in kinds and ("ldp-ucrl-vtr", "audit-roc") in kinds
    assert ("private-linopt-vi", "audit-tradeoff") not in kinds  # its audit is disabled
    for png in pngs:
        assert (out / png).read_bytes()[:8] == PNG


def test_json_validates_against_the_schema(small: tuple[dict, Path]) -> None:
    data, out = small
    schema = _schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    on_disk = json.loads((out / "report.json").read_text(encoding="utf-8"))
    jsonschema.validate(on_disk, schema)
    assert on_disk == data
    broken = json.loads(json.dumps(on_disk))
    del broken["summary"][0]["noise_ratio"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_same_config_gives_byte_identical_json(small: tuple[dict, Path], tmp_path: Path) -> None:
    data, out = small
    again = compute_report(parse_config(SMALL, "small.toml"), command=COMMAND)
    assert report_json(again) == report_json(data)
    write_report(again, tmp_path)
    assert (tmp_path / "report.json").read_bytes() == (out / "report.json").read_bytes()
    text = (out / "report.json").read_text(encoding="utf-8")
    assert "seconds" not in text and "wall" not in text  # no timings, no timestamps


def test_a_process_pool_gives_the_same_numbers(small: tuple[dict, Path]) -> None:
    data, _ = small
    pooled = compute_report(parse_config(SMALL | {"workers": 2}, "small.toml"), command=COMMAND)
    assert pooled["algorithms"] == data["algorithms"] and pooled["summary"] == data["summary"]
    assert pooled["provenance"]["config"]["workers"] == 2


def test_provenance(small: tuple[dict, Path]) -> None:
    p = small[0]["provenance"]
    assert p["command_line"] == COMMAND
    assert p["config"]["source"] == "small.toml" and p["config"]["algorithms"][0]["name"] == "ldp-ucrl-vtr"
    assert p["seeds"]["regret"] == [0, 1]
    assert {"dpkit", "numpy", "scipy", "matplotlib", "jinja2", "click", "rich", "dp-accounting"} <= set(p["versions"])
    assert p["versions"]["dpkit"] == "0.1.0"


def test_summary_and_ledger_numbers_come_from_the_ledger(small: tuple[dict, Path]) -> None:
    data, _ = small
    config = parse_config(SMALL, "small.toml")
    for a, row, section in zip(config.algorithms, data["summary"], data["algorithms"]):
        led = json.loads(
            json.dumps(algorithm_ledger(declare(a.name, a.epsilon, a.delta, **ledger_parameters(a, 0))).to_dict())
        )
        assert section["ledger"] == led
        assert row["claimed_epsilon"] == led["epsilon_claimed_by_paper"]
        assert row["epsilon_at_paper_sigma"] == led["epsilon_achieved_by_paper_sigma"]
        assert row["noise_ratio"] == led["noise_ratio"]
        if section["audit"]["available"]:
            assert row["audited_epsilon_lower"] == section["audit"]["result"]["epsilon_lower"]
            assert row["verdict"] == section["audit"]["result"]["verdict"]
        else:
            assert row["audited_epsilon_lower"] is None and row["verdict"] is None
    curves = data["algorithms"][0]["epsilon_curves"]
    assert curves["deltas"] == [1e-8, 1e-4, 0.1]  # the config's grid and the target δ
    exact = curves["methods"]["exact"]
    for key, values in curves["methods"].items():  # no method certifies less than the exact one
        assert all(v is None or v >= e - 1e-12 for v, e in zip(values, exact)), key


def test_regret_curves_are_the_simulated_ones(small: tuple[dict, Path]) -> None:
    from dpkit.algorithms.simulation import simulate

    data, _ = small
    config = parse_config(SMALL, "small.toml")
    a, section = config.algorithms[0], data["algorithms"][0]
    regret = section["regret"]
    assert regret["checkpoints"] == regret_checkpoints(40).tolist() and regret["checkpoints"][-1] == 40
    run = simulate(a.experiment("tight", 0), 1)
    kept = run.cumulative_regret[np.array(regret["checkpoints"]) - 1]
    assert regret["tight"]["cumulative_regret"][1] == kept.tolist()
    assert regret["tight"]["sigmas"] == dict(run.sigmas)
    assert regret["tight"]["final_regret"][1] == run.cumulative_regret[-1]


def test_rlsvi_section(small: tuple[dict, Path]) -> None:
    from dpkit.algorithms.rlsvi import rlsvi_run

    r = small[0]["algorithms"][2]["rlsvi"]
    assert r["episodes"] == [10, 40]
    _, privacy = rlsvi_run("riverswim", 2, 2, 40, 0, horizon=4, delta=1e-5)
    assert r["mu_run"][1] == privacy.mu and r["epsilon_run"][1] == privacy.exact_epsilon(1e-5)
    for run, worst, paper in zip(r["epsilon_run"], r["epsilon_worst_case"], r["epsilon_paper"]):
        assert run <= worst <= paper  # one run's exact ε, the worst case over runs, the paper's closed form
    # the run's ε is ex-post (data-dependent) and the report says so, with the worst case beside it
    assert r["run_kind"] == "ex-post" and privacy.to_dict()["kind"] == "ex-post"
    assert r["mu_worst_case"][1] == pytest.approx(privacy.mu_worst_case, rel=1e-12)
    md = (small[1] / "report.md").read_text(encoding="utf-8")
    assert "| ε worst case (guarantee) | ε one run (ex-post, data-dependent) |" in md
    assert "The one-run ε is ex-post" in md and "not a differential privacy guarantee" in md


def test_every_html_image_is_an_embedded_png(small: tuple[dict, Path]) -> None:
    data, out = small
    html = (out / "report.html").read_text(encoding="utf-8")
    sources = re.findall(r'<img src="([^"]*)"', html)
    assert len(sources) == len(figure_list(data)) == len(re.findall(r"<img\b", html))
    for src in sources:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1], validate=True)[:8] == PNG
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing fetched from the network
    assert "<link" not in html and "<script" not in html


def test_markdown_links_every_figure(small: tuple[dict, Path]) -> None:
    data, out = small
    md = (out / "report.md").read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\((figures/[^)]+\.png)\)", md)
    assert sorted(links) == sorted(f.file for f in figure_list(data))
    assert all((out / link).is_file() for link in links)
    assert "## Summary" in md and "Replace-one" in md and "Not audited: disabled in the configuration" in md


def test_failure_leaves_out_untouched(small: tuple[dict, Path], tmp_path: Path) -> None:
    data = json.loads(json.dumps(small[0]))
    data["algorithms"][0]["audit"]["result"]["audit"]["tests"] = []  # the trade-off figure refuses this
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="at least one test"):
        write_report(data, out)
    assert not out.exists()


def _browser() -> str | None:
    return next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


@pytest.mark.skipif(_browser() is None, reason="no headless Chromium on this machine")
def test_html_shows_every_figure_in_a_headless_browser(small: tuple[dict, Path], tmp_path: Path) -> None:
    data, out = small
    browser = _browser()
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    # every <img> decoded by the browser with a non-zero size (checked in a copy with a script added)
    check = """<script>window.addEventListener('load', function () {
      var imgs = Array.from(document.images);
      var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0 && i.naturalHeight > 0; });
      var pre = document.createElement('pre'); pre.id = 'image-check'; pre.textContent = ok.length + '/' + imgs.length;
      document.body.appendChild(pre); });</script>"""
    copy = tmp_path / "check.html"
    copy.write_text(
        (out / "report.html").read_text(encoding="utf-8").replace("</body>", check + "</body>"), encoding="utf-8"
    )
    dom = subprocess.run(
        [*flags, "--virtual-time-budget=10000", "--dump-dom", copy.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    n = len(figure_list(data))
    assert f'<pre id="image-check">{n}/{n}</pre>' in dom
    # and a screenshot of the report itself: an image, not a blank page
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1200,4000", (out / "report.html").as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (4000, 1200)
    assert pixels.std() > 0.05 and (pixels[..., :3].std(axis=2) > 0.1).mean() > 0.001  # text and coloured figures
