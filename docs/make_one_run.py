"""Write docs/one_run.md: one-run audits beside many-run audits at equal time (``python docs/make_one_run.py``,
``make docs``).

For each audited algorithm that can be audited in one run (a local-DP agent of the messages protocol, or an
algorithm with a ``one_run`` hook: the joint-DP billboards), the many-run audit of docs/audits.md (4,000 runs per
dataset, in process) is timed, then one run is given as many canary users as fit in the same time (measured on a
first one-run of 1,000 canaries) and audited by :func:`dpkit.audits.rl.one_run.audit_one_run`. A user's agent
(examples/ldp_agent.py) is shown correct and without its clipping; a release function
(:func:`dpkit.audits.one_run.audit_one_run_target`) at its claim's σ and at half of it, over seeds.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.algorithms import registry
from dpkit.audits.rl import audit_setting, audited_algorithms, default_setting, register_agent, setting_claim_sigmas
from dpkit.audits.rl.one_run import audit_one_run
from dpkit.loading import load_object

RUNS = 4000
SEED = 1
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "one_run.md"


def _g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def _one_run_row(label: str, algorithm: str, seconds: float, many: object, **kw: object) -> str:
    probe = audit_one_run(algorithm, canaries=1000, seed=SEED, **kw)  # type: ignore[arg-type]
    canaries = max(1000, int(1000 * seconds / max(probe.scores.seconds, 1e-3)))
    started = time.perf_counter()
    one = audit_one_run(algorithm, canaries=canaries, seed=SEED, **kw)  # type: ignore[arg-type]
    took = time.perf_counter() - started
    m: Any = many  # an RlAuditResult
    reach = "—" if one.judged.reach is None else _g(one.judged.reach)
    return (
        f"| {algorithm} | {label} | {_g(one.claimed_epsilon)} / {_g(one.claimed_mu)} | {_g(m.epsilon_lower)} "
        f"(**{m.verdict}**) | {seconds:.1f} s | {one.scores.observer} | {canaries} | {one.guesses} / {one.correct} | "
        f"{_g(one.mu_lower)} / {_g(one.epsilon_lower)} | {reach} | {_g(one.power)} | **{one.verdict}** | {took:.1f} s |"
    )


def _target_section(seeds: int = 100, canaries: int = 1000) -> list[str]:
    """One-run audits of a Gaussian sum in R^M (the canaries the standard basis) at the σ of its (ε, 10⁻⁵) claim
    and at half of it, over seeds."""
    import functools
    import sys

    import numpy as np

    from dpkit.accountant import calibrate_sigma
    from dpkit.audits.claims import Claim
    from dpkit.audits.one_run import audit_one_run_target

    sys.path.insert(0, str(ROOT / "bench"))
    from one_run_target import gaussian_sum  # type: ignore[import-not-found]

    lines = [
        "",
        "## A release function (`dpkit audit --target … --one-run`, bench/one_run_target.py)",
        "",
        f"Σ of the records (clipped to the unit ball) + N(0, σ²I) in R^{canaries}, {canaries} canary records (the "
        "standard basis: they do not interfere), each in the dataset with probability ½, one run per seed; the "
        "claim is the Gaussian mechanism at σ(ε, 10⁻⁵), i.e. its μ-GDP curve. Rates over seeds 0 … "
        f"{seeds - 1} with 95% Clopper–Pearson intervals.",
        "",
        "| claim ε | μ | violations at σ (false alarms) | violations at σ/2 | median μ / ε lower at σ/2 | guesses |",
        "|---|---|---|---|---|---|",
    ]
    from scipy import stats

    def rate(k: int) -> str:
        ci = stats.binomtest(k, seeds).proportion_ci(0.95, method="exact")
        return f"{k}/{seeds} [{ci.low:.3f}, {ci.high:.3f}]"

    records = list(np.eye(canaries))
    for eps in (1.0, 2.0, 4.0, 8.0):
        sigma = calibrate_sigma(eps, 1e-5).sigma
        claim = Claim.gaussian(sigma, 1.0)
        found = {}
        for factor in (1.0, 0.5):
            release = functools.partial(gaussian_sum, dim=canaries, sigma=factor * sigma)
            found[factor] = [audit_one_run_target(release, canaries=records, claim=claim, seed=s) for s in range(seeds)]
        half = found[0.5]
        lines.append(
            f"| {_g(eps)} | {_g(float(claim.mu))} | {rate(sum(r.verdict == 'violation' for r in found[1.0]))} | "
            f"{rate(sum(r.verdict == 'violation' for r in half))} | "
            f"{_g(float(np.median([r.mu_lower for r in half])))} / "
            f"{_g(float(np.median([r.epsilon_lower for r in half])))} | "
            f"{half[0].guesses} |"
        )
    lines += [
        "",
        "At ε = 1 a thousand canaries cannot refute half the σ (the audit says `inconclusive` at the claim's σ); at "
        "ε = 2 … 8 they do in one run, where the (ε, δ) theorem at the claim's one point (ε, 10⁻⁵) rarely does "
        "(bench/one_run_target.py prints both).",
    ]
    return lines


def _steinke_section() -> list[str]:
    """The published worked example our Steinke et al. bound reproduces (tests/audits/test_steinke_figure.py)."""
    from dpkit.audits.one_run_estimators import one_run_epsilon_lower, one_run_p_value

    a = one_run_epsilon_lower(canaries=100, guesses=100, correct=75, delta=0.0)
    b = one_run_epsilon_lower(canaries=100, guesses=100, correct=75, delta=1e-4)
    c = one_run_epsilon_lower(canaries=1000, guesses=100, correct=75, delta=1e-4)
    p = one_run_p_value(canaries=100, guesses=100, correct=75, epsilon=float(np.log(3.0)), delta=0.0)
    return [
        "",
        "## Reproducing Steinke et al.",
        "",
        "The worked example of Appendix D of Steinke, Nasr & Jagielski (arXiv:2305.08846v1): 75 right guesses of 100, "
        "confidence 95%. Published: m = 100, δ = 0: ε ≥ 0.702; δ = 10⁻⁴: ε ≥ 0.699; m = 1000 (900 abstentions), "
        f"δ = 10⁻⁴: ε ≥ 0.673; the p-value of ε = log 3 at m = r = 100: ≈ 0.553. Ours: {a:.5f}, {b:.5f}, {c:.5f} "
        f"and {p:.5f} — within the 10⁻³ the paper prints (tests/audits/test_steinke_figure.py). The three bounds "
        "differ by more than that precision, so the match checks the binomial tail, the δ term and its 2mδ growth "
        "with abstentions. (The figures were taken from public reimplementations that cite the appendix; the "
        "appendix itself could not be opened offline.)",
    ]


def main() -> None:
    lines = [
        "# One-run audits beside many-run audits, at equal time",
        "",
        "Generated by `python docs/make_one_run.py` (`make docs`); do not edit by hand. Many-run: "
        f"{RUNS} runs per dataset of the whole algorithm (seed {SEED}, in process), the white-box test against the "
        "declaration (as in docs/audits.md). One-run (Steinke, Nasr & Jagielski 2023): one run whose users are all "
        "canaries with fair coins — each scored from what the observer sees (a local-DP user by the exact "
        "log-likelihood ratio of her messages; a joint-DP user from the p-sums of the billboard that hold her, the "
        "other users' coins as noise) — guesses for the highest and lowest scores, judged at confidence 95% against "
        "the claim's whole trade-off curve (the declaration at σ_tight, μ-GDP per user: the f-DP analysis of "
        "docs/FORMULAS.md §8), as many canaries as the many-run audit's time allows. Claims at the algorithm's "
        "target ε and δ = 10⁻⁵. Reach: the μ per user the one-run scores can show at the claim (from the "
        "declaration; — where each user is seen alone); power: the μ the audit would certify for a mechanism "
        "exactly at the claim as far as the scores see it (below half the claimed μ: `inconclusive`).",
        "",
        "| algorithm | σ | claimed ε / μ | many-run ε lower (verdict) | many-run time | observer | canaries | "
        "guesses / correct | one-run μ / ε lower | reach | power | one-run verdict | one-run time |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    not_local = []
    for algorithm in audited_algorithms():
        base = default_setting(algorithm)
        try:
            audit_one_run(algorithm, canaries=2, seed=SEED)  # a local-DP agent of the messages protocol?
        except TypeError:
            not_local.append(algorithm)
            continue
        for label, setting in (
            ("tight", base),
            ("0.7 × tight", replace(base, sigma={k: 0.7 * v for k, v in setting_claim_sigmas(base).items()})),
        ):
            started = time.perf_counter()
            many = audit_setting(setting, runs=RUNS, seed=SEED)
            seconds = time.perf_counter() - started
            sigma = setting.sigma if isinstance(setting.sigma, str) else dict(setting.sigma)
            lines.append(_one_run_row(label, algorithm, seconds, many, sigma=sigma))
    lines += [
        "",
        "A local-DP user's messages carry only her own data, so one run holds as many independent tests as it has "
        "users, each seen alone; but the many-run audit simulates its runs in batches, so at equal time one run "
        "holds only about a thousand canaries, and its guesses saturate: at 0.7 × σ_tight nearly every guess is "
        "right, more than in any run of the claim's ideal mechanism, yet too few guesses to certify it — the "
        "one-run verdict is `inconclusive` (never `consistent`) where the many-run audit certifies the violation. "
        "A joint-DP billboard mixes every user into most of its p-sums; scored with the other users' coins as noise, "
        "a user shows at most the reach, well below the claim at these sizes, so the one-run audit of a joint-DP "
        "algorithm says `inconclusive` where the many-run audit — which changes one user and holds the others fixed — "
        "certifies most of the pair's μ. RLSVI's released Q-values show each user alone (her own reward is the "
        "difference of two consecutive plans' residuals at her cells, the others' rewards cancel), but among "
        "thousands of users her cells are visited by many, and the declaration allows every one of her K − 1 later "
        "releases its worst case n = 1: a user is seen at about the claim's μ/√K (the reach), so its one-run audit "
        "is `inconclusive` and its many-run audit at K = 2 is the one that reaches the worst case."
        + (" Not audited in one run: " + ", ".join(not_local) + "." if not_local else ""),
        "",
        "## A user's agent (examples/ldp_agent.py, `dpkit audit --agent … --one-run`)",
        "",
        "| agent | claimed (ε, δ) | canaries | guesses / correct | one-run μ / ε lower | verdict |",
        "|---|---|---|---|---|---|",
    ]
    example = ROOT / "examples" / "ldp_agent.py"
    for attr in ("make_agent", "make_agent_without_clipping"):
        name = register_agent(load_object("--agent", f"{example}:{attr}"))
        one = audit_one_run(name, canaries=5000, seed=SEED, epsilon=1.0, delta=1e-5)
        lines.append(
            f"| {attr} | (1, 10⁻⁵) | 5000 | {one.guesses} / {one.correct} | {_g(one.mu_lower)} / "
            f"{_g(one.epsilon_lower)} | **{one.verdict}** |"
        )
        registry.unregister(name)
    lines += _target_section() + _steinke_section()
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
    _into_audits(lines[: lines.index("## A user's agent (examples/ldp_agent.py, `dpkit audit --agent … --one-run`)")])


#: docs/audits.md holds the comparison table between these markers (the rest of it is docs/make_audits.py's).
BEGIN, END = "<!-- one-run: begin (docs/make_one_run.py) -->", "<!-- one-run: end -->"


def _into_audits(lines: list[str]) -> None:
    """The one-run table beside the many-run audits, in docs/audits.md between :data:`BEGIN` and :data:`END`
    (appended if they are missing); docs/make_audits.py keeps the markers' block when it rewrites the page."""
    page = ROOT / "docs" / "audits.md"
    text = page.read_text(encoding="utf-8")
    body = ["## One-run audits beside many-run audits, at equal time", ""] + lines[2:]
    block = "\n".join([BEGIN, *body, END])
    if BEGIN in text and END in text:
        text = text[: text.index(BEGIN)] + block + text[text.index(END) + len(END) :]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    page.write_text(text, encoding="utf-8")
    print(f"wrote the one-run table into {page}")


if __name__ == "__main__":
    main()
