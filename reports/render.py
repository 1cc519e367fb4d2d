"""Rendering a computed report (:func:`dpkit.reports.job.compute_report`) into files.

:func:`write_report` draws every figure, renders ``report.md`` and a self-contained ``report.html`` from the Jinja2
templates in ``reports/templates``, writes ``report.json``, and swaps them into place only when all of it
succeeded. Users' text is data, never markup (escaped in both formats, :mod:`dpkit.reports.markup`). How the files
are made safe and atomic: see docs/explanation/reports.md ("How a report is written").
"""

from __future__ import annotations

import base64
import dataclasses
import os
import shlex
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from dpkit.audits.summary import readable_number

from . import figures
from .encoding import dumps
from .markup import html_finalize, markdown_escape, math_html, math_markdown, symbol
from .verdict_views import (
    anchors,
    glance_view,
    headline_view,
    interval_end,
    ledger_view,
    relation_label,
    sequential_view,
    verdict_view,
)

__all__ = [
    "Figure",
    "FILES",
    "markdown_escape",
    "math_html",
    "math_markdown",
    "check_output_dir",
    "figure_list",
    "draw_figures",
    "render_markdown",
    "render_html",
    "report_json",
    "write_report",
    "audit_setting",
]

#: The files every report has, beside its figures.
FILES: tuple[str, ...] = ("report.md", "report.html", "report.json")
FIGURE_DIR = "figures"


@dataclass(frozen=True)
class Figure:
    """One figure of a report: its file (relative to the report), what it shows, and how to draw it."""

    algorithm: str
    kind: str
    caption: str
    draw: Callable[[Path], Path]
    stem: str = ""  # the file's name before the kind: the section's id (figure_list sets it); the name by default

    @property
    def file(self) -> str:
        return f"{FIGURE_DIR}/{self.stem or self.algorithm}-{self.kind}.png"


# -- figures ----------------------------------------------------------------------------------------------


def _epsilon_delta(section: Mapping[str, Any]) -> Figure:
    c = section["epsilon_curves"]
    led = section["ledger"]
    curves = {c["labels"][key]: values for key, values in c["methods"].items()}
    return Figure(
        section["name"],
        "epsilon-delta",
        f"ε(δ) of the declared releases at the paper's σ under every accounting method "
        f"({led['relation'].replace('_', '-')}, μ = {c['mu']:.4g}). Refused or zero values are not drawn; the star is "
        f"the target.",
        lambda p: figures.epsilon_delta_figure(
            c["deltas"],
            curves,
            p,
            title=f"{section['name']}: ε(δ) at the paper's σ",
            target=(led["delta"], led["epsilon"]),
        ),
    )


def _tree(section: Mapping[str, Any]) -> Figure:
    t = section["tree"]
    return Figure(
        section["name"],
        "tree",
        f"The binary counter over K = {t['steps']} episodes ({t['schedule']} schedule, {t['released_prefixes']} "
        f"released "
        f"prefixes). Left: the noise variance of each released prefix t, popcount(t)·σ², in units of σ². Right: the "
        f"number of noisy p-sums that contain user k (at most {t['max_psums_per_item']}; the paper's m = "
        f"{t['paper_depth']}).",
        lambda p: figures.tree_figure(
            t["prefix_psums"],
            t["item_psums"],
            p,
            paper_depth=t["paper_depth"],
            title=f"{section['name']}: binary-tree counters, K = {t['steps']}",
        ),
    )


def _rlsvi(section: Mapping[str, Any]) -> Figure:
    r = section["rlsvi"]
    series = {
        r"paper's closed form $\rho + 2\sqrt{\rho \ln(1/\delta)}$": r["epsilon_paper"],
        "same ρ, exact GDP": r["epsilon_exact_gdp"],
        "worst case over runs (exact)": r["epsilon_worst_case"],
        f"one run's ex-post ε, data-dependent (seed {r['seed']})": r["epsilon_run"],
    }
    return Figure(
        section["name"],
        "rlsvi",
        f"RLSVI's ε at δ = {r['delta']:g} as K grows ({r['env']}, S = {r['states']}, A = {r['actions']}, "
        f"H = {r['horizon']}): the paper's closed form, the same ρ converted exactly, the worst case over all runs "
        f"(the DP guarantee), and the exact ε of one run of K episodes from its own visit counts — an ex-post, "
        f"data-dependent figure, not a DP guarantee.",
        lambda p: figures.rlsvi_figure(r["episodes"], series, p, title=f"rlsvi: ε at δ = {r['delta']:g}"),
    )


