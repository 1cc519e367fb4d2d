"""Write docs/drift.md and docs/drift.png: why LDP-UCRL-VTR drifts back to the always-left policy (dpkit issue 19,
item 5) — ``python docs/make_drift.py``.

RiverSwim S = 3 (H = 6, d = 18), ε = 10, δ = 0.1, σ ``tight``, K = 10⁴ episodes. Runs, over seeds:

* ``default``: the agent as dpkit runs it (``bonus="confidence"``, c = 0.1, shift r_n = 2Υ_n);
* ``same noise, other users``: the privacy-noise stream of seed 0 with the users (and action draws) of other seeds;
* ``σ = 0``: no noise, no shift (UCRL-VTR's actions);
* ``noiseless + shift``: the users send their exact statistics, the server still adds r_n I (the shift alone);
* ``c = 1``: the theory's bonus constant; ``bonus="paper"``: the §6 bonus c·d^{3/4}(H − h + 1)^{3/2}k^{1/4};

and one instrumented run (seed 0, default) that measures, every ``CHECK`` episodes at step h = 1: the shift r_n,
the bound Υ_n, the measured norm of the summed Gram noise ‖ΣW‖, the largest eigenvalue of a noiseless data block
(Σφφᵀ restricted to one (s, a)), and the two parts of the model's preference ⟨θ̂, φ_R − φ_L⟩ for right over left in
state 0: the part the data gives (θ̂ of the noiseless statistics under the same shift) and the rest (the noise).
The explanation in docs/drift.md is generated from these numbers. Two processes; about 3 minutes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.algorithms.envs.tabular import TabularMDP, Users, make_tabular
from dpkit.algorithms.episodes import play_episode, run_tabular
from dpkit.algorithms.ldp_ucrl_vtr import GRAM, TARGET, LdpUcrlVtr
from dpkit.algorithms.ucrl_vtr import Bonus

ROOT = Path(__file__).resolve().parents[1]
OUT_MD = ROOT / "docs" / "drift.md"
OUT_PNG = ROOT / "docs" / "drift.png"

EPISODES = 10_000
STATES = 3
EPSILON = 10.0
DELTA = 0.1
SIGMA = "tight"
ENV_SEED = 0
SEEDS = 8  # of the default
CONTROL_SEEDS = 4  # of each control
CHECK = 100  # episodes between two diagnostics of the instrumented run
WINDOW = 250  # episodes per point of the figure
WORKERS = 2

#: label → (agent options, noiseless messages?, fixed noise seed or None)
CONTROLS: Mapping[str, tuple[dict[str, Any], bool, int | None]] = {
    "default (c = 0.1, r_n = 2Υ_n)": ({}, False, None),
    "same noise, other users": ({}, False, 0),
    "σ = 0 (no noise, no shift)": ({"sigma": 0.0}, False, None),
    "noiseless + shift r_n": ({}, True, None),
    "c = 1 (theory)": ({"bonus_scale": 1.0}, False, None),
    'bonus = "paper"': ({"bonus": Bonus.PAPER}, False, None),
}
DEFAULT = "default (c = 0.1, r_n = 2Υ_n)"


class NoiselessShift(LdpUcrlVtr):
    """LDP-UCRL-VTR whose users send their exact statistics; the server still shifts by r_n (its nominal σ)."""

    def privatize(self, blocks: np.ndarray, values: np.ndarray, targets: np.ndarray) -> dict[str, np.ndarray]:
        return self.statistics(blocks, values, targets)


def _env() -> TabularMDP:
    return make_tabular("riverswim", STATES, np.random.default_rng(ENV_SEED))


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """Users, agent noise, action draws: the streams :func:`dpkit.algorithms.simulation.simulate` uses for ``seed``."""
    users, agent, actions = np.random.SeedSequence(seed).spawn(3)
    return np.random.default_rng(users), np.random.default_rng(agent), np.random.default_rng(actions)


def _agent(
    env: TabularMDP, rng: np.random.Generator, *, options: Mapping[str, Any], noiseless: bool = False
) -> LdpUcrlVtr:
    opts = dict(options)
    sigma = opts.pop("sigma", SIGMA)
    cls = NoiselessShift if noiseless else LdpUcrlVtr
    return cls(env, EPISODES, rng, epsilon=EPSILON, delta=DELTA, sigma=sigma, **opts)


def run_one(task: tuple[str, int]) -> tuple[str, int, np.ndarray, np.ndarray, float]:
    """One seed of one control: (label, seed, regret (K,), share of right actions per episode (K,), seconds)."""
    label, seed = task
    options, noiseless, noise_seed = CONTROLS[label]
    started = time.perf_counter()
    env = _env()
    users_rng, agent_rng, action_rng = _streams(seed)
    if noise_seed is not None:
        agent_rng = _streams(noise_seed)[1]
    agent = _agent(env, agent_rng, options=options, noiseless=noiseless)
    users = Users.draw(EPISODES, env.horizon, users_rng)
    run = run_tabular(agent, env, users, action_rng)
    return label, seed, run.regret, run.actions.mean(axis=1), time.perf_counter() - started


def _first(x: Any) -> float:
    """Step 1's value of a per-step quantity (a number, or one per step)."""
    return float(np.atleast_1d(np.asarray(x, dtype=float))[0])


