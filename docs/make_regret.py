"""Write docs/regret.md and docs/regret_*.png: regret curves over seeds, with bands, baselines and slopes.

    python docs/make_regret.py [--quick] [--out DIR] [--sigmas paper tight optimal] [--workers W] [--only PART ...]
    python docs/make_regret.py --render        # re-render the page from docs/regret_data/*.json, running nothing
    python docs/make_regret.py --tune          # seed 000's grid search: writes docs/regret_tuning.json

Every private algorithm runs at each σ of ``--sigmas`` (default :data:`SIGMAS`) beside its non-private
baseline and the uniformly random policy (its exact expected regret per episode, a straight line), on the
same axes. Each curve is the mean over seeds with its 95% Student-t band; its growth is the least-squares
slope of log R̄(k) against log k over the last decade of episodes (k from K/10 to K) with a 95% bootstrap
interval over seeds (:mod:`dpkit.algorithms.regret_stats`). A curve is called sublinear only where that
interval lies at or below 0.95, near-linear where it lies below 1 but reaches above 0.95.

Parts: ``seed000`` (seed 000's Figure 2 setting: RiverSwim and inhomogeneous RiverSwim, ε ∈ {0.5, 1, 2, 5, 10},
δ = 0.1), ``linopt`` (Private-LinOpt-VI/-PO on RiverSwim), ``lq`` (Private-OFU-RL on a random LQ system),
``rlsvi`` (RLSVI, whose σ is its exploration noise). Each part's rows (summaries and the curves thinned for the
figures) are stored in ``regret_data/<part>.json``, so ``--only PART`` re-runs one part and re-renders the page
from the others' stored rows; a part with no stored rows keeps its section of the existing page. Seed 000's bonus
constants c come from ``regret_tuning.json`` (``--tune``: a grid search on seeds disjoint from the reported ones).
The runs of a part go to one executor: a process pool of ``--workers`` (every core by default), or Dask
(``--executor dask [--scheduler ADDRESS]``). ``--quick`` is a smoke run (small K, 3 seeds, in process) for the tests;
its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.accountant.rlsvi import rlsvi_paper_epsilon
from dpkit.accountant.tree import symmetric_noise_norm_bound
from dpkit.algorithms.envs.lq import LQ_WORLDS, make_lq_world
from dpkit.algorithms.envs.tabular import make_tabular
from dpkit.algorithms.executors import Executor, make_executor
from dpkit.algorithms.ldp_ucrl_vtr import GRAM
from dpkit.algorithms.regret_stats import (
    SlopeInterval,
    mean_band,
    slope_interval,
    uniform_lq_regret,
    uniform_tabular_regret,
    verdict,
)
from dpkit.algorithms.simulation import Experiment, simulate_seeds
from dpkit.algorithms.ucrl_vtr import Bonus
from dpkit.experiments import SeedChunk, run_seed_chunk, seed_chunks

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the page's rendering, beside this script
from regret_page import (  # noqa: E402
    BOOTSTRAP_SEED,
    LEVEL,
    PARTS,
    RESAMPLES,
    TABLE_COLUMNS,  # noqa: F401 - the page's columns, read by tests/test_regret_doc.py through this script
    Row,
    Section,
    figure,
    legacy_sections,
    load_stored,
    outward,
    render,
    section_order,
)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs"
#: The σ choices every private algorithm runs at, in column order.
SIGMAS: tuple[str, ...] = ("paper", "tight", "optimal")
#: Seed 000's Figure 2 privacy levels.
EPSILONS: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0, 10.0)
DELTA = 0.1
STATES = 2  # the other parts' RiverSwim: S = 2, H = 2S = 4, d = S²A = 8
#: Seed 000's environments, and per S the σ choices and ε its part runs: the whole grid at S = 2, 3 and 4; at the
#: larger S (S = 5: 1.8 times S = 4's CPU per curve, S = 6: 2.2 times S = 5's) the tight σ at the ε of the grid
#: search, 2 and 10 (compute on the 2-core machine is the limit). The default ``--states`` run S = 2 to 5.
SEED000_ENVS: tuple[str, ...] = ("riverswim", "riverswim-inhomogeneous")
SEED000_PLAN: dict[int, tuple[tuple[str, ...], tuple[float, ...]]] = {
    2: (("paper", "tight"), (0.5, 1.0, 2.0, 5.0, 10.0)),
    3: (("paper", "tight"), (0.5, 1.0, 2.0, 5.0, 10.0)),
    4: (("paper", "tight"), (0.5, 1.0, 2.0, 5.0, 10.0)),
    5: (("tight",), (2.0, 10.0)),
    6: (("tight",), (2.0, 10.0)),
}
#: The grid search of seed 000's c (``--tune``): its seeds (the reported curves use seeds 0..N−1), K, σ and ε,
#: scored by the mean over seeds of R(K) summed over the ε.
TUNING_SEEDS: tuple[int, ...] = (100, 101, 102)
TUNING_EPISODES = 10_000
TUNING_SIGMA = "tight"
TUNING_EPSILONS: tuple[float, ...] = (2.0, 10.0)
#: (bonus form, c) tried per method: LDP-UCRL-VTR's seed form β = c·d^{3/4}(H − h + 1)^{3/2}k^{1/4}; UCRL-VTR's
#: seed form (:func:`dpkit.algorithms.ucrl_vtr.paper_radius`) and our self-normalised radius.
TUNING_GRID: dict[str, tuple[tuple[Bonus, float], ...]] = {
    "ldp-ucrl-vtr": tuple(
        (Bonus.PAPER, c)
        for c in (0.0003, 0.001, 0.003, 0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0)
    ),
    "ucrl-vtr": ((Bonus.PAPER, 0.01),) + tuple((Bonus.CONFIDENCE, c) for c in (0.01, 0.03, 0.1, 0.2, 0.3, 1.0)),
}
TUNING_FILE = Path(__file__).resolve().parent / "regret_tuning.json"
#: Points of each curve kept in ``regret_data/<part>.json`` (for the figures): evenly and log-spaced.
THIN_LINEAR, THIN_LOG = 200, 120
#: LinOpt and OFU-RL with our tuned constants (their defaults are the papers' λ and bonus scale).
LEARNING = (("preset", "learning"),)


@dataclass(frozen=True)
class Budget:
    """Episodes (tabular and LQ), seeds per curve, worker processes (None: every core) and seed 000's S."""

    episodes: int
    lq_episodes: int
    seeds: int
    workers: int | None
    states: tuple[int, ...] = (2, 3, 4, 5)
    executor: str = "processes"
    scheduler: str | None = None


