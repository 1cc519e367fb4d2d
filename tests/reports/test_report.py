"""A whole report through the Python API: every file, the JSON schema, byte-identical JSON for the same
config, embedded PNG figures, the numbers behind the verdict rows (the HTML in a real browser: test_browser.py)."""

from __future__ import annotations

import base64
import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from markupsafe import escape

from dpkit.accountant.algorithm_ledgers import algorithm_ledger
from dpkit.algorithms.registry import declare
from dpkit.commands.report_estimate import figure_count
from dpkit.reports.config import ledger_parameters, parse_config
from dpkit.reports.job import STAGES, compute_report, count_steps, regret_checkpoints, stage_totals
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
    steps: list[tuple[str, float]] = []
    data = compute_report(config, command=COMMAND, progress=lambda stage, k: steps.append((stage, k)))
    totals = stage_totals(config)
    assert set(totals) == set(STAGES) and sum(totals.values()) == count_steps(config)
    for stage in STAGES:  # every stage reports its own steps, in full
        assert sum(k for name, k in steps if name == stage) == pytest.approx(totals[stage], abs=1e-9)
    assert all(k > 0 for _, k in steps)
    assert len(figure_list(data)) == figure_count(config)  # what the estimate counts before anything runs
    out = tmp_path_factory.mktemp("report")
    write_report(data, out)
    return data, out


@pytest.mark.slow
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


@pytest.mark.slow
def test_same_config_gives_byte_identical_json(small: tuple[dict, Path], tmp_path: Path) -> None:
    data, out = small
    again = compute_report(parse_config(SMALL, "small.toml"), command=COMMAND)
    assert report_json(again) == report_json(data)
    write_report(again, tmp_path)
    assert (tmp_path / "report.json").read_bytes() == (out / "report.json").read_bytes()
    text = (out / "report.json").read_text(encoding="utf-8")
    assert "seconds" not in text and "wall" not in text  # no timings, no timestamps


@pytest.mark.slow
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


def test_verdict_rows(small: tuple[dict, Path]) -> None:
    """Each verdict row carries the audit's verdict with its power, certified bound and estimate, σ paper / tight /
    optimal as the ledger has them, and the ledger's worst flag."""
    data, out = small
    severities = ("error", "warning", "info")
    for row, section in zip(data["summary"], data["algorithms"]):
        led = section["ledger"]
        assert (row["sigma_paper"], row["sigma_tight"], row["sigma_optimal"]) == (
            led["sigma_paper"],
            led["sigma_tight"],
            led["sigma_optimal"],
        )
        assert row["epsilon_at_informative_delta"] == led["epsilon_at_informative_delta_by_paper_sigma"]
        flags = led["flags"]
        if flags:
            worst = min(severities.index(f["severity"]) for f in flags)
            assert row["worst_flag"]["severity"] == severities[worst]
            assert row["worst_flag"]["code"] in {f["code"] for f in flags if f["severity"] == severities[worst]}
        else:
            assert row["worst_flag"] is None
        assert sum(row["flag_counts"].values()) == len(flags)
        if section["audit"]["available"]:
            r = section["audit"]["result"]
            assert row["audit_power_ratio"] == r["power_ratio"] and row["audited_mu_lower"] == r["mu_lower"]
            assert row["audited_mu_estimate"] == r["mu_estimate"] and row["audit_runs"] == r["runs"]
            assert row["audit_mode"] == "fixed" and row["audit_runs_used"] == r["runs"] * len(r["positions"])
            # the estimate is the point estimate of μ read at δ; the certified bound is no larger than it
            assert row["audited_epsilon_estimate"] >= row["audited_epsilon_lower"] - 1e-12
            assert (row["verdict"] == "inconclusive") == (r["power_ratio"] < row["audit_power_needed"]) or (
                row["verdict"] == "violation"
            )
    html = (out / "report.html").read_text(encoding="utf-8")
    verdicts = html[html.index('id="verdicts"') : html.index("</table>", html.index('id="verdicts"'))]
    for row in data["summary"]:
        shown = row["verdict"] or "not-audited"
        assert f'class="badge {shown}"' in verdicts  # an inconclusive audit is drawn as such, never green
    assert verdicts.count('class="badge consistent"') == sum(r["verdict"] == "consistent" for r in data["summary"])