def instrumented(seed: int = 0) -> dict[str, np.ndarray]:
    """The default agent on ``seed`` with diagnostics every :data:`CHECK` episodes (see the module docstring)."""
    env = _env()
    users_rng, agent_rng, _ = _streams(seed)
    agent = _agent(env, agent_rng, options={})
    users = Users.draw(EPISODES, env.horizon, users_rng)
    h_, s_, a_ = env.rewards.shape
    d = agent.dim
    lam = agent.regularizer
    clean_gram = np.zeros((h_, d, d))
    clean_target = np.zeros((h_, d))
    rows: dict[str, list[float]] = {
        k: []
        for k in (
            "n",
            "shift",
            "upsilon",
            "noise_norm",
            "data_max",
            "shrink",
            "pref_total",
            "pref_data",
            "pref_true",
            "norm_v1",
            "right",
        )
    }
    eye = np.eye(d)
    blocks_of_state0 = [slice(a * s_, (a + 1) * s_) for a in range(a_)]  # (s = 0, a) blocks
    for k in range(EPISODES):
        plan = agent.plan(k)
        policy = np.asarray(plan.policy)
        states, actions, rewards = play_episode(env, policy, users[k], None)
        blocks, values, targets = agent.regression_inputs(states, actions)
        if k % CHECK == 0 and k > 0:
            n = k
            shift = _first(agent.shift)
            gram, target = agent.gram()[0], agent.target()[0]
            noise = gram - lam * eye - clean_gram[0]
            sigma_full = gram + shift * eye
            theta = np.linalg.solve(sigma_full, target)
            theta_data = np.linalg.solve(clean_gram[0] + (lam + shift) * eye, clean_target[0])
            v1 = np.clip(values[0], 0.0, None)  # V_{k,2}: the feature of step 1 is φ_V(0, a) = V on block (0, a)
            right, left = blocks_of_state0[1], blocks_of_state0[0]
            data_blocks = [
                np.linalg.eigvalsh(clean_gram[h][b * s_ : (b + 1) * s_, b * s_ : (b + 1) * s_])[-1]
                for h in range(h_)
                for b in range(s_ * a_)
            ]
            top = max(data_blocks)
            rows["n"].append(n)
            rows["shift"].append(shift)
            rows["upsilon"].append(shift / agent.shift_scale)
            rows["noise_norm"].append(float(np.linalg.norm(noise, 2)))
            rows["data_max"].append(float(top))
            rows["shrink"].append(float(top / (top + lam + shift)))
            rows["pref_total"].append(float((theta[right] - theta[left]) @ v1))
            rows["pref_data"].append(float((theta_data[right] - theta_data[left]) @ v1))
            rows["pref_true"].append(float((env.transitions[0, 0, 1] - env.transitions[0, 0, 0]) @ v1))
            rows["norm_v1"].append(float(np.linalg.norm(v1)))
            rows["right"].append(float(policy[0, 0] == 1))
        exact = agent.statistics(blocks, values, targets)
        clean_gram += exact[GRAM]
        clean_target += exact[TARGET]
        agent.update(k, states, actions, rewards)
    return {key: np.asarray(v) for key, v in rows.items()}


def _smooth(x: np.ndarray) -> np.ndarray:
    """Means over consecutive windows of :data:`WINDOW` episodes (last axis)."""
    return x.reshape(x.shape[:-1] + (-1, WINDOW)).mean(axis=-1)


