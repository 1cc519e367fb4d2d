"""``dpkit simulate``: an algorithm's regret over seeds (CSV, figure, summary)."""

from __future__ import annotations

from pathlib import Path

import click

from dpkit.accountant.validation import check_index
from dpkit.algorithms import registry
from dpkit.algorithms.envs.catalog import check_environment
from dpkit.algorithms.envs.from_gymnasium import is_external
from dpkit.algorithms.simulation import SIMULATED_ENVIRONMENTS
from dpkit.render import emit_json, format_number, format_values, print_lines, progress_bar

from .option_types import NUMBER
from .options import bounded, check_out_dir, sigma_choice
from .refusals import refuse_options


@click.command()
@click.argument("algorithm")
@click.option(
    "--env",
    "env_name",
    default=None,
    help=f"Environment: {', '.join(SIMULATED_ENVIRONMENTS)}, or a tabular one with a known model — "
    "gymnasium:ID[,key=value…] (Gymnasium's toy text, e.g. gymnasium:FrozenLake-v1,is_slippery=false) or "
    "FILE.py:NAME (default: riverswim; lq for the LQ algorithms).",
)
@click.option("--states", "-S", type=NUMBER, default=5, show_default=True, help="States of a tabular environment.")
@click.option("--actions", "-A", type=NUMBER, default=2, show_default=True, help="Actions (tabular env only).")
@click.option("--horizon", "-H", type=NUMBER, default=None, help="Horizon (default: 2S tabular, 10 LQ).")
@click.option("--state-dim", type=NUMBER, default=2, show_default=True, help="LQ state dimension n.")
@click.option("--control-dim", type=NUMBER, default=1, show_default=True, help="LQ control dimension d.")
@click.option("--episodes", "-K", type=NUMBER, required=True, help="Episodes K (one user each).")
@click.option("--epsilon", type=NUMBER, default=None, help="Target ε of a private algorithm.")
@click.option("--delta", type=NUMBER, default=None, help="Target δ of a private algorithm.")
@click.option("--sigma", "sigma_text", default="paper", show_default=True, help="paper, tight, optimal or a number.")
@click.option("--seeds", type=NUMBER, default=1, show_default=True, help="Runs 0..N−1.")
@click.option("--env-seed", type=NUMBER, default=0, show_default=True, help="Seed of the environment.")
@click.option(
    "--workers",
    type=NUMBER,
    default=None,
    help="Run seeds in a process pool of this many (1: this process) [default: auto: this process while the seeds "
    "are quick, then every core].",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory for the regret CSV and PNG.",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
# 17 parameters: a click command receives one per option (and its context)
def simulate(
    ctx: click.Context,
    algorithm: str,
    env_name: str | None,
    states: float,
    actions: float,
    horizon: float | None,
    state_dim: float,
    control_dim: float,
    episodes: float,
    epsilon: float | None,
    delta: float | None,
    sigma_text: str,
    seeds: float,
    env_seed: float,
    workers: float | None,
    out: Path,
    as_json: bool,
) -> None:
    """Regret of ALGORITHM over seeds: per-episode CSV, a figure, and a summary."""
    from dpkit.algorithms.envs.lq import LQ_WORLDS
    from dpkit.algorithms.limits import MAX_STEPS
    from dpkit.algorithms.simulation import Experiment
    from dpkit.experiments import run_experiment, write_outputs

    spec = registry.get(algorithm, what="ALGORITHM")  # an unknown name: the choices and "did you mean"
    check_out_dir(out)  # before any work
    if env_name is None:
        env_name = "lq" if spec.lq else "riverswim"
    check_environment(env_name, lq=env_name in LQ_WORLDS)
    # an option that does not apply to this algorithm or environment is refused, never ignored
    if env_name in LQ_WORLDS:
        refuse_options(ctx, ("states", "actions"), "an LQ system (use --state-dim and --control-dim)")
    else:
        refuse_options(ctx, ("state_dim", "control_dim"), f"the tabular environment {env_name!r}")
        if is_external(env_name):
            refuse_options(ctx, ("states", "actions", "env_seed"), f"{env_name!r} (its own model fixes them)")
        elif env_name != "tabular":
            refuse_options(ctx, ("actions",), f"{env_name!r} (two actions: left and right)")
    if not spec.private:
        refuse_options(ctx, ("epsilon", "delta", "sigma_text"), f"{algorithm}, which is not private (it adds no noise)")
    n_seeds = bounded("seeds", seeds)
    n_workers = None if workers is None else bounded("workers", workers)
    experiment = Experiment(
        algorithm=algorithm,
        env=env_name,
        episodes=bounded("episodes", episodes),
        states=bounded("states", states),
        actions=bounded("actions", actions),
        horizon=None if horizon is None else bounded("horizon", horizon),
        epsilon=epsilon,
        delta=delta,
        sigma=sigma_choice(sigma_text),
        state_dim=bounded("state_dim", state_dim),
        control_dim=bounded("control_dim", control_dim),
        env_seed=check_index("env_seed", env_seed),
    )
    steps = experiment.episodes * n_seeds * experiment.steps_per_episode
    if steps > MAX_STEPS:
        raise ValueError(f"--episodes × --seeds × horizon = {steps:,} steps is above the limit of {MAX_STEPS:,}")
    with progress_bar(f"{algorithm} on {env_name}", experiment.episodes * n_seeds) as advance:
        result = run_experiment(experiment, n_seeds, workers=n_workers, progress=advance)
    files = write_outputs(result, out)
    summary = result.summary() | {"files": files}
    if as_json:
        emit_json(summary)
        return
    print_lines(
        [
            f"{algorithm} on {env_name}: K = {experiment.episodes}, {n_seeds} seed(s)",
            "σ: " + ("; ".join(f"{k} = {format_values(v, 5)}" for k, v in summary["sigmas"].items()) or "no noise"),
            f"final regret: {format_number(summary['final_regret_mean'], 6)} ± "
            f"{format_number(summary['final_regret_std'], 4)}",
            f"log-log slope of mean cumulative regret: {format_number(summary['loglog_slope'], 4)}",
            f"wall time: {summary['wall_time_seconds']:.2f} s",
            f"wrote {files['csv']} and {files['png']}",
        ]
    )