def test_every_audited_number_is_the_headline_positions(small: tuple[dict, Path]) -> None:
    """Issue 40: the audit's numbers beside its verdict (the JSON, the verdict row, the section's text, the trade-off
    figure) are one position's — the headline's, whose verdict is the audit's; the largest bounds of the positions are
    named as such, with theirs."""
    data, out = small
    markdown = (out / "report.md").read_text(encoding="utf-8")
    captions = {(f.algorithm, f.kind): f.caption for f in figure_list(data)}
    for row, section in zip(data["summary"], data["algorithms"]):
        if not section["audit"]["available"]:
            continue
        r = section["audit"]["result"]
        [head] = [p for p in r["positions"] if p["position"] == r["worst_position"] == r["position"]]
        for key in ("mu_lower", "epsilon_lower", "mu_allowed", "pair_mu", "reach", "power_ratio", "verdict"):
            assert r[key] == head[key], key
        assert row["audit_position"] == head["position"] and row["audited_mu_lower"] == head["mu_lower"]
        assert r["mu_lower_largest"] == max(p["mu_lower"] for p in r["positions"])
        assert r["epsilon_lower_largest"] == max(p["epsilon_lower"] for p in r["positions"])
        where = f"at the headline position, {head['position']}"
        assert f"**{r['mu_lower']:.4g}** {where}" in markdown
        assert f"μ ≥ {r['mu_lower_largest']:.4g} at {r['mu_lower_largest_position']}" in markdown
        assert where in captions[(section["name"], "audit-tradeoff")]


def test_the_verdict_page_separates_the_implementation_from_the_papers_claim(small: tuple[dict, Path]) -> None:
    """Issues 33 and 43: a green audit beside a red flag no longer reads as one signal: the audit verdicts (the code
    against its declaration) and the paper's flags (the paper's σ against its claim) are two tables under two
    headings, each row with a sentence saying what it judged, in report.html and report.md alike."""
    data, out = small
    html = (out / "report.html").read_text(encoding="utf-8")
    top = html[html.index('id="verdicts"') :]
    implementation = top[top.index('id="verdicts-implementation"') : top.index("</table>")]
    paper = top[top.index('id="verdicts-paper"') :]
    paper = paper[: paper.index("</table>")]
    assert top.index('id="verdicts-implementation"') < top.index('id="verdicts-paper"')
    assert "flag-" not in implementation and "worst flag" not in implementation
    assert not any(f'class="badge {v}"' in paper for v in ("consistent", "violation", "inconclusive", "not-audited"))
    markdown = (out / "report.md").read_text(encoding="utf-8")
    md_implementation = markdown[markdown.index("### The implementation") : markdown.index("### The paper's claim")]
    paper_at = markdown.index("### The paper's claim")
    md_paper = markdown[paper_at : markdown.index("\n## ", paper_at)]
    for row in data["summary"]:
        text = "The implementation: not audited." if row["verdict"] is None else "The implementation ("
        assert implementation.count(text) >= 1 and text in md_implementation
        claim = f"The paper's claim (ε = {row['claimed_epsilon']:.4g} at δ = {row['delta']:.4g})"
        assert escape(claim) in paper and claim in md_paper and claim not in md_implementation
    assert paper.count('<tr class="judged">') == len(data["summary"])
    assert "| worst flag |" in md_paper and "worst flag" not in md_implementation


def test_the_audit_setting_line_has_no_empty_field(small: tuple[dict, Path]) -> None:
    """Issue 43: the audit's own setting once printed ``env = , implementation = —`` (the audit's own MDP and the
    registered agent) and the LQ sizes of a tabular world; it shows the fields that hold a value for this world."""
    _, out = small
    for name in ("report.html", "report.md"):
        text = (out / name).read_text(encoding="utf-8")
        line = text[text.index("The audit's own setting: ") :].split("\n")[0]
        assert "states = 2" in line and "horizon = " in line, line
        assert "env =" not in line and "implementation =" not in line and "state_dim" not in line, line
        assert "= ," not in line and "= —" not in line, line


def test_quick_audits_without_power_are_inconclusive(small: tuple[dict, Path]) -> None:
    """The small report's audits (60 runs) cannot see a violation of ε = 1: they say inconclusive, not consistent."""
    row = small[0]["summary"][0]
    assert row["algorithm"] == "ldp-ucrl-vtr" and row["audit_runs"] == 60
    assert row["audit_power_ratio"] < row["audit_power_needed"] and row["verdict"] == "inconclusive"