FULL = Budget(episodes=10_000, lq_episodes=6_000, seeds=10, workers=None)
QUICK = Budget(episodes=200, lq_episodes=40, seeds=3, workers=1, states=(4,), executor="in-process")


@dataclass
class Curve:
    """One row of a table and one line of a figure: cumulative regret (seeds, K), or an exact per-episode
    regret (``exact``) for the uniformly random policy."""

    label: str
    epsilon: float | None = None
    sigma: str = ""
    cumulative: np.ndarray | None = None
    exact: float | None = None
    sigmas_used: dict[str, Any] = field(default_factory=dict)
    kind: str = "private"  # "private", "baseline" or "uniform"

    def curves(self, episodes: int) -> np.ndarray:
        if self.cumulative is not None:
            return self.cumulative
        assert self.exact is not None
        return self.exact * np.arange(1, episodes + 1, dtype=float)[None, :]


@dataclass
class Part:
    """One section of regret.md: its curves (in panels), its setting and its notes."""

    key: str
    title: str
    setting: str
    episodes: int
    seeds: int
    panels: dict[str, list[Curve]]
    notes: list[str] = field(default_factory=list)


def environment(e: Experiment) -> Any:
    """The environment :func:`dpkit.algorithms.simulation.simulate` builds for ``e`` (drawn from its env_seed)."""
    if e.env in LQ_WORLDS:
        return make_lq_world(e.env, e.state_dim, e.control_dim, e.horizon or 10, np.random.default_rng(e.env_seed))
    return make_tabular(e.env, e.states, np.random.default_rng(e.env_seed), actions=e.actions, horizon=e.horizon)


