"""``dpkit report``: a privacy report (Markdown, HTML, JSON, figures) of the algorithms in a config."""

from __future__ import annotations

from pathlib import Path

import click

from dpkit.render import emit_json, format_number, plain, print_table, progress_bar, stderr_console


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
    from dpkit.reports.job import compute_report, count_steps
    from dpkit.reports.render import check_output_dir, figure_list, write_report

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
    with progress_bar("computing the report", count_steps(config)) as advance:
        data = compute_report(config, command=command, progress=advance)
    with progress_bar("drawing figures", len(figure_list(data))) as advance:
        files = write_report(data, out, progress=advance)
    stderr_console().print(
        f"report written to {plain(out)} in {time.perf_counter() - started:.1f} s", markup=False, highlight=False
    )
    if as_json:
        emit_json({"out": str(out), "files": files, "summary": data["summary"]})
        return
    print_table(
        f"{data['title']} → {out}",
        ["algorithm", "claimed ε", "ε, paper σ", "σ ratio", "audit ε ≥", "verdict"],
        [
            [
                r["algorithm"],
                format_number(r["claimed_epsilon"], 6),
                format_number(r["epsilon_at_paper_sigma"], 6),
                format_number(r["noise_ratio"], 4),
                format_number(r["audited_epsilon_lower"], 4),
                r["verdict"] or "not audited",
            ]
            for r in data["summary"]
        ],
        caption=f"wrote {', '.join(files[:3])} and {len(files) - 3} figures",
    )
