"""``dpkit report``: a privacy report (Markdown, HTML, JSON, figures) of the algorithms in a config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dpkit.accountant.accountants import AccountingMethod
from dpkit.audit_modes import AuditMode
from dpkit.render import (
    emit_json,
    format_number,
    plain,
    print_lines,
    print_table,
    stderr_console,
)
from dpkit.stages import stage_progress


@click.command()
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Report configuration (TOML); default: the shipped one (all five seed algorithms, small sizes).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("report"),
    show_default=True,
    help="Directory for report.md, report.html, report.json and figures/.",
)
@click.option(
    "--quick", is_flag=True, help="Cap episodes, seeds and audit runs (the config's [quick]): under a minute."
)
@click.option("--json", "as_json", is_flag=True)
def report(config_path: Path | None, out: Path, quick: bool, as_json: bool) -> None:
    """A privacy report (Markdown, self-contained HTML, JSON, PNG figures) of the algorithms in a config."""
    import time

    from dpkit.reports.config import load_config
    from dpkit.reports.job import compute_report, stage_totals
    from dpkit.reports.render import check_output_dir, figure_list, write_report

    from .report_calibration import calibrate
    from .report_estimate import duration, estimate_line, report_estimate

    check_output_dir(out)
    config = load_config(config_path)  # the whole config (and --out) is checked before anything runs
    if quick:
        config = config.shrunk()
    # the command that reproduces the numbers; --out is left out so that report.json does not depend on where it goes
    command = (
        ["dpkit", "report"]
        + (["--config", str(config_path)] if config_path is not None else [])
        + (["--quick"] if quick else [])
    )
    started = time.perf_counter()
    try:  # first: the whole run's expected time, from its work and a first small unit of each kind timed here
        estimate = report_estimate(config, calibrate(config))
    except ValueError:  # a unit that cannot run: the report itself names what is wrong
        estimate = None
    if estimate is not None:
        stderr_console().print(estimate_line(estimate), markup=False, highlight=False, soft_wrap=True)
    with stage_progress(stage_totals(config), start=started) as clock:
        data = compute_report(config, command=command, progress=clock.advance, status=clock.status)
    figures = figure_list(data)
    with stage_progress({"figures": len(figures)}, start=started) as drawing:
        files = write_report(data, out, progress=lambda k: drawing.advance("figures", k))
    expected = "" if estimate is None else f"expected {duration(estimate.seconds)}; "
    stderr_console().print(
        f"report written to {plain(out)} in {time.perf_counter() - started:.1f} s "
        f"({expected}stages done at: {clock.summary()}, {drawing.summary()})",
        markup=False,
        highlight=False,
    )
    if as_json:
        emit_json({"out": str(out), "files": files, "summary": data["summary"]})
        return
    rows = data["summary"]
    if rows:
        print_table(
            f"{data['title']} → {out}",
            ["algorithm", "audit", "paper's claim", "claim ε, δ", "ε, paper σ"],
            [_verdict_cells(row) for row in rows],
            caption="audit: the implementation's verdict (ideal ÷ allowed), in the audit's own setting; "
            "paper's claim: its σ "
            "against its (ε, δ) in the report's setting (flawed: met, but its accounting has an error); ε, paper σ: "
            "at the claim's δ / at the informative δ (exact; ≤: an upper bound)",
        )
    if data["ledgers"]:
        print_table(
            "ledger and event files" if rows else f"{data['title']} → {out}: ledger and event files",
            ["entry", "claim ε, δ", "certified ε", "claim"],
            [
                [
                    r["name"],
                    f"{format_number(r['claimed_epsilon'], 4)}, {format_number(r['delta'], 3)}",
                    f"{format_number(r['certified_epsilon'], 4)} ({r['certified_method'] or '—'})",
                    r["claim"],
                ]
                for r in _file_rows(data)
            ],
        )
    named = [(r["algorithm"], r["worst_flag"]) for r in rows] + [(r["name"], r["worst_flag"]) for r in data["ledgers"]]
    counts = {r["algorithm"]: _flag_counts(r["flag_counts"]) for r in rows}
    worst = [f"{name}: {flag['severity']} {flag['code']}{counts.get(name, '')}" for name, flag in named if flag]
    if worst:
        print_lines(worst, title="worst flags")
    print_lines(
        [f"{', '.join(files[:3])} and {len(files) - 3} figures; report.html opens on the verdicts"],
        title=f"wrote {out}",
    )


def _file_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One short row per ledger or event file of the report: the claim, the certified ε and whether it meets it."""
    out = []
    for section in data["ledgers"]:
        a = section["assessment"]
        out.append(
            {
                "name": section["name"],
                "kind": section["kind"],
                "claimed_epsilon": section["epsilon"],
                "delta": section["delta"],
                "certified_epsilon": a["certified_epsilon"],
                "certified_method": a["certified_method"],
                "claim": a["claim_status"],
                "worst_flag": section["worst_flag"],
            }
        )
    return out


def _verdict_cells(row: dict[str, Any]) -> list[str]:
    """One verdict row of the terminal summary (the report's verdict page, shortened)."""
    audit = row["verdict"] or "not audited"
    if row["verdict"] is not None and row["audit_mode"] == AuditMode.SEQUENTIAL:  # no power: the runs it used
        audit += f" (sequential, {row['audit_runs_used']:,} runs)"
    elif row["verdict"] is not None:
        audit += f" ({format_number(row['audit_power_ratio'], 2)})"
    return [
        row["algorithm"],
        audit,
        row["paper_claim"],
        f"{format_number(row['claimed_epsilon'], 4)}, {format_number(row['delta'], 3)}",
        ("" if row["method"] == AccountingMethod.EXACT else "≤ ")
        + f"{format_number(row['epsilon_at_paper_sigma'], 4)} / "
        + format_number(row["epsilon_at_informative_delta"], 4),
    ]


def _flag_counts(counts: dict[str, int]) -> str:
    """`` (2 errors, 1 warning)``: how many flags of each severity an algorithm's ledger has."""
    words = [f"{counts[k]} {k}{'' if counts[k] == 1 else 's'}" for k in ("error", "warning", "info") if counts[k]]
    return f" ({', '.join(words)})" if words else ""