def _claimed_mu(result: Mapping[str, Any]) -> float:
    mu = result["audit"].get("claimed_mu")
    return float(result["exact_mu"] if mu is None else mu)


def _tradeoff(section: Mapping[str, Any]) -> Figure:
    r = section["audit"]["result"]
    mu = _claimed_mu(r)
    return Figure(
        section["name"],
        "audit-tradeoff",
        f"The audit's tests{headline_view(r)['where']} ({r['observer']} observer, {r['runs']} runs per dataset): "
        "empirical (FPR, FNR) with "
        f"Clopper–Pearson boxes over the exact μ-GDP trade-off curve f(x) = Φ(Φ⁻¹(1−x) − μ) of the claimed "
        f"μ = {mu:.4g}. At the audit's confidence the true rates lie below and left of each box's upper corner; a "
        f"corner below the curve would be a violation.",
        lambda p: figures.tradeoff_figure(
            r["audit"]["tests"],
            mu,
            p,
            mu_lower=r["mu_lower"],
            title=f"{section['name']}: audit trade-off ({r['observer']})",
        ),
    )


def _roc(section: Mapping[str, Any]) -> Figure:
    r = section["audit"]["result"]
    mu = _claimed_mu(r)
    roc = r["roc"]
    return Figure(
        section["name"],
        "audit-roc",
        f"ROC of the attack on the evaluation split{headline_view(r)['where']}, beside the largest true positive rate "
        f"that μ = {mu:.4g} allows. "
        f"Shaded: the {figures.roc_band_label(roc['level'], roc['kind'])}: two-sided Clopper–Pearson intervals for "
        f"the FPR ({roc['negatives']} runs on D) and the TPR ({roc['positives']} runs on D′) at each of the "
        f"{len(roc['fpr']) - 1} thresholds, Bonferroni-corrected so that all hold together. The thresholds are chosen "
        "from the same scores, so the confidence is approximate.",
        lambda p: figures.roc_figure(
            roc["fpr"], roc["tpr"], p, mu=mu, band=roc, title=f"{section['name']}: ROC of the audit's attack"
        ),
    )


def _evalue(section: Mapping[str, Any]) -> Figure:
    r = section["audit"]["result"]
    curves = {
        f"position {p['position']}": ([k["runs_used"] for k in p["looks"]], [k["e_value"] for k in p["looks"]])
        for p in r["positions"]
        if p["looks"]
    }
    count = len(r["positions"])
    line = "2/α" if count == 1 else f"2/(α/{count}), each of the {count} positions testing at α/{count}"
    return Figure(
        section["name"],
        "audit-evalue",
        f"The sequential audit's evidence ({r['observer']} observer): the e-value of each position's claim against "
        f"the runs per dataset it had used, after every piece of a batch, on a log scale. The audit stops with a "
        f"violation as soon as one reaches the dashed line at {r['threshold']:.4g} ({line}; by Ville's inequality a "
        f"correct implementation reaches it with probability at most α/2); a star marks a crossing.",
        lambda p: figures.evalue_figure(
            curves, p, threshold=r["threshold"], title=f"{section['name']}: sequential audit ({r['observer']})"
        ),
    )


#: The σ of a regret section, in the order (and so the colours and line styles) the figure draws them.
REGRET_SIGMAS: tuple[str, ...] = ("paper", "tight", "optimal")
_SIGMA_WORDS = {"paper": "the paper's σ", "tight": "the tight σ", "optimal": "the optimal allocation"}


