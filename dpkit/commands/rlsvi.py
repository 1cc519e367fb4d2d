"""``dpkit rlsvi``: RLSVI's inherent-noise privacy, closed form and (``--run``) one run's exact ε — an ex-post,
data-dependent figure (it depends on the run's visit counts), shown beside the worst case over datasets."""

from __future__ import annotations

import click

from dpkit import accountant
from dpkit.accountant.rlsvi import rlsvi_closed_form, rlsvi_worst_case_mu
from dpkit.accountant.validation import check_index
from dpkit.render import emit_json, format_number, print_table, progress_bar

from .option_types import NUMBER
from .options import bounded
from .refusals import refuse_options

#: Which options apply to which form of ``dpkit rlsvi``: the options of one form only, and those of both.
FORMS: dict[str, tuple[str, ...]] = {
    "RLSVI's closed form (without --run)": (),
    "a --run": ("do_run", "env_name", "seed"),
    "both": ("states", "actions", "horizon", "episodes", "delta", "as_json"),
}


@click.command()
@click.option("--states", "-S", type=NUMBER, required=True)
@click.option("--actions", "-A", type=NUMBER, default=None, help="Actions A (with --run: default 2).")
@click.option("--horizon", "-H", type=NUMBER, default=None, help="Horizon H (with --run: default 2S).")
@click.option("--episodes", "-K", type=NUMBER, required=True)
@click.option("--delta", type=NUMBER, required=True)
@click.option("--run", "do_run", is_flag=True, help="Run RLSVI and set the run's exact ε beside the closed form.")
@click.option(
    "--env",
    "env_name",
    type=click.Choice(("riverswim", "riverswim-inhomogeneous", "tabular")),
    default=None,
    help="Environment of --run  [default: riverswim].",
)
@click.option("--seed", type=NUMBER, default=None, help="Seed of --run (environment, users, noise)  [default: 0].")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rlsvi(
    ctx: click.Context,
    states: float,
    actions: float | None,
    horizon: float | None,
    episodes: float,
    delta: float,
    do_run: bool,
    env_name: str | None,
    seed: float | None,
    as_json: bool,
) -> None:
    """RLSVI's inherent-noise privacy: the paper's closed form, its tighter conversions, the worst case;
    with --run, one run's exact ε (the worst user's μ from the run's own visit counts) — ex-post and
    data-dependent, not a DP guarantee: the worst case over datasets is the guarantee."""
    if not do_run:
        refuse_options(ctx, FORMS["a --run"], "RLSVI's closed form (without --run)")
        missing = [n for n, v in (("--actions", actions), ("--horizon", horizon)) if v is None]
        if missing:
            raise click.UsageError(f"Missing option {' and '.join(repr(m) for m in missing)} (or give --run)")
        # no limit of a run's or a declaration's: the closed forms allocate nothing per episode, state or step, and
        # rlsvi_closed_form takes every size a double holds (S, A, H <= 2**53, K <= 1.8e308), naming any beyond
    else:
        s_run = bounded("states", states)
        actions = 2 if actions is None else bounded("actions", actions)
        horizon = 2 * s_run if horizon is None else bounded("horizon", horizon)
        bounded("episodes", episodes)
    cf = rlsvi_closed_form(states=states, actions=actions, horizon=horizon, episodes=episodes, delta=delta)  # type: ignore[arg-type]
    s, a, h, k = cf.states, cf.actions, cf.horizon, cf.episodes
    mu_wc = rlsvi_worst_case_mu(states=s, actions=a, horizon=h, episodes=k)
    eps_wc = 0.0 if mu_wc == 0.0 else accountant.gdp_epsilon(mu_wc, cf.delta)
    out = cf.to_dict() | {"mu_worst_case": mu_wc, "epsilon_worst_case_exact": eps_wc}
    rows = [
        ["ρ (Corollary 14)", format_number(cf.rho, 10)],
        ["ε paper: ρ + 2√(ρ ln 1/δ)", format_number(cf.epsilon_paper, 10)],
        ["ε, same ρ, optimal RDP conversion", format_number(cf.epsilon_rdp_optimal, 10)],
        ["ε, same ρ, exact GDP (μ = √(2ρ))", format_number(cf.epsilon_exact_gdp, 10)],
        ["μ worst case (visited cells, later episodes)", format_number(mu_wc, 10)],
        ["ε worst case, exact", format_number(eps_wc, 10)],
    ]
    title = f"RLSVI, S = {s}, A = {a}, H = {h}, K = {k}, δ = {format_number(cf.delta)}"
    if do_run:
        from dpkit.algorithms.rlsvi import rlsvi_run

        env_name = env_name or "riverswim"
        seed_value = check_index("seed", 0 if seed is None else seed)
        with progress_bar(f"RLSVI on {env_name}", k) as advance:
            run, privacy = rlsvi_run(env_name, s, a, k, seed_value, horizon=h, delta=cf.delta, progress=advance)
        eps_run = privacy.exact_epsilon(cf.delta)
        out |= {
            "env": env_name,
            "seed": seed_value,
            "beta": "russo",
            "sigma": run.sigmas["Q-values"],
            "mu_run": privacy.mu,
            "epsilon_run_exact": eps_run,
            "worst_user": privacy.worst_user,
            "cumulative_regret": float(run.cumulative_regret[-1]),
            # the run's μ and ε depend on its visit counts: an ex-post figure, not a DP guarantee
            "run_privacy_kind": privacy.to_dict()["kind"],
            "epsilon_run_data_dependent": privacy.data_dependent,
        }
        rows += [
            [f"μ this run, ex-post (worst user: episode {privacy.worst_user})", format_number(privacy.mu, 10)],
            ["ε this run, ex-post (data-dependent)", format_number(eps_run, 10)],
            ["cumulative regret", format_number(out["cumulative_regret"], 10)],
        ]
        title += f", {env_name}, seed {seed_value}"
    if as_json:
        emit_json(out)
        return
    caption = (
        "The run's μ and ε depend on its visit counts (the users' states and actions): an ex-post figure, not a "
        "DP guarantee. The guarantee is the worst case over datasets (ε worst case, exact)."
        if do_run
        else None
    )
    print_table(title, ["", "value"], rows, caption=caption)