def _figure(results: Mapping[str, list[tuple[int, np.ndarray, np.ndarray]]], diag: Mapping[str, np.ndarray]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = (np.arange(EPISODES // WINDOW) + 0.5) * WINDOW
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    ax = axes[0, 0]
    for label, runs in results.items():
        if label == "same noise, other users":
            continue
        reg = np.stack([_smooth(r) for _, r, _ in runs])
        shown = label.replace("Υ_n", r"$\Upsilon_n$")
        ax.plot(ks, reg.mean(axis=0), label=f"{shown} ({len(runs)} seeds, mean; band min–max)")
        ax.fill_between(ks, reg.min(axis=0), reg.max(axis=0), alpha=0.08)
    ax.set(xlabel="episode k", ylabel=f"regret per episode (mean of {WINDOW})", title="(a) regret per episode")
    ax.legend(fontsize=8)
    panels = (
        (axes[0, 1], DEFAULT, "seed {}", "(b) default: share of right actions, one line per seed", 2),
        (
            axes[1, 0],
            "same noise, other users",
            "users of seed {}",
            "(c) noise stream of seed 0, users of other seeds: the lines coincide",
            1,
        ),
    )
    for ax, key, label, title, ncol in panels:
        for seed, _, right in results[key]:
            ax.plot(ks, _smooth(right), lw=1.2, label=label.format(seed))
        ax.set(xlabel="episode k", ylabel="share of right actions", ylim=(-0.03, 1.03), title=title)
        ax.legend(fontsize=7, ncol=ncol)
    ax = axes[1, 1]
    n = diag["n"]
    ax.loglog(n, diag["shift"], label=r"shift $r_n = 2\Upsilon_n$ (step 1)")
    ax.loglog(n, diag["noise_norm"], label="measured ‖ΣW‖ (step 1)")
    ax.loglog(n, diag["data_max"], label="largest noiseless data block eigenvalue (any step)")
    ax.set(xlabel="users aggregated n", ylabel="eigenvalue scale", title="(d) seed 0: shift, noise and data")
    ax.legend(fontsize=8)
    fig.suptitle(
        f"LDP-UCRL-VTR, RiverSwim S = {STATES}, ε = {EPSILON:g}, δ = {DELTA:g}, σ {SIGMA}, K = {EPISODES}", fontsize=12
    )
    fig.tight_layout()
    fig.savefig(OUT_PNG, dpi=110)
    plt.close(fig)


def _fmt(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}g}"


def _sig(x: Any) -> str:
    """A σ as text: one number, or one per step."""
    values = np.atleast_1d(np.asarray(x, dtype=float))
    return (
        _fmt(float(values[0]), 4) if np.all(values == values[0]) else "(" + ", ".join(_fmt(v, 4) for v in values) + ")"
    )


def _last(x: np.ndarray, episodes: int = 2000) -> float:
    return float(x[-episodes:].mean())


def _markdown(
    results: Mapping[str, list[tuple[int, np.ndarray, np.ndarray]]],
    diag: Mapping[str, np.ndarray],
    sigmas: Mapping[str, Any],
    seconds: float,
) -> str:
    lines = [
        "# LDP-UCRL-VTR's late drift to the always-left policy",
        "",
        f"Generated by `python docs/make_drift.py` ({seconds:.0f} s on {WORKERS} processes); do not edit by hand. "
        f"RiverSwim S = {STATES} (H = {2 * STATES}, d = {STATES * STATES * 2}), ε = {EPSILON:g}, δ = {DELTA:g}, "
        f"σ {SIGMA} (σ_Λ = {_sig(sigmas[GRAM])}, σ_u = {_sig(sigmas[TARGET])}), K = {EPISODES} episodes, "
        f"the environment of seed {ENV_SEED}; seed i draws the users, the privacy noise and the action draws as "
        "`dpkit simulate` does.",
        "",
        "![regret, share of right actions and the shift against the data](drift.png)",
        "",
        "| run | seeds | cumulative regret at K (mean, min–max) | share of right actions, last 2,000 episodes "
        "(per seed) |",
        "|---|---|---|---|",
    ]
    for label, runs in results.items():
        cum = np.array([r.sum() for _, r, _ in runs])
        shares = " ".join(_fmt(_last(right), 2) for _, _, right in runs)
        lines.append(f"| {label} | {len(runs)} | {cum.mean():.0f} ({cum.min():.0f}–{cum.max():.0f}) | {shares} |")
    default = results[DEFAULT]
    same = np.stack([_smooth(right) for _, _, right in results["same noise, other users"]])
    spread = float((same.max(axis=0) - same.min(axis=0)).max())
    blocks_default = np.stack([_smooth(right) for _, _, right in default])
    swing = blocks_default.max(axis=1) - blocks_default.min(axis=1)
    env = _env()
    _, v_star = env.optimal_values()
    left = np.zeros((1, env.horizon, env.states, env.actions))
    left[..., 0] = 1.0
    left_policy_regret = float(v_star[0, env.initial_state] - env.policy_values(left)[0, 0, env.initial_state])
    end = -1
    shift, ups, noise, data = (float(diag[k][end]) for k in ("shift", "upsilon", "noise_norm", "data_max"))
    n_end = int(diag["n"][end])
    half = diag["n"] >= EPISODES // 2
    pref_noise = diag["pref_total"][half] - diag["pref_data"][half]
    ratio = diag["noise_norm"] / diag["upsilon"]
    # where the largest data block would overtake the shift: data ∝ n, shift ∝ √n
    overtake = n_end * (shift / data) ** 2
    per_visit = float(np.mean(diag["norm_v1"] ** 2))
    pref_data = float(diag["pref_data"][half].mean())
    kept = float(diag["shrink"].max()) * 100
    noiseless_share = float(np.mean([_last(r) for _, _, r in results["noiseless + shift r_n"]]))
    sigma0 = results["σ = 0 (no noise, no shift)"]
    noiseless = results["noiseless + shift r_n"]
    theory = results["c = 1 (theory)"]
    paper = results['bonus = "paper"']
    lines += [
        "",
        "## What the runs show",
        "",
        f"* **The drift is not systematic, it is noise.** Over {len(default)} seeds of the default the share of "
        f"right actions (per {WINDOW} episodes) swings by {_fmt(float(swing.min()), 2)}–{_fmt(float(swing.max()), 2)} "
        "within a run, at different times in different seeds (panel b): some seeds stay mostly right, others "
        "mostly left, others flip back and forth. Holding the privacy-noise stream of seed 0 fixed and changing "
        f"the users and action draws ({len(same)} user streams, panel c) gives the same policy sequence: the "
        f"shares differ by at most {_fmt(spread, 2)} in any window. The policy played is a function of the privacy "
        "noise, not of what the users experience; the seed-0 'drift after ~7,000 episodes' is one such noise "
        "excursion.",
        f"* **The shift swamps the data.** At n = {n_end} (seed 0, step 1) the shift is r_n = {_fmt(shift)} "
        f"(Υ_n = {_fmt(ups)}), the measured summed Gram noise ‖ΣW‖ = {_fmt(noise)}, and the largest eigenvalue "
        f"of any noiseless data block Σφφᵀ (any step, any (s, a)) is {_fmt(data)}: the ridge estimate keeps at "
        f"most {_fmt(float(diag['shrink'][end]) * 100, 2)}% of any block of θ (shrinkage g/(g + λ + r_n)). With "
        "the data growing like n and the shift like √n, the best-fed block would overtake the shift only at "
        f"n ≈ {_fmt(overtake, 2)} users (K here is {EPISODES}). The features are the agent's own values, "
        f"φ = V_{{k,h+1}} ∈ [0, (H − h)/H]: a visit adds ‖V_{{k,2}}‖² ≈ {_fmt(per_visit, 2)} "
        "(mean over the checks) to a block's eigenvalue at step 1, while r_n grows by r_n/(2n) ≈ "
        f"{_fmt(shift / (2 * n_end), 2)} per user.",
        "* **The model's preference is noise plus a shrinkage bias towards the action played.** Over the second "
        "half of seed 0, the model's right-minus-left term ⟨θ̂, φ_R − φ_L⟩ at step 1, state 0 has a data part "
        f"(θ̂ of the noiseless statistics under the same shift) of mean {_fmt(pref_data, 2)} and a noise part of "
        f"root mean square {_fmt(float(np.sqrt(np.mean(pref_noise**2))), 2)}, against the true "
        f"(P_R − P_L)V = {_fmt(float(diag['pref_true'][half].mean()), 2)}, while the agent played right at step 1 "
        f"in {_fmt(float(diag['right'][half].mean()) * 100, 2)}% of these checks. A block's estimate is its data "
        "times g/(g + λ + r_n), so the action played more looks better whatever its true value (a data part of "
        f"sign {'+' if pref_data > 0 else '−'}), and the action not played is shrunk further as r_n grows: the "
        "choice locks in. The bonuses of the two actions are nearly equal (every block's Σ is ≈ r_n I). The "
        "normalised noise Σ_{i<=n}ξ_i / r_n is a random walk divided by √n: its values at n and 2n are "
        "correlated (≈ 1/√2), so an excursion persists and the policy flips at random times, more rarely as n "
        "grows.",
        f"* **The shift alone gives always-left.** With the users' exact statistics and the same shift "
        f"(noiseless + shift), the share of right actions is {_fmt(noiseless_share, 2)} "
        f"(cumulative regret {np.mean([r.sum() for _, r, _ in noiseless]):.0f}, the always-left policy's "
        f"{left_policy_regret:.3f} per episode): every θ̂ block shrunk to ~0, the known reward 5/(1000H) of left in "
        "state 0 decides. Without noise and shift (σ = 0) the same code learns in tens of episodes "
        f"(cumulative regret {np.mean([r.sum() for _, r, _ in sigma0]):.0f}).",
        "* **Not the constant c.** The theory's c = 1 puts every optimistic Q at its cap (the bonus ~ "
        "c·sqrt(ρ_max)·sqrt(SA)·‖φ‖_{Σ⁻¹} is ~ c·3‖V‖ for every block), ties go to action 0: share of right "
        f"{_fmt(float(np.mean([_last(r) for _, _, r in theory])), 2)}, regret "
        f"{np.mean([r.sum() for _, r, _ in theory]):.0f}. The paper's §6 bonus behaves as the default "
        f"(regret {np.mean([r.sum() for _, r, _ in paper]):.0f}, shares "
        f"{' '.join(_fmt(_last(r), 2) for _, _, r in paper)}).",
        f"* **Not a wrong n in Υ_n.** The measured ‖ΣW‖/Υ_n stays at {_fmt(float(ratio.min()), 2)}–"
        f"{_fmt(float(ratio.max()), 2)} from n = {int(diag['n'][0])} to {n_end} (a bound with the wrong power of n "
        "would drift); the bound is conservative by that factor (the operator norm of a symmetric Gaussian matrix "
        "is ≈ 2σ√(nd), the bound σ√n(4√d + sqrt(8 ln(2/p)))), but even a shift of the measured ‖ΣW‖ alone "
        f"({_fmt(noise)}) is {_fmt(noise / data, 2)}× the largest data block.",
        "",
        "## Cause",
        "",
        "A property of the paper's Algorithm 1, not a bug of the implementation nor dpkit's tuned c: Line 19 "
        "shifts every block of Λ_{k,h} by r·I with r at least the norm of the summed symmetric noise, "
        "∝ σ√(n·d) (Lemma B.1's [Υ, 3Υ] eigenvalue window), while a block's data grows like (its visits)·"
        "‖V_{k,h+1}‖², with V ≤ 1 (rewards divided by H, §6). At S = 3, ε = 10 and K = 10⁴ every block stays "
        f"below the shift (θ̂ keeps at most {_fmt(kept, 2)}% of any block), so the greedy action is set by the "
        "privacy noise in Σ_h⁻¹u_h and by the shrinkage bias towards the action played; the block of the action "
        "not played is shrunk further as r_n keeps growing, so an excursion to the left is not corrected by "
        "data. The regret bound of Theorem 5.2 (T^{3/4}/sqrt(ε), d^{5/4}) allows exactly this: learning starts only "
        "once the visits times ‖V‖² outgrow σ√(n·d). c = 1 is always-left by ties at the cap; the paper's bonus "
        "form drifts as the default does.",
    ]
    return "\n".join(lines) + "\n"


def main(progress: Callable[[str], None] = print) -> None:
    started = time.perf_counter()
    tasks = [(DEFAULT, s) for s in range(SEEDS)]
    tasks += [(label, s) for label in CONTROLS if label != DEFAULT for s in range(CONTROL_SEEDS)]
    results: dict[str, list[tuple[int, np.ndarray, np.ndarray]]] = {label: [] for label in CONTROLS}
    total = len(tasks) + 1
    with ProcessPoolExecutor(WORKERS) as pool:
        diag_future = pool.submit(instrumented, 0)
        futures = [pool.submit(run_one, t) for t in tasks]
        done = 0
        for future in as_completed([diag_future, *futures]):
            done += 1
            if future is diag_future:
                progress(f"[{done}/{total}] instrumented run (seed 0) done, {time.perf_counter() - started:.0f} s")
                continue
            label, seed, regret, right, took = future.result()
            results[label].append((seed, regret, right))
            progress(
                f"[{done}/{total}] {label}, seed {seed}: {took:.1f} s (elapsed {time.perf_counter() - started:.0f} s)"
            )
        diag = diag_future.result()
    for runs in results.values():
        runs.sort(key=lambda x: x[0])
    sigmas = _agent(_env(), np.random.default_rng(0), options={}).sigmas
    _figure(results, diag)
    OUT_MD.write_text(_markdown(results, diag, sigmas, time.perf_counter() - started))
    progress(f"wrote {OUT_MD} and {OUT_PNG} in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