def _regret(section: Mapping[str, Any]) -> Figure:
    g = section["regret"]
    seeds, level = len(g["seeds"]), g["level"]
    sigmas = [sigma for sigma in REGRET_SIGMAS if g[sigma] is not None]
    curves = {
        f"σ {sigma}": figures.RegretBand.from_mean_band(g[sigma]["mean"], g[sigma]["band"], seeds=seeds, level=level)
        for sigma in sigmas
    }
    listed = ", ".join(_SIGMA_WORDS[s] for s in sigmas[:-1]) + f" and {_SIGMA_WORDS[sigmas[-1]]}"
    band = (
        f"mean and {100 * level:.3g}% band over {seeds} seeds (Student-t interval of the mean)"
        if seeds > 1
        else "one seed (no band)"
    )
    rates = {name: total / g["episodes"] for name, total in g.get("baselines", {}).items()}
    return Figure(
        section["name"],
        "regret",
        f"Cumulative regret: {band}; inset: the means on log-log axes. At {listed}, for the same target"
        + (
            "; grey: the policies that ignore their data (exact; one far above the curves is left out)."
            if rates
            else "."
        ),
        lambda p: figures.regret_figure(
            curves,
            p,
            episodes=g["checkpoints"],
            level=level,
            title=f"{section['name']}: regret, K = {g['episodes']}",
            baselines=rates,
        ),
    )


def _file_epsilon_delta(section: Mapping[str, Any]) -> Figure:
    c = section["epsilon_curves"]
    curves = {c["labels"][key]: values for key, values in c["methods"].items()}
    claim = section["epsilon"]
    return Figure(
        section["name"],
        "epsilon-delta",
        f"ε(δ) of the {section['kind']} {section['file']} under every accounting method "
        f"({section['relation'].replace('_', '-')}). Refused or zero values are not drawn"
        + ("; the star is the claim." if claim is not None else "."),
        lambda p: figures.epsilon_delta_figure(
            c["deltas"],
            curves,
            p,
            title=f"{section['name']}: ε(δ) of the {section['kind']}",
            target=None if claim is None else (section["delta"], claim),
        ),
    )


def figure_list(data: Mapping[str, Any]) -> list[Figure]:
    """Every figure of a computed report, in the order the report shows them (none is drawn).

    Each section gets its ε(δ) figure, the binary-tree and RLSVI figures where it has them, its audit's figures (the
    e-values of a sequential audit, else its trade-off and ROC) and its regret; each ledger or event file its ε(δ).
    Each file is named after its section's id (:func:`~dpkit.reports.verdict_views.anchors`), so no two figures share
    a file.

    Args:
        data: The computed report (:func:`dpkit.reports.job.compute_report`).

    Returns:
        The figures, each with its file, caption and the function that draws it.
    """
    out: list[Figure] = []
    for section in data["algorithms"]:
        out.append(_epsilon_delta(section))
        if section["tree"] is not None:
            out.append(_tree(section))
        if section["rlsvi"] is not None:
            out.append(_rlsvi(section))
        if section["audit"]["available"]:
            sequential = section["audit"]["result"].get("sequential") is True
            out += [_evalue(section)] if sequential else [_tradeoff(section), _roc(section)]
        out.append(_regret(section))
    out += [_file_epsilon_delta(section) for section in data["ledgers"]]
    ids = _ids(data)
    out = [dataclasses.replace(fig, stem=ids[fig.algorithm]) for fig in out]
    files = [fig.file for fig in out]
    if len(set(files)) != len(files):  # pragma: no cover - anchors are unique and no kind ends another
        raise AssertionError(f"two figures share a file: {sorted(f for f in files if files.count(f) > 1)[0]}")
    return out


def draw_figures(
    data: Mapping[str, Any], directory: Path, progress: Callable[[int], None] | None = None
) -> list[Figure]:
    """Draw every figure of ``data`` into ``directory`` (``figures/…png`` below it).

    Args:
        data: The computed report (:func:`dpkit.reports.job.compute_report`).
        directory: The folder the ``figures`` folder is made in.
        progress: Called with 1 as each figure is drawn, or None.

    Returns:
        The figures drawn.
    """
    figs = figure_list(data)
    (directory / FIGURE_DIR).mkdir(parents=True, exist_ok=True)
    for fig in figs:
        fig.draw(directory / fig.file)
        if progress is not None:
            progress(1)
    return figs


# -- text ---------------------------------------------------------------------------------------------------

#: A number for people: ``digits`` significant digits; '—' for a missing value (the results' verdict tables' too).
_num = readable_number


def _command(args: Sequence[str]) -> str:
    return shlex.join(["dpkit", *args, "--json"])


def _md_cell(value: Any) -> str:
    return str(value)  # pipes and line breaks are escaped for every value by markdown_escape


#: The keys of an RL audit's setting its "own setting" line leaves out: the section says them elsewhere (the
#: observer, the position, σ, the relation, the users per run).
_SETTING_SAID = frozenset({"algorithm", "observer", "position", "sigma", "relation", "episodes"})