def test_regret_bands_and_slopes(small: tuple[dict, Path]) -> None:
    """Mean, 95% band and slope interval are algorithms.regret_stats' own, of the simulated curves (K = 40: every
    episode is a checkpoint, so the kept curves are the whole curves)."""
    from dpkit.algorithms.regret_stats import mean_band, slope_interval, verdict

    data, _ = small
    regret = data["algorithms"][0]["regret"]
    assert regret["checkpoints"] == list(range(1, 41))
    assert regret["level"] == 0.95 and regret["optimal"] is not None  # LDP-UCRL-VTR has an optimal allocation
    for sigma in ("paper", "tight", "optimal"):
        g = regret[sigma]
        curves = np.array(g["cumulative_regret"])
        mean, half = mean_band(curves, level=0.95)
        assert g["mean"] == mean.tolist() and g["band"] == half.tolist()
        assert g["final_regret_band"] == half[-1]
        interval = slope_interval(curves, 0, level=0.95)
        assert (g["loglog_slope_low"], g["loglog_slope_high"]) == (interval.low, interval.high)
        assert g["growth"] == verdict(interval)


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
    assert "## Verdicts" in md and "Replace-one" in md and "Not audited: disabled in the configuration" in md


def test_failure_leaves_out_untouched(small: tuple[dict, Path], tmp_path: Path) -> None:
    data = json.loads(json.dumps(small[0]))
    data["algorithms"][0]["audit"]["result"]["audit"]["tests"] = []  # the trade-off figure refuses this
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="at least one test"):
        write_report(data, out)
    assert not out.exists()


def test_anchors_are_unique_with_every_derived_id() -> None:
    """A section's id and its derived ids (NAME-ledger, NAME-flags, …) never meet another section's or the
    template's own (files, verdicts, provenance), whatever the names."""
    from dpkit.reports.verdict_views import FIXED_IDS, ID_SUFFIXES, anchors

    names = ["files", "files-flags", "files", "verdicts", "a b", "a-b", "<img>", "..", "x-ledger", "x"]
    ids = anchors(names)
    assert ids["files"] != "files" and ids["verdicts"] != "verdicts"
    derived = [ids[n] + suffix for n in dict.fromkeys(names) for suffix in ID_SUFFIXES]
    assert len(derived) == len(set(derived)) and not set(derived) & FIXED_IDS
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids.values())  # no "..", no markup: safe as file stems


def test_a_claim_met_at_an_uninformative_delta_is_not_green() -> None:
    """A file whose claim holds only at a δ above the informative δ gets a warning and a yellow badge."""
    from dpkit.accountant import Ledger
    from dpkit.accountant.assessment import assess_ledger
    from dpkit.reports.job import worst_flag
    from dpkit.reports.verdict_views import ledger_view

    a = assess_ledger(Ledger.homogeneous(1.0, 0.5), delta=0.9, epsilon=0.01).to_dict()
    assert a["claim_status"] == "met" and [f["code"] for f in a["flags"]] == ["delta-not-informative"]
    section = {
        "kind": "ledger file",
        "epsilon": 0.01,
        "delta": 0.9,
        "assessment": a,
        "worst_flag": worst_flag(a["flags"]),
    }
    view = ledger_view(section)
    assert view["claim_css"] == "inconclusive" and "uninformative" in view["claim_met"]
    assert view["flag"]["code"] == "delta-not-informative" and view["flag"]["severity"] == "warning"


def test_regret_tables_carry_their_ratios_and_baselines(small: tuple[dict, Path]) -> None:
    """R(K) ÷ the uniform policy's exact regret and tight/optimal ÷ paper, each with its interval, in the JSON and in
    both renderings; equal rows come with their sentence (RLSVI: one release, so optimal is tight)."""
    from dpkit.algorithms.envs.tabular import riverswim
    from dpkit.algorithms.regret_stats import baseline_ratio, ratio_interval, uniform_tabular_regret

    data, out = small
    md = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    for section in data["algorithms"]:
        g = section["regret"]
        uniform = uniform_tabular_regret(riverswim(2)) * 40
        assert g["baselines"] == {"uniform": pytest.approx(uniform, rel=1e-12)}
        ratio = baseline_ratio(g["tight"]["final_regret"], uniform, level=0.95)
        assert g["tight"]["over_baselines"]["uniform"] == pytest.approx(
            {"ratio": ratio.ratio, "low": ratio.low, "high": ratio.high}
        )
        tight = ratio_interval(g["tight"]["final_regret"], g["paper"]["final_regret"], 0, level=0.95)
        assert g["over_paper"]["tight"] == {"ratio": tight.ratio, "low": tight.low, "high": tight.high}
        assert g["tight_over_paper"] == tight.ratio
    assert md.count("| R(K) ÷ uniform [95%] |") == len(data["algorithms"])
    assert md.count("paired bootstrap interval over the seeds): tight ÷ paper") == len(data["algorithms"])
    assert "<th>R(K) ÷ uniform [95%]</th>" in html
    rlsvi = data["algorithms"][2]["regret"]
    assert rlsvi["equal_rows"] and "tight and optimal are equal because their σ are" in rlsvi["equal_rows"]
    assert rlsvi["equal_rows"] in md and str(escape(rlsvi["equal_rows"])) in html