def uniform_curve(e: Experiment) -> Curve:
    """The uniformly random policy's exact regret in ``e``'s environment (for LQ: uniform in the γ-ball)."""
    env = environment(e)
    if e.env in LQ_WORLDS:
        return Curve("uniform control in the γ-ball", exact=uniform_lq_regret(env), kind="uniform")
    return Curve("uniform random policy", exact=uniform_tabular_regret(env), kind="uniform")


def supported_sigmas(sigmas: Sequence[str]) -> list[str]:
    """The σ choices of ``sigmas`` that :class:`Experiment` accepts today."""
    ok = []
    for s in sigmas:
        try:
            Experiment("ldp-ucrl-vtr", "riverswim", 2, states=2, epsilon=1.0, delta=DELTA, sigma=s)
        except ValueError:
            continue
        ok.append(s)
    return ok


@dataclass(frozen=True)
class Spec:
    """One curve to run: its label, experiment, kind and the note logged beside it."""

    label: str
    experiment: Experiment
    kind: str = "private"
    note: str = ""


class Runner:
    """Runs experiments over seeds on one executor, counting the episodes simulated.

    The seeds of every curve of a batch (:meth:`curves`) go to the executor together, in chunks of consecutive
    seeds (two per worker and curve), so the workers stay busy across curves.
    """

    def __init__(self, budget: Budget, log: Callable[[str], None], executor: Executor) -> None:
        self.budget = budget
        self.log = log
        self.executor = executor
        self.episodes = 0

    def runs(self, experiments: Sequence[Experiment], seeds: Sequence[int]) -> list[list[Any]]:
        """The runs of each experiment over ``seeds``, in seed order."""
        per = max(1, -(-self.executor.workers // max(1, len(experiments))))  # chunks per experiment
        tasks = [(i, SeedChunk(e, c)) for i, e in enumerate(experiments) for c in seed_chunks(tuple(seeds), per)]
        results = self.executor.map(run_seed_chunk, [chunk for _, chunk in tasks])
        out: list[list[Any]] = [[] for _ in experiments]
        for (i, _), runs in zip(tasks, results, strict=True):
            out[i].extend(runs)
        self.episodes += sum(e.episodes for e in experiments) * len(seeds)
        return out

    def curves(self, specs: Sequence[Spec]) -> list[Curve]:
        """The curves of ``specs``, run together over seeds 0..N−1."""
        started = time.perf_counter()
        all_runs = self.runs([s.experiment for s in specs], range(self.budget.seeds))
        seconds = time.perf_counter() - started
        out = []
        for s, runs in zip(specs, all_runs, strict=True):
            cum = np.stack([r.cumulative_regret for r in runs])
            self.log(f"  {f'{s.label} {s.note}'.strip():<44} R(K) = {cum[:, -1].mean():10.2f}")
            e = s.experiment
            sigma = e.sigma if e.private else ""
            out.append(
                Curve(s.label, e.epsilon if e.private else None, str(sigma), cum, None, dict(runs[0].sigmas), s.kind)
            )
        self.log(f"  ({len(specs)} curves, {seconds:.0f} s)")
        return out

    def curve(self, label: str, e: Experiment, *, kind: str = "private", note: str = "") -> Curve:
        return self.curves([Spec(label, e, kind, note)])[0]


# ---------------------------------------------------------------------------------------------- parts


def load_tuning(path: Path = TUNING_FILE) -> dict[str, Any]:
    """The grid search's choices (``--tune``), as written by :func:`tune`."""
    if not path.is_file():
        raise SystemExit(f"error: {path} is missing: run `python docs/make_regret.py --tune` first")
    return json.loads(path.read_text(encoding="utf-8"))


def chosen(tuning: dict[str, Any], env: str, states: int, method: str) -> tuple[Bonus, float]:
    """The (bonus form, c) the grid search chose for ``method`` on ``env`` at S = ``states``."""
    for choice in tuning["choices"]:
        if (choice["env"], choice["states"], choice["method"]) == (env, states, method):
            if choice["bonus"] not in set(Bonus):
                raise SystemExit(f"error: {TUNING_FILE.name}: bonus {choice['bonus']!r} is none of {', '.join(Bonus)}")
            return Bonus(choice["bonus"]), float(choice["c"])
    raise SystemExit(f"error: {TUNING_FILE.name} has no c for {method} on {env} at S = {states}: run --tune")


def _bonus(form: Bonus, c: float) -> tuple[tuple[str, Any], ...]:
    return (("bonus", form), ("bonus_scale", c))


def part_seed000(run: Runner, sigmas: Sequence[str]) -> list[Part]:
    """Seed 000's Figure 2: per S and environment, UCRL-VTR and LDP-UCRL-VTR at the planned σ and ε, tuned c."""
    k, n = run.budget.episodes, run.budget.seeds
    tuning = load_tuning()
    parts = []
    for states in run.budget.states:
        plan_sigmas, epsilons = SEED000_PLAN[states]
        plan_sigmas = tuple(s for s in plan_sigmas if s in sigmas)
        for env in SEED000_ENVS:
            base_form, base_c = chosen(tuning, env, states, "ucrl-vtr")
            form, c = chosen(tuning, env, states, "ldp-ucrl-vtr")
            base_e = Experiment("ucrl-vtr", env, k, states=states, options=_bonus(base_form, base_c))
            specs = [Spec("UCRL-VTR", base_e, "baseline")]
            for sigma in plan_sigmas:
                for eps in epsilons:
                    e = Experiment(
                        "ldp-ucrl-vtr",
                        env,
                        k,
                        states=states,
                        epsilon=eps,
                        delta=DELTA,
                        sigma=sigma,
                        options=_bonus(form, c),
                    )
                    specs.append(Spec(f"LDP-UCRL-VTR ε = {eps:g}", e, note=f"σ {sigma}, S = {states}"))
            curves = run.curves(specs)
            base, uniform = curves[0], uniform_curve(base_e)
            panels = {
                f"σ {sigma}": [base] + [cv for cv in curves[1:] if cv.sigma == sigma] + [uniform]
                for sigma in plan_sigmas
            }
            d = states**2 * 2
            parts.append(
                Part(
                    f"seed000_{env}" if states == 4 else f"seed000_{env}_s{states}",
                    f"Seed 000's Figure 2: LDP-UCRL-VTR on {env}, S = {states}",
                    f"{env}, S = {states}, A = 2, H = {2 * states}, d = S²A = {d}, K = {k}, {n} seeds (0..{n - 1}), "
                    f"δ = {DELTA:g}, α = 0.01, ε ∈ {{{', '.join(f'{x:g}' for x in epsilons)}}}, environment seed 0; "
                    f"LDP-UCRL-VTR with the seed's bonus β = c·d^{{3/4}}(H − h + 1)^{{3/2}}k^{{1/4}}, c = {c:g}, "
                    f"shift r = 2Υ; UCRL-VTR with the {base_form} bonus, c = {base_c:g} (c from the grid search, "
                    f"seeds {', '.join(map(str, tuning['seeds']))})",
                    k,
                    n,
                    panels,
                )
            )
    return parts


def part_linopt(run: Runner, sigmas: Sequence[str]) -> list[Part]:
    k, n = run.budget.episodes, run.budget.seeds
    panels = {}
    for variant in ("vi", "po"):
        base_e = Experiment(f"linopt-{variant}", "riverswim", k, states=STATES, options=LEARNING)
        curves = [run.curve(f"LinOpt-{variant.upper()}", base_e, kind="baseline")]
        for sigma in sigmas:
            e = Experiment(
                f"private-linopt-{variant}",
                "riverswim",
                k,
                states=STATES,
                epsilon=1.0,
                delta=DELTA,
                sigma=sigma,
                options=LEARNING,
            )
            curves.append(run.curve(f"Private-LinOpt-{variant.upper()} σ {sigma}", e))
        panels[f"LinOpt-{variant.upper()}"] = curves + [uniform_curve(base_e)]
    setting = (
        f"riverswim, S = {STATES}, H = {2 * STATES}, K = {k}, {n} seeds, ε = 1, δ = {DELTA:g}, "
        'preset="learning" (our constants, the report\'s: the tuned λ and bonus scale, and η = 1 for PO; at the '
        "paper's constants VI's Q-values sit at their caps and PO stays at the uniform policy: "
        "docs/explanation/seed-algorithms.md)"
    )
    return [Part("linopt", "Private-LinOpt-VI/-PO on RiverSwim", setting, k, n, panels)]


def part_lq(run: Runner, sigmas: Sequence[str]) -> list[Part]:
    k, n = run.budget.lq_episodes, run.budget.seeds
    base_e = Experiment("ofu-rl", "lq-learning", k, horizon=2)  # the paper's constants learn here
    curves = [run.curve("OFU-RL", base_e, kind="baseline")]
    for sigma in sigmas:
        e = Experiment(
            "private-ofu-rl", "lq-learning", k, horizon=2, epsilon=10.0, delta=DELTA, sigma=sigma, options=LEARNING
        )
        curves.append(run.curve(f"Private-OFU-RL σ {sigma}", e))
    system = environment(base_e)
    zero = float(system.regret(np.zeros((system.horizon, system.control_dim, system.state_dim))))
    curves.append(uniform_curve(base_e))
    setting = (
        f"the LQ world lq-learning (‖A‖ = ‖B‖ = 0.7, n = 2, d = 1, H = 2, environment seed 0), K = {k}, {n} seeds, "
        f'ε = 10, δ = {DELTA:g}, preset="learning" for the private agent (the confidence radius × 0.1: at the '
        "paper's radius the private set holds both B and −B and the gains take either sign, R = 1.02 × no control; "
        "at ε = 1 the noise shift is four times the control data: docs/explanation/seed-algorithms.md)"
    )
    notes = [
        "The uniform analogue on an LQ system: a control drawn uniformly from the ball ‖u‖ ≤ γ (the controls the "
        f"algorithms may play), independently at every step: {curves[-1].exact:.4g} per episode, exact. "
        f"The zero control u = 0 costs {zero:.4g} per episode more than the optimum."
    ]
    return [Part("lq", "Private-OFU-RL on an LQ system", setting, k, n, {"OFU-RL": curves}, notes)]


def part_rlsvi(run: Runner, sigmas: Sequence[str]) -> list[Part]:
    k, n = run.budget.episodes, run.budget.seeds
    base_e = Experiment("ucrl-vtr", "riverswim", k, states=STATES)
    curves = [run.curve("UCRL-VTR (non-private reference)", base_e, kind="baseline")]
    for sigma in sigmas:
        e = Experiment("rlsvi", "riverswim", k, states=STATES, delta=DELTA, sigma=sigma)
        curves.append(run.curve(f"RLSVI σ {sigma}", e))
    curves.append(uniform_curve(base_e))
    eps = rlsvi_paper_epsilon(states=STATES, actions=2, horizon=2 * STATES, episodes=k, delta=DELTA)
    setting = (
        f"riverswim, S = {STATES}, H = {2 * STATES}, K = {k}, {n} seeds, δ = {DELTA:g}, ε = {eps:.4g} (the paper's "
        "own ε(δ) for Russo's β; RLSVI adds no noise for privacy)"
    )
    notes = [
        "RLSVI's σ is its exploration noise: σ \"paper\" is Russo's β_k = ½SH³ln(2HSAk); the other σ rescale β "
        "to just meet the (ε, δ) that Russo's β gives by the paper's closed form, so every RLSVI row is at the "
        "same (ε, δ). RLSVI has no non-private version (without noise it does not explore); UCRL-VTR is drawn as "
        "the non-private reference."
    ]
    return [Part("rlsvi", "RLSVI on RiverSwim", setting, k, n, {"RLSVI": curves}, notes)]


PART_FUNCTIONS: dict[str, Callable[[Runner, Sequence[str]], list[Part]]] = {
    "seed000": part_seed000,
    "linopt": part_linopt,
    "lq": part_lq,
    "rlsvi": part_rlsvi,
}


# ---------------------------------------------------------------------------------------------- statistics


def thin(episodes: int) -> np.ndarray:
    """The episode indices (0-based) a stored curve keeps: evenly spaced and log-spaced, the last always."""
    even = np.linspace(0, episodes - 1, min(episodes, THIN_LINEAR))
    logs = np.geomspace(1, episodes, min(episodes, THIN_LOG)) - 1
    return np.unique(np.concatenate([even, logs, [episodes - 1]]).round().astype(int))


def _sig(x: np.ndarray) -> tuple[float, ...]:
    return tuple(float(f"{v:.5g}") for v in x)


def row(curve: Curve, episodes: int) -> Row:
    """The curve's summary: R(K) with its band's half-width, the slope interval and verdict, and the thinned line."""
    idx = thin(episodes)
    k = tuple(int(i) + 1 for i in idx)
    common = (curve.label, curve.epsilon, curve.sigma, curve.kind, _sigmas_used(curve))
    if curve.exact is not None:  # a straight line through the origin: slope exactly 1, no spread
        final = curve.exact * episodes
        line = curve.exact * (idx + 1.0)
        slope = SlopeInterval(1.0, 1.0, 1.0, LEVEL, 0)
        return Row(*common, True, final, 0.0, slope, "linear", k, _sig(line), (0.0,) * len(k))
    c = curve.curves(episodes)
    mean, half = mean_band(c, level=LEVEL)
    interval = outward(slope_interval(c, BOOTSTRAP_SEED, level=LEVEL, resamples=RESAMPLES))
    return Row(
        *common,
        False,
        float(mean[-1]),
        float(half[-1]),
        interval,
        verdict(interval),
        k,
        _sig(mean[idx]),
        _sig(half[idx]),
    )


def section(p: Part) -> Section:
    """The part's rows: every curve summarised and thinned."""
    rows = {panel: [row(c, p.episodes) for c in curves] for panel, curves in p.panels.items()}
    return Section(p.key, p.title, p.setting, p.episodes, p.seeds, tuple(p.notes), rows)


def _sigmas_used(c: Curve) -> str:
    if not c.sigmas_used:
        return "—"
    values = list(dict.fromkeys(_sigma_text(v) for v in c.sigmas_used.values()))
    return " / ".join(values)


def _sigma_text(v: float | tuple[float, ...] | list[float]) -> str:
    """One σ, or one per step (h = 1..H) of an allocation with per-step σ, in brackets."""
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(f"{x:.3g}" for x in v) + "]"
    return f"{v:.3g}"


# ---------------------------------------------------------------------------------------------- runs


def shift_lines(sections: Sequence[Section]) -> list[str]:
    """Why LDP-UCRL-VTR learns at one S and not at another: its Gram shift r = 2Υ at k = K against the data.

    Υ is the bound the agent itself uses (:func:`~dpkit.accountant.tree.symmetric_noise_norm_bound` at n = K
    users, failure probability α/(HK)), at the tight σ of ε = 10 and 2; the data are the K/(SA) users a pair (s, a)
    gets at a step on average.
    """
    out = []
    for states in sorted({int(m.group(1)) for s in sections if (m := re.search(r", S = (\d+)$", s.title))}):
        k = max(s.episodes for s in sections if s.title.endswith(f", S = {states}"))
        d, h = states**2 * 2, 2 * states
        shifts = []
        for eps in (10.0, 2.0):
            e = Experiment("ldp-ucrl-vtr", "riverswim", 1, states=states, epsilon=eps, delta=DELTA, sigma="tight")
            sigma = max(np.ravel(simulate_seeds(e, (0,))[0].sigmas[GRAM]))
            shifts.append(2 * symmetric_noise_norm_bound(sigma, psums=k, dim=d, failure_probability=0.01 / (h * k)))
        users = k / (states * 2)
        out.append(
            f"- Why, at S = {states}: by k = K the noisy Gram matrix's shift r = 2Υ is {shifts[0]:,.0f}–"
            f"{shifts[1]:,.0f} (σ tight, ε = 10 to 2), {shifts[0] / users:.1f}–{shifts[1] / users:.1f} times the "
            f"{users:,.0f} users a pair (s, a) gets at a step on average; where r is many times the data, θ̂ stays "
            "shrunk towards 0 and the plan follows the noise (docs/drift.md)."
        )
    return out


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended (the pool's workers, once closed)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _executor(budget: Budget) -> Executor:
    """The executor the budget names: in this process, a process pool, or Dask (local or at a scheduler)."""
    if budget.executor == "dask":
        return make_executor("dask", scheduler=budget.scheduler, workers=None if budget.scheduler else budget.workers)
    if budget.executor == "in-process" or budget.workers == 1:
        return make_executor("in-process")
    return make_executor("processes", workers=budget.workers)


def tune(budget: Budget, log: Callable[[str], None], path: Path = TUNING_FILE) -> dict[str, Any]:
    """Seed 000's grid search (:data:`TUNING_GRID`) on :data:`TUNING_SEEDS`; writes and returns the choices.

    A grid point whose score ``path`` already holds, from a search with the same seeds, K, σ, ε and δ, is not run
    again (the same seeds give the same runs): a grid widened later runs only its new points.
    """
    started, cpu, load = time.perf_counter(), _cpu(), os.getloadavg()[0]
    header = {
        "seeds": list(TUNING_SEEDS),
        "episodes": TUNING_EPISODES,
        "sigma": TUNING_SIGMA,
        "epsilons": list(TUNING_EPSILONS),
        "delta": DELTA,
    }
    old = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    same = old is not None and all(old.get(k) == v for k, v in header.items())
    scores: dict[tuple[Any, ...], float] = {
        (ch["env"], ch["states"], ch["method"], g["bonus"], g["c"]): g["score"]
        for ch in (old["choices"] if old and same else [])
        for g in ch["scores"]
        if ch["states"] in budget.states
    }
    reused = sum(1 for k in scores if k[3:] in TUNING_GRID[k[2]])
    keys, experiments = [], []
    for states in budget.states:
        for env in SEED000_ENVS:
            for method, grid in TUNING_GRID.items():
                for form, c in grid:
                    if (env, states, method, form, c) in scores:
                        continue
                    for eps in TUNING_EPSILONS if method == "ldp-ucrl-vtr" else (None,):
                        private = {"epsilon": eps, "delta": DELTA, "sigma": TUNING_SIGMA} if eps else {}
                        e = Experiment(method, env, TUNING_EPISODES, states=states, options=_bonus(form, c), **private)
                        keys.append((env, states, method, form, c))
                        experiments.append(e)
    with _executor(budget) as ex:
        runs = Runner(budget, log, ex).runs(experiments, TUNING_SEEDS)
    for key, rs in zip(keys, runs, strict=True):
        scores[key] = scores.get(key, 0.0) + float(np.mean([r.cumulative_regret[-1] for r in rs]))
    choices: list[dict[str, Any]] = []
    for states in budget.states:
        for env in SEED000_ENVS:
            for method, grid in TUNING_GRID.items():
                tried: list[dict[str, Any]] = [
                    {"bonus": f, "c": c, "score": scores[(env, states, method, f, c)]} for f, c in grid
                ]
                best = min(tried, key=lambda g: g["score"])
                choices.append({"env": env, "states": states, "method": method, "bonus": best["bonus"], "c": best["c"]})
                choices[-1]["scores"] = tried
                log(f"  {env} S = {states} {method}: {best['bonus']} c = {best['c']:g} ({best['score']:.1f})")
    timing: dict[str, Any] = {
        "states": list(budget.states),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(_cpu() - cpu, 1),
        "load": round(max(load, os.getloadavg()[0]), 2),
        "cores": os.cpu_count(),
        "points_run": len(set(keys)),
        "points_reused": reused,
    }
    runs_timed = [timing]
    if old is not None and same:  # the stored choices at the other S stay, and every earlier search's timing
        kept = [c for c in old["choices"] if c["states"] not in budget.states]
        choices = sorted(kept + choices, key=lambda c: (c["states"], SEED000_ENVS.index(c["env"]), c["method"]))
        runs_timed = old.get("runs", []) + runs_timed
    result = {
        "command": "python docs/make_regret.py --tune",
        **header,
        "runs": runs_timed,
        "choices": choices,
    }
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"wrote {path}")
    return result


def generate(
    out: Path,
    budget: Budget,
    sigmas: Sequence[str],
    parts: Sequence[str],
    *,
    quick: bool = False,
    render_only: bool = False,
    command: str = "",
) -> Path:
    """Run the parts (unless ``render_only``), store their rows, and write ``out``/regret.md and the figures."""
    out.mkdir(parents=True, exist_ok=True)
    data = out / "regret_data"
    data.mkdir(exist_ok=True)
    doc = out / "regret.md"
    legacy = legacy_sections(doc.read_text(encoding="utf-8")) if doc.is_file() else {}

    def log(msg: str) -> None:
        print(msg, flush=True)

    for name in [] if render_only else parts:
        started, cpu, load = time.perf_counter(), _cpu(), os.getloadavg()[0]
        log(f"{name}:")
        with _executor(budget) as ex:
            runner = Runner(budget, log, ex)
            sections = [section(p) for p in PART_FUNCTIONS[name](runner, sigmas)]
            described = f"{ex.name} ({ex.workers} workers)"
        timing = {
            "command": command or f"python docs/make_regret.py --only {name}",
            "wall_seconds": round(time.perf_counter() - started, 1),
            "cpu_seconds": round(_cpu() - cpu, 1),
            "load_start": round(load, 2),
            "load_end": round(os.getloadavg()[0], 2),
            "cores": os.cpu_count(),
            "executor": described,
            "episodes": runner.episodes,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        keys = {s.key for s in sections}
        kept: list[Section] = []
        runs = [timing]
        before = load_stored(data).get(name)
        if before is not None:  # sections of this part not run now (seed 000 at other S) stay, with their timings
            kept = [s for s in before[0] if s.key not in keys]
            runs = [r for r in before[1] if kept and not set(r.get("keys", [])) <= keys] + runs
        timing["keys"] = sorted(keys)
        merged = sorted(kept + sections, key=lambda s: section_order(s.key))
        payload = {"part": name, "timing": runs, "sections": [s.to_dict() for s in merged]}
        (data / f"{name}.json").write_text(json.dumps(payload, ensure_ascii=False) + "\n", encoding="utf-8")
        for s in sections:
            figure(s, out / f"regret_{s.key}.png")
        log(f"{name}: {timing['wall_seconds']:.0f} s wall, {timing['cpu_seconds']:.0f} s CPU")
    stored = load_stored(data)
    if render_only:
        for sections, _ in stored.values():
            for s in sections:
                figure(s, out / f"regret_{s.key}.png")
    tuning = load_tuning() if "seed000" in stored else None
    why = shift_lines(stored["seed000"][0]) if "seed000" in stored else []
    page = render(stored, legacy, sigmas, quick, tuning, planned=tuple(SEED000_PLAN), why=why)
    doc.write_text(page, encoding="utf-8")
    log(f"wrote {doc}")
    return doc


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small K, 3 seeds, in process")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--sigmas", nargs="+", default=list(SIGMAS))
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--render", action="store_true", help="re-render the page from stored rows, run nothing")
    parser.add_argument("--tune", action="store_true", help="seed 000's grid search: write regret_tuning.json")
    parser.add_argument("--states", nargs="+", type=int, choices=sorted(SEED000_PLAN), help="seed 000's S")
    parser.add_argument("--workers", type=int, help="worker processes (default: every core)")
    parser.add_argument("--executor", choices=("processes", "dask"), help="where the runs go (default: processes)")
    parser.add_argument("--scheduler", help="a Dask scheduler's address (with --executor dask)")
    parser.add_argument("--seeds", type=int)
    parser.add_argument("--episodes", type=int, help="K of the tabular parts")
    parser.add_argument("--lq-episodes", type=int, help="K of the LQ part")
    args = parser.parse_args(argv)
    unsupported = sorted(set(args.sigmas) - set(supported_sigmas(args.sigmas)))
    if unsupported:
        parser.error(f"Experiment does not accept sigma {', '.join(unsupported)} yet; pass --sigmas without it")
    if args.scheduler and args.executor != "dask":
        parser.error("--scheduler goes with --executor dask")
    base = QUICK if args.quick else FULL
    budget = Budget(
        episodes=args.episodes or base.episodes,
        lq_episodes=args.lq_episodes or base.lq_episodes,
        seeds=args.seeds or base.seeds,
        workers=args.workers or base.workers,
        states=tuple(args.states or base.states),
        executor=args.executor or base.executor,
        scheduler=args.scheduler,
    )
    if args.tune:
        tune(budget, print)
        return
    command = " ".join(["python docs/make_regret.py", *(sys.argv[1:] if argv is None else argv)])
    generate(args.out, budget, args.sigmas, args.only, quick=args.quick, render_only=args.render, command=command)


if __name__ == "__main__":
    main(sys.argv[1:])