def audit_setting(setting: Mapping[str, Any], *, lq: bool) -> list[tuple[str, Any]]:
    """The (key, value) pairs of an RL audit's setting that its report line shows, in the setting's order.

    Left out: what the section says elsewhere, the sizes of the other kind of world (S and A of a tabular MDP for
    an LQ system, n and d of an LQ system for a tabular MDP), and every empty value — the audit's own MDP
    (``env = ""``), the registered agent (``implementation = None``), no options — so no field is printed blank.

    Args:
        setting: An RL audit's setting as report.json holds it (``RlSetting.to_dict``).
        lq: Whether the algorithm runs on an LQ system.

    Returns:
        The pairs to print as ``key = value``.

    Examples:
        >>> audit_setting({"epsilon": 1.0, "states": 2, "state_dim": 2, "env": "", "implementation": None}, lq=False)
        [('epsilon', 1.0), ('states', 2)]
    """
    other = {"states", "actions"} if lq else {"state_dim", "control_dim"}
    return [
        (key, value)
        for key, value in setting.items()
        if key not in _SETTING_SAID and key not in other and not (value is None or value == "" or value == {})
    ]


def _environment(html: bool) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("dpkit.reports", "templates"),
        autoescape=html,
        finalize=html_finalize if html else markdown_escape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    math = math_html if html else math_markdown

    def one(value: Any, digits: int) -> str:
        if isinstance(value, (list, tuple)):  # one σ per step
            return "(" + ", ".join(_num(v, digits) for v in value) + ")"
        return _num(value, digits)

    def sigma(value: Any, digits: int = 4) -> Any:
        if not isinstance(value, Mapping):
            return one(value, digits)
        parts = [math(k) + ": " + one(v, digits) for k, v in value.items()]
        return markupsafe.Markup(", ").join(parts) if html else ", ".join(parts)

    env.filters.update(
        num=_num,
        bound=interval_end,
        sigma=sigma,
        relation=relation_label,
        command=_command,
        cell=_md_cell,
        math=math,
        math_text=math_markdown,
        symbol=symbol,
        audit_setting=audit_setting,
    )
    return env


def _ids(data: Mapping[str, Any]) -> dict[str, str]:
    """The HTML id (and figure file stem) of every algorithm and ledger entry of a report (names are unique)."""
    return anchors([s["name"] for s in data["algorithms"]] + [s["name"] for s in data["ledgers"]])


def _context(data: Mapping[str, Any], figs: Sequence[Figure]) -> dict[str, Any]:
    by_algorithm: dict[str, dict[str, Figure]] = {}
    for fig in figs:
        by_algorithm.setdefault(fig.algorithm, {})[fig.kind] = fig
    ids = _ids(data)
    files = [ledger_view(s) | {"name": s["name"], "id": ids[s["name"]]} for s in data["ledgers"]]
    verdicts = [verdict_view(row) | {"name": row["algorithm"], "id": ids[row["algorithm"]]} for row in data["summary"]]
    glance = [
        glance_view(row, section) | {"name": row["algorithm"], "id": ids[row["algorithm"]]}
        for row, section in zip(data["summary"], data["algorithms"])
    ]
    sequential = {
        s["name"]: sequential_view(s["audit"]["result"])
        for s in data["algorithms"]
        if s["audit"]["available"] and s["audit"]["result"].get("sequential") is True
    }
    headline = {s["name"]: headline_view(s["audit"]["result"]) for s in data["algorithms"] if s["audit"]["available"]}
    return {
        "data": data,
        "figures": by_algorithm,
        "ids": ids,
        "verdicts": verdicts,
        "glance": glance,
        "files": files,
        "sequential": sequential,
        "headline": headline,
    }


def render_markdown(data: Mapping[str, Any], figs: Sequence[Figure]) -> str:
    """``report.md``: figures linked as ``figures/…png``.

    Args:
        data: The computed report (:func:`dpkit.reports.job.compute_report`).
        figs: The figures drawn.

    Returns:
        The Markdown text.
    """
    return _environment(html=False).get_template("report.md.j2").render(**_context(data, figs))