def test_equal_rows_are_explained_and_only_they() -> None:
    from dpkit.reports.regret_runs import equal_rows_note

    def row(mean: float, sigmas: dict, gain: float | None = None) -> dict:
        return {"final_regret_mean": mean, "sigmas": sigmas, "gain_last_half": gain}

    distinct = {"paper": row(10.0, {"a": 3.0}), "tight": row(5.0, {"a": 1.0}), "optimal": None}
    assert equal_rows_note(distinct) is None
    capped = {"paper": row(1435.0, {"a": 3.0}), "tight": row(1435.0, {"a": 1.0}), "optimal": row(1436.0, {"a": 2.0})}
    note = equal_rows_note(capped)
    assert note is not None and "paper and tight, paper and optimal, tight and optimal" in note and "cap" in note
    frozen = {"paper": row(5.4, {"B1": 3.0}, 0.004), "tight": row(5.4, {"B1": 1.0}, 0.005), "optimal": None}
    assert "no control" in (equal_rows_note(frozen) or "")
    same = {"paper": row(9.0, {"a": 3.0}), "tight": row(5.0, {"a": 1.0}), "optimal": row(5.0, {"a": 1.0})}
    assert "tight and optimal are equal because their σ are" in (equal_rows_note(same) or "")


def _ledger_of(**changes: object) -> dict:
    """A ledger as report.json holds it, with ``changes``."""
    flags = changes.pop("flags", [])
    return {
        "epsilon_claimed_by_paper": 1.0,
        "epsilon_achieved_by_paper_sigma": 0.5,
        "method": "exact",
        "flags": flags,
        **changes,
    }


def test_the_papers_claim_is_judged_off_the_ledger() -> None:
    """Issue 54: the report's second verdict. An error-level flag (a sensitivity too small, an unaccounted
    data-dependent quantity) makes a claim the paper's σ meets here `flawed`, never a green `met`; an ε above the
    claim is `not met` where exact and `not certified` where only an upper bound exceeds it; warnings leave it met."""
    from dpkit.reports.job import paper_claim

    error, warning = {"severity": "error", "code": "paper-sensitivity-too-small"}, {"severity": "warning", "code": "w"}
    assert paper_claim(_ledger_of()) == "met" and paper_claim(_ledger_of(flags=[warning])) == "met"
    assert paper_claim(_ledger_of(flags=[warning, error])) == "flawed"
    assert paper_claim(_ledger_of(epsilon_achieved_by_paper_sigma=1.5, flags=[error])) == "not met"
    assert paper_claim(_ledger_of(epsilon_achieved_by_paper_sigma=1.5, method="pld")) == "not certified"
    assert paper_claim(_ledger_of(epsilon_achieved_by_paper_sigma=1.0)) == "met"  # at the claim: met


def test_the_first_screen_names_each_verdicts_setting(small: tuple[dict, Path]) -> None:
    """Issue 54: one algorithm showed σ tight 2.125 in one table and 3.669 in another without saying which setting
    each was. The first screen's line gives both verdicts, the worst flag and the setting of each: the audit's own
    (its world, horizon and users per run, and its target where it is not the report's) and the report's (the
    config's world and K); report.md opens on it, and both files say it beside the ledger and the audit's σ."""
    from dpkit.reports.verdict_views import glance_view

    data, out = small
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert markdown.index("## At a glance") < markdown.index("## Verdicts")
    glance = markdown[markdown.index("## At a glance") : markdown.index("## Verdicts")]
    for row, section in zip(data["summary"], data["algorithms"]):
        view = glance_view(row, section)
        settings = section["settings"]
        assert view["paper"]["verdict"] == row["paper_claim"] and view["audit"]["verdict"] == (
            row["verdict"] or "not audited"
        )
        assert (
            view["settings"]["report"].startswith(settings["env"])
            and f"K = {settings['episodes']}" in view["settings"]["report"]
        )
        result = section["audit"]["result"]
        if result is None:
            assert view["settings"]["audit"] is None
        else:
            assert f"H = {result['setting']['horizon']}" in view["settings"]["audit"]
            assert f"{result['episodes']} users per run" in view["settings"]["audit"]
            assert ("target ε" in view["settings"]["audit"]) == (
                result["setting"]["epsilon"] != section["ledger"]["epsilon"]
            )
            assert f"in the audit's setting ({view['settings']['audit']})" in markdown
        line = next(line for line in glance.splitlines() if line.startswith(f"| {row['algorithm']} |"))
        assert f"**{row['paper_claim']}**" in line and view["settings"]["report"] in line
        assert row["worst_flag"] is None or row["worst_flag"]["code"] in line
        assert f"In the report's setting: {view['settings']['report']}." in markdown
