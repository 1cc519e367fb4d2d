"""``dpkit audit``: audit an RL algorithm against its declaration, or a release function against a claim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from dpkit import accountant
from dpkit.accountant.validation import check_choice, check_index
from dpkit.audits import Claim, ScoreFunction, audit_pairs, make_executor
from dpkit.loading import FileFunction, load_object
from dpkit.render import emit_json, format_number, print_table, progress_bar

from .options import NUMBER, NUMBER_LIST, read_ledger, refuse_options, sigma_choice


def _pairs(value: str) -> list[tuple[Any, Any]]:
    obj = load_object("--neighbours", value)
    if callable(obj):
        try:
            obj = obj()
        except Exception as err:
            raise ValueError(f"--neighbours: calling {value!r} failed: {type(err).__name__}: {err}") from None
    if isinstance(obj, tuple) and len(obj) == 2:
        return [obj]
    if isinstance(obj, list) and obj and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in obj):
        return [(p[0], p[1]) for p in obj]
    raise ValueError(
        f"--neighbours: {value!r} must be a pair (D, D′), a non-empty list of pairs, or a function returning one"
    )


def _audit_attack(value: str) -> Any:
    from dpkit.audits.attacks import ATTACK_NAMES

    if value == "lr":
        return "gaussian-lr-fitted"
    if value == "learned":
        return "logistic"
    if value == "auto" or (value in ATTACK_NAMES and value not in ("gaussian-lr", "score")):
        return value
    if ":" not in value:
        raise ValueError(
            f"--attack must be auto, lr, learned, one of "
            f"{', '.join(n for n in ATTACK_NAMES if n not in ('gaussian-lr', 'score'))} "
            f"or FILE.py:SCORE, got {value!r}"
        )
    return ScoreFunction(FileFunction("--attack", value), name=value)


#: Options of one form of ``dpkit audit`` only (the other form refuses them).
_ALGORITHM_ONLY = ("sigma", "observer", "runs", "episodes", "position")
_TARGET_ONLY = ("mu", "rho", "rdp_orders", "rdp_values", "claim_file", "trials", "chunk_size")


def _target_claim(
    epsilon: float | None,
    delta: float | None,
    mu: float | None,
    rho: float | None,
    rdp_orders: list[float] | None,
    rdp_values: list[float] | None,
    claim_file: str | None,
) -> Claim:
    """The one claim form the user gave: (ε, δ) (δ = 0: pure DP), μ, ρ, an RDP curve, or a ledger file."""
    forms = [
        name
        for name, given in (
            ("--epsilon/--delta", epsilon is not None),
            ("--mu", mu is not None),
            ("--rho", rho is not None),
            ("--rdp-orders/--rdp-values", rdp_orders is not None or rdp_values is not None),
            ("--claim", claim_file is not None),
        )
        if given
    ]
    if len(forms) != 1:
        raise click.UsageError(
            "give exactly one claim: --epsilon and --delta, --mu, --rho, --rdp-orders with "
            f"--rdp-values, or --claim FILE; got {', '.join(forms) if forms else 'none'}"
        )
    if epsilon is not None:
        if delta is None:
            raise click.UsageError("--epsilon needs --delta (0 for pure ε-DP)")
        return Claim.dp(epsilon, delta)
    if mu is not None:
        return Claim.gdp(mu)
    if rho is not None:
        return Claim.zcdp(rho)
    if claim_file is not None:
        return Claim.ledger(read_ledger(Path(claim_file)))
    if rdp_orders is None or rdp_values is None:
        raise click.UsageError("--rdp-orders and --rdp-values go together")
    return Claim.rdp(rdp_orders, rdp_values)


@click.command()
@click.argument("algorithm", required=False, metavar="[ALGORITHM]")
@click.option(
    "--target",
    default=None,
    metavar="FILE.py:FUNCTION",
    help="The release function release(dataset, rng, n) -> array (n, …).",
)
@click.option(
    "--neighbours",
    default=None,
    metavar="FILE.py:NAME",
    help="A pair (D, D′), a list of pairs, or a function returning them.",
)
@click.option(
    "--sigma", default="tight", show_default=True, help="ALGORITHM form: paper | tight | a number (every release's σ)."
)
@click.option("--observer", default=None, help="ALGORITHM form: what the attacker sees (default: the white-box one).")
@click.option("--runs", type=NUMBER, default=None, help="ALGORITHM form: runs of the algorithm per dataset (4000).")
@click.option("--episodes", type=NUMBER, default=None, help="ALGORITHM form: users K (default per algorithm).")
@click.option(
    "--position",
    type=click.Choice(("first", "middle", "last")),
    default="first",
    show_default=True,
    help="ALGORITHM form: where the changed user sits.",
)
@click.option("--epsilon", type=NUMBER, default=None, help="Claimed ε (with --delta; δ = 0 is pure ε-DP) ...")
@click.option(
    "--delta", type=NUMBER, default=None, help="... claimed δ; with --mu/--rho/--rdp-*, the δ of the ε reading (1e-5)."
)
@click.option("--mu", type=NUMBER, default=None, help="... or a claimed μ (GDP) ...")
@click.option("--rho", type=NUMBER, default=None, help="... or a claimed ρ (zCDP) ...")
@click.option("--rdp-orders", type=NUMBER_LIST, default=None, help="... or a claimed RDP curve: orders α > 1 ...")
@click.option("--rdp-values", type=NUMBER_LIST, default=None, help="... and ε_R(α) at each.")
@click.option(
    "--claim",
    "claim_file",
    default=None,
    metavar="FILE",
    help="... or a ledger file (JSON/TOML, as dpkit ledger FILE reads): its exact μ-GDP.",
)
@click.option("--trials", type=NUMBER, default=100_000, show_default=True, help="Runs per dataset.")
@click.option("--confidence", type=NUMBER, default=0.95, show_default=True)
@click.option(
    "--attack",
    default="auto",
    show_default=True,
    help="auto (fit every attack, choose one on a held-out split) | lr (Gaussian likelihood ratio) | "
    "learned (logistic) | density-ratio | atoms | boosting | histogram | FILE.py:SCORE; "
    "ALGORITHM form: white-box | learned.",
)
@click.option("--executor", type=click.Choice(("local", "processes", "dask")), default="local", show_default=True)
@click.option("--workers", type=NUMBER, default=None, help="Process-pool or local Dask cluster size.")
@click.option("--scheduler", default=None, help="Dask scheduler address (--executor dask; default: a local cluster).")
@click.option("--seed", type=NUMBER, default=0, show_default=True)
@click.option("--chunk-size", type=NUMBER, default=100_000, show_default=True, help="Runs per task.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def audit(
    ctx: click.Context,
    algorithm: str | None,
    target: str | None,
    neighbours: str | None,
    sigma: str,
    observer: str | None,
    runs: float | None,
    episodes: float | None,
    position: str,
    epsilon: float | None,
    delta: float | None,
    mu: float | None,
    rho: float | None,
    rdp_orders: list[float] | None,
    rdp_values: list[float] | None,
    claim_file: str | None,
    trials: float,
    confidence: float,
    attack: str,
    executor: str,
    workers: float | None,
    scheduler: str | None,
    seed: float,
    chunk_size: float,
    as_json: bool,
) -> int:
    """Audit an RL algorithm (ALGORITHM) or a release function (--target, --neighbours).

    Exit status: 1 when the verdict is a violation (so an audit can gate CI), 0 when consistent or
    inconclusive, 2 for bad input.

    \b
    dpkit audit ALGORITHM [--sigma paper|tight|VALUE] [--observer …] [--runs N] [--episodes K]
    dpkit audit --target FILE.py:FN --neighbours FILE.py:PAIRS --epsilon E --delta D
    """
    if algorithm is not None:
        if target is not None or neighbours is not None:
            raise click.UsageError("give ALGORITHM, or --target and --neighbours, not both")
        refuse_options(ctx, _TARGET_ONLY, "an ALGORITHM audit")
        if ctx.get_parameter_source("attack") not in (ParameterSource.DEFAULT, None) and attack not in (
            "white-box",
            "learned",
            "lr",
        ):
            raise click.UsageError(f"--attack for an ALGORITHM audit must be white-box or learned, got {attack!r}")
        return _audit_algorithm(
            algorithm,
            sigma,
            observer,
            runs,
            episodes,
            position,
            epsilon,
            delta,
            confidence,
            "white-box" if attack == "auto" else attack,
            executor,
            workers,
            scheduler,
            seed,
            as_json,
        )
    if target is None or neighbours is None:
        raise click.UsageError("give ALGORITHM, or both --target and --neighbours")
    refuse_options(ctx, _ALGORITHM_ONLY, "a --target audit")
    claim = _target_claim(epsilon, delta, mu, rho, rdp_orders, rdp_values, claim_file)
    confidence = accountant.check_probability("confidence", confidence)
    runs = accountant.check_count("trials", trials)
    if runs > 10**9:
        raise ValueError(f"trials must be <= 1,000,000,000, got {runs:,}")
    chunk = accountant.check_count("chunk-size", chunk_size)
    seed_value = check_index("seed", seed)
    release = FileFunction("--target", target)
    pairs = _pairs(neighbours)
    chosen = _audit_attack(attack)
    name = {"local": "in-process"}.get(executor, executor)
    n_workers = None if workers is None else accountant.check_count("workers", workers)
    with (
        make_executor(name, workers=n_workers, scheduler=scheduler) as pool,
        progress_bar("auditing", 2 * runs * len(pairs)) as advance,
    ):
        try:
            result = audit_pairs(
                release,
                pairs,
                claim,
                alpha=round(1.0 - confidence, 12),
                attack=chosen,
                seed=seed_value,
                runs=runs,
                delta=delta if claim.kind != "dp" else None,
                executor=pool,
                chunk_size=chunk,
                progress=advance,
            )
        except (ValueError, TypeError):
            raise
        except Exception as err:  # the user's code raised: one line, no traceback
            raise ValueError(f"the audit failed in user code: {type(err).__name__}: {err}") from None
    best = result.strongest
    out = best.to_dict()
    out.update(verdict=result.verdict, pairs=len(pairs), strongest_pair=result.results.index(best))
    if as_json:
        emit_json(out)
    else:
        est = best.estimate
        reason = (
            ""
            if result.verdict != "inconclusive"
            else f" (power {format_number(best.power_ratio, 3)} of the claim < 0.5: more --trials)"
        )
        print_table(
            f"Audit of {target} against {claim.describe()}: {result.verdict}{reason}",
            ["", "value"],
            [
                ["ε lower bound (δ = " + format_number(est.delta) + ")", format_number(best.epsilon_lower, 6)],
                ["claimed ε at that δ", format_number(best.claimed_epsilon, 6)],
                ["μ lower bound", format_number(best.mu_lower, 6)],
                [
                    "μ estimate [interval]",
                    f"{format_number(est.mu_estimate, 6)} [{format_number(est.mu_interval[0], 6)}, "
                    f"{format_number(est.mu_interval[1], 6)}]",
                ],
                ["claimed μ", format_number(best.claimed_mu, 6)],
                ["δ lower bound at the claimed ε", format_number(best.judgement.delta_lower, 6)],
                [
                    "power (bound an ideal attack certifies at the claim) / ratio",
                    f"{format_number(best.power, 6)} / {format_number(best.power_ratio, 4)}",
                ],
                ["attack", best.attack],
                ["FPR / FNR", f"{format_number(est.fpr, 4)} / {format_number(est.fnr, 4)}"],
                ["trials per dataset, pairs", f"{runs}, {len(pairs)}"],
                ["confidence", format_number(confidence)],
            ],
        )
    return 1 if result.verdict == "violation" else 0


def _audit_algorithm(
    algorithm: str,
    sigma: str,
    observer: str | None,
    runs: float | None,
    episodes: float | None,
    position: str,
    epsilon: float | None,
    delta: float | None,
    confidence: float,
    attack: str,
    executor: str,
    workers: float | None,
    scheduler: str | None,
    seed: float,
    as_json: bool,
) -> int:
    from dpkit.audits.rl import OBSERVERS, RL_ATTACKS, audit_setting, default_setting

    check_choice("ALGORITHM", algorithm, tuple(OBSERVERS))
    attack = "white-box" if attack == "lr" else attack
    check_choice("attack", attack, RL_ATTACKS)
    setting = default_setting(
        algorithm,
        sigma=sigma_choice(sigma),
        observer=observer,
        position=position,
        episodes=None if episodes is None else accountant.check_count("episodes", episodes),
        epsilon=epsilon,
        delta=delta,
    )
    n_runs = 4000 if runs is None else accountant.check_count("runs", runs)
    confidence = accountant.check_probability("confidence", confidence)
    name = {"local": "in-process"}.get(executor, executor)
    n_workers = None if workers is None else accountant.check_count("workers", workers)
    with (
        make_executor(name, workers=n_workers, scheduler=scheduler) as pool,
        progress_bar(f"auditing {algorithm}", 2 * n_runs) as advance,
    ):
        result = audit_setting(
            setting,
            runs=n_runs,
            seed=check_index("seed", seed),
            attack=attack,
            alpha=round(1.0 - confidence, 12),
            executor=pool,
            progress=advance,
        )
    out = result.to_dict()
    exit_code = 1 if result.verdict == "violation" else 0
    if as_json:
        emit_json(out)
        return exit_code
    closed = (
        ""
        if result.paper_epsilon_closed_form is None
        else f" (paper's closed form ε(δ) = {format_number(result.paper_epsilon_closed_form, 6)})"
    )
    print_table(
        f"Audit of {algorithm} ({setting.observer} observer, {out['attack']} attack): {result.verdict}",
        ["", "value"],
        [
            [
                "claimed ε (target) at δ = " + format_number(setting.delta),
                format_number(result.claimed_epsilon, 6) + closed,
            ],
            ["σ used", ", ".join(f"{k}: {format_number(v, 6)}" for k, v in result.sigmas.items())],
            [
                "σ the claim needs (tight)",
                ", ".join(f"{k}: {format_number(v, 6)}" for k, v in result.sigmas_claim.items()),
            ],
            [
                "exact ε / μ of the declared releases",
                f"{format_number(result.exact_epsilon, 6)} / {format_number(result.exact_mu, 6)}",
            ],
            [
                "exact μ of the canary pair (reach)",
                f"{format_number(result.pair_mu, 6)} ({format_number(result.reach, 4)})",
            ],
            ["μ the declaration allows this pair (Δ capped)", format_number(result.pair_mu_allowed, 6)],
            ["audited ε lower bound", format_number(result.epsilon_lower, 6)],
            [
                "audited μ lower bound (÷ pair μ)",
                f"{format_number(result.mu_lower, 6)} ({format_number(result.efficiency, 4)})",
            ],
            [
                "power / ratio to the allowance",
                f"{format_number(result.audit.power, 6)} / {format_number(result.audit.power_ratio, 4)}",
            ],
            ["verdict vs declaration / vs paper claim", f"{result.verdict} / {result.claim_verdict}"],
            ["runs per dataset, episodes, position", f"{n_runs}, {setting.episodes}, {setting.position}"],
            ["relation", setting.relation.replace("_", "-")],
            ["time", f"{result.seconds:.1f} s"],
        ],
    )
    return exit_code