def render_html(data: Mapping[str, Any], figs: Sequence[Figure], directory: Path) -> str:
    """``report.html``: self-contained, each figure embedded as a PNG data URI.

    Args:
        data: The computed report (:func:`dpkit.reports.job.compute_report`).
        figs: The figures drawn.
        directory: The folder they were drawn in.

    Returns:
        The HTML text.
    """
    images = {
        fig.file: "data:image/png;base64," + base64.b64encode((directory / fig.file).read_bytes()).decode("ascii")
        for fig in figs
    }
    return _environment(html=True).get_template("report.html.j2").render(images=images, **_context(data, figs))


def report_json(data: Mapping[str, Any]) -> str:
    """``report.json``: every number, strict JSON (no NaN), the same bytes for the same data.

    Args:
        data: The computed report (:func:`dpkit.reports.job.compute_report`).

    Returns:
        The JSON text.
    """
    return dumps(data, indent=1) + "\n"


def _is_report_dir(path: Path) -> bool:
    """Whether ``path`` is empty or holds only what a report writes (so replacing it loses nothing else)."""
    for entry in path.iterdir():
        if entry.name in FILES and entry.is_file() and not entry.is_symlink():
            continue
        if (
            entry.name == FIGURE_DIR
            and entry.is_dir()
            and not entry.is_symlink()
            and all(f.suffix == ".png" and f.is_file() for f in entry.iterdir())
        ):
            continue
        return False
    return True


def check_output_dir(out: str | Path) -> None:
    """Check that a report can be written into ``out`` before anything is computed.

    Args:
        out: The output folder: missing, empty or an earlier report (replaced whole), its parent writable
            (probed with a temporary directory, removed at once).

    Raises:
        ValueError: If ``out`` is not a folder, holds other files, or its parent cannot be written.
    """
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise ValueError(f"--out {str(target)!r} exists and is not a directory")
    if target.is_dir() and not _is_report_dir(target):
        raise ValueError(
            f"--out {str(target)!r} holds files that are not a dpkit report; give a new or empty "
            f"directory (a report replaces its --out whole)"
        )
    base = target.resolve().parent
    while not base.exists():
        base = base.parent
    if not base.is_dir():
        raise ValueError(f"--out {str(target)!r}: cannot write in {str(base)!r} (not a directory)")
    try:
        tempfile.TemporaryDirectory(prefix="dpkit-probe-", dir=base).cleanup()
    except OSError as err:
        raise ValueError(f"--out {str(target)!r}: cannot write in {str(base)!r} ({err.strerror or err})") from None


def _swap_into_place(new: Path, target: Path) -> None:
    """Make the complete report in ``new`` (a sibling of ``target``) be ``target``, by renames only.

    The old report is first renamed aside (``target`` → ``.NAME.old-XXXX``), then ``new`` → ``target``,
    then the old one is removed. A failure between the renames renames the old report back. So at every
    moment ``target`` is the old complete report, absent for the instant between two renames (a kill
    exactly there leaves the old report whole beside it, as ``.NAME.old-XXXX``), or the new one.
    """
    old: Path | None = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.rmdir(old)
        os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        if old is not None:
            os.rename(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_report(data: Mapping[str, Any], out: str | Path, progress: Callable[[int], None] | None = None) -> list[str]:
    """Write a computed report into ``out`` (replaced whole; created if missing) and return its files.

    If anything fails or is interrupted (Ctrl-C), ``out`` keeps the previous complete report (see
    docs/explanation/reports.md, "How a report is written").

    Args:
        data: The computed report (:func:`dpkit.reports.job.compute_report`).
        out: The output folder.
        progress: Called with 1 as each figure is drawn, or None.

    Returns:
        The files written (report.md, report.html, report.json, the figures), relative to ``out``.

    Raises:
        ValueError: If the report cannot be written there.
    """
    target = Path(out)
    check_output_dir(target)
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        figs = draw_figures(data, work, progress)
        (work / "report.md").write_text(render_markdown(data, figs), encoding="utf-8")
        (work / "report.html").write_text(render_html(data, figs, work), encoding="utf-8")
        (work / "report.json").write_text(report_json(data), encoding="utf-8")
        files = list(FILES) + [fig.file for fig in figs]
        work.chmod(0o777 & ~_umask())
        try:
            _swap_into_place(work, target)
        except OSError as err:
            raise ValueError(f"--out {str(out)!r}: cannot write the report ({err.strerror or err})") from None
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return files


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
