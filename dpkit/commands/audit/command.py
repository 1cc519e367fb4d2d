"""``dpkit audit``: audit an RL algorithm against its declaration, a release function against a claim, or a DP-SGD run.

The forms take different options (:data:`FORMS`); an option of another form is refused with one ``error:`` line
before anything is loaded or run. The work is in :mod:`dpkit.commands.audit.rl`, :mod:`dpkit.commands.audit.target`
and :mod:`dpkit.commands.audit.training`, imported only when the form runs."""

from __future__ import annotations

from typing import Any

import click

from ..option_types import NUMBER, NUMBER_LIST, Duration
from ..refusals import given, refuse_options
from .defaults import AuditDefault
from .form_options import AlgorithmOptions, OneRunTargetOptions, TargetOptions, form_options
from .timing import DEFAULT_MAX_TIME, target_note
from .training_options import TRAIN_OPTIONS, training_form, training_options

#: Which options apply to which form of ``dpkit audit``: the options of one form only, and those of both.
FORMS: dict[str, tuple[str, ...]] = {
    "an ALGORITHM audit": ("agent", "sigma", "observer", "runs", "episodes", "position", "env", "horizon", "max_time"),
    "a --target audit": ("target", "neighbours", "canary_records", "dataset", "score", "mu", "rho", "rdp_orders")
    + ("rdp_values", "claim_file", "trials", "chunk_size"),
    "a --train audit": TRAIN_OPTIONS,
    "both": (
        "sequential",
        "algorithm",
        "one_run",
        "canaries",
        "epsilon",
        "delta",
        "confidence",
        "attack",
        "executor",
        "workers",
        "scheduler",
        "seed",
        "as_json",
    ),
}
#: The attacks of the ALGORITHM form (``lr`` is read as ``white-box``; ``auto`` chooses between it and ``learned``).
ALGORITHM_ATTACKS = ("auto", "white-box", "learned", "lr")


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
    "--agent",
    default=None,
    metavar="FILE.py:NAME",
    help="Instead of ALGORITHM: your own agent — an AlgorithmSpec, or an agent factory following one of the two "
    "protocols: local DP, the messages protocol (message_statistics; examples/ldp_agent.py), or joint DP, the "
    "billboard protocol (billboard_items; examples/jdp_agent.py).",
)
@click.option(
    "--one-run",
    is_flag=True,
    help="One run with many canaries (Steinke, Nasr & Jagielski 2023): every user of an ALGORITHM run a canary, or "
    "--canary-records in the dataset of a --target.",
)
@click.option(
    "--canaries", type=NUMBER, default=None, help="--one-run: canary users in the run (5000), or records (1000)."
)
@click.option(
    "--canary-records",
    default=None,
    metavar="FILE.py:NAME",
    help="--target --one-run: the canary records (a sequence, or a function of M returning M records).",
)
@click.option(
    "--dataset",
    default=None,
    metavar="FILE.py:NAME",
    help="--target --one-run: the records always in the dataset (default: none).",
)
@click.option(
    "--score",
    default=None,
    metavar="FILE.py:NAME",
    help="--target --one-run: score(output, record) -> float (default: their inner product).",
)
@click.option(
    "--sigma",
    default="tight",
    show_default=True,
    help="ALGORITHM form: paper | tight | optimal | a number (every release's σ).",
)
@click.option("--observer", default=None, help="ALGORITHM form: what the attacker sees (default: the white-box one).")
@click.option("--runs", type=NUMBER, default=None, help="ALGORITHM form: runs of the algorithm per dataset (4000).")
@click.option("--episodes", type=NUMBER, default=None, help="ALGORITHM form: users K (default per algorithm).")
@click.option(
    "--env",
    default=None,
    help="ALGORITHM form: audit on a user's tabular environment — gymnasium:ID[,key=value…] or FILE.py:NAME "
    "(default: the audit's own uniform MDP); the canaries keep their states and rewards.",
)
@click.option("--horizon", type=NUMBER, default=None, help="ALGORITHM form: the episodes' horizon H (with --env).")
@click.option(
    "--max-time",
    type=Duration(),
    default=DEFAULT_MAX_TIME,
    show_default=True,
    help="ALGORITHM form: refuse an audit expected (from a first batch of runs) to take longer: 90s, 10m, 2h, inf.",
)
@click.option(
    "--position",
    default=None,
    help="ALGORITHM form: where the changed user sits — first | middle | last | k=INDEX (0-based) | another name "
    "of the algorithm's positions (default: every position that matters, each at its share of α).",
)
@click.option(
    "--epsilon",
    type=NUMBER,
    default=None,
    help="Claimed ε (with --delta; δ = 0 is pure ε-DP); ALGORITHM form: the target the declaration is audited at "
    "(default: the algorithm's audit target — ε = 8, δ = 1e-5 for an --agent — said after the result) ...",
)
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
@click.option("--trials", type=NUMBER, default=AuditDefault("runs"), show_default=True, help="Runs per dataset.")
@click.option("--confidence", type=NUMBER, default=AuditDefault("confidence"), show_default=True)
@click.option(
    "--attack",
    type=str,
    default=AuditDefault("attack"),
    show_default=True,
    help="auto (fit every attack, choose one on a held-out split) | lr (Gaussian likelihood ratio) | "
    "learned (logistic) | density-ratio | atoms | boosting | histogram | FILE.py:SCORE; "
    "ALGORITHM form: auto (white-box or learned, chosen on a held-out split) | white-box | learned; "
    "with --one-run: white-box (the default there) | learned (learned on half the canaries, judged on the other) | "
    "auto (both, each at half of α).",
)
@click.option(
    "--sequential",
    is_flag=True,
    help="Stop as soon as the evidence is certain (an anytime-valid e-value test, docs/sequential.md); --trials "
    "(ALGORITHM: --runs) is then the fixed audit it stands in for (its budget: at most 1.3× that, about 1.1×).",
)
@click.option(
    "--executor",
    type=click.Choice(("auto", "local", "processes", "dask")),
    default=None,
    help="Where the runs go [default: auto (local until the runs are slow, then every core); an ALGORITHM "
    "registered in this process that cannot be pickled stays local].",
)
@click.option("--workers", type=NUMBER, default=None, help="Process-pool (or auto's pool) or local Dask cluster size.")
@click.option("--scheduler", default=None, help="Dask scheduler address (--executor dask; default: a local cluster).")
@click.option("--seed", type=NUMBER, default=AuditDefault("seed"), show_default=True)
@click.option("--chunk-size", type=NUMBER, default=AuditDefault("chunk_size"), show_default=True, help="Runs per task.")
@click.option("--json", "as_json", is_flag=True)
@training_options
@click.pass_context
def audit(ctx: click.Context, **params: Any) -> int:
    """Audit an RL algorithm (ALGORITHM) or a release function (--target, --neighbours).

    Exit status: 1 when the verdict is a violation (so an audit can gate CI), 0 when consistent or
    inconclusive, 2 for bad input.

    \b
    dpkit audit ALGORITHM [--sigma paper|tight|VALUE] [--observer …] [--runs N] [--episodes K]
    dpkit audit --agent FILE.py:NAME [the options of ALGORITHM]
    dpkit audit ALGORITHM|--agent FILE.py:NAME --one-run [--canaries M] [--sigma …] [--epsilon E --delta D]
    dpkit audit --target FILE.py:FN --neighbours FILE.py:PAIRS --epsilon E --delta D [--sequential]
    dpkit audit --target FILE.py:FN --one-run --canary-records FILE.py:NAME [--canaries M] --epsilon E --delta D
    dpkit audit --train FILE.py:NAME --noise-multiplier S --sampling-rate Q --steps T [--parameters P] [--canaries M]
    """
    if params["train"] is not None:
        return training_form(ctx, params)
    algorithm, target, neighbours = params["algorithm"], params["target"], params["neighbours"]
    if params["agent"] is not None:
        if algorithm is not None:
            raise click.UsageError("give ALGORITHM or --agent, not both")
        from .rl import register_agent_file

        algorithm = params["algorithm"] = register_agent_file(params["agent"])
    if algorithm is not None and (target is not None or neighbours is not None):
        raise click.UsageError("give ALGORITHM, or --target and --neighbours, not both")
    if algorithm is None and target is None:
        raise click.UsageError("give ALGORITHM, or --target with --neighbours (or with --one-run)")
    if algorithm is None and neighbours is None and not params["one_run"]:
        raise click.UsageError("give --neighbours with --target (or --one-run with --canary-records)")
    form = "an ALGORITHM audit" if algorithm is not None else "a --target audit"
    refuse_options(ctx, [name for other, names in FORMS.items() if other not in (form, "both") for name in names], form)
    if params["executor"] is None:
        params["executor"] = "local" if params["one_run"] else "auto"
    _refuse_executor_options(ctx, executor=str(params["executor"]))
    if algorithm is not None:
        if given(ctx, "attack") and params["attack"] not in ALGORITHM_ATTACKS:
            raise click.UsageError(
                f"--attack for an ALGORITHM audit must be auto, white-box or learned, got {params['attack']!r}"
            )
        if params["one_run"]:
            many_run_only = (
                "observer",
                "runs",
                "episodes",
                "position",
                "max_time",
                "sequential",
                "executor",
                "workers",
                "scheduler",
            )
            refuse_options(ctx, many_run_only, "a --one-run audit (one run, every user a canary)")
            from .one_run import audit_one_run

            attack = {"lr": "white-box"}.get(params["attack"], params["attack"]) if given(ctx, "attack") else None
            code = audit_one_run(
                **{k: params[k] for k in ("algorithm", "canaries", "sigma", "epsilon", "delta", "confidence", "seed")},
                attack=attack or "white-box",
                as_json=params["as_json"],
            )
            return _said_target(code, algorithm, params)
        refuse_options(ctx, ("canaries",), "a many-run audit (add --one-run)")
        from .rl import audit_algorithm

        code = audit_algorithm(form_options(AlgorithmOptions, params))
        return _said_target(code, algorithm, params)
    one_run_only = ("canary_records", "dataset", "score", "canaries")
    if params["one_run"]:
        target_many_run = (
            "neighbours",
            "trials",
            "attack",
            "executor",
            "workers",
            "scheduler",
            "chunk_size",
            "sequential",
        )
        refuse_options(ctx, target_many_run, "a --one-run audit of a --target (one run, canary records)")
        from .one_run_target import audit_one_run_target

        return audit_one_run_target(form_options(OneRunTargetOptions, params))
    refuse_options(ctx, one_run_only, "a many-run audit (add --one-run)")
    from .target import audit_target

    return audit_target(form_options(TargetOptions, params))


def _said_target(code: int, algorithm: str, params: dict[str, Any]) -> int:
    """After an RL audit's tables, the target (ε, δ) dpkit chose where the user set none (not with --json: its
    object holds the target); returns the audit's exit status."""
    note = None if params["as_json"] else target_note(algorithm, params["epsilon"], params["delta"])
    if note is not None:
        click.echo(note)
    return code


def _refuse_executor_options(ctx: click.Context, *, executor: str) -> None:
    """``--workers`` sizes a process pool or a local Dask cluster; ``--scheduler`` names a Dask cluster."""
    if executor == "local":
        refuse_options(ctx, ("workers",), "--executor local (it runs in this process)")
    if executor != "dask":
        refuse_options(ctx, ("scheduler",), f"--executor {executor} (only to --executor dask)")
    elif given(ctx, "scheduler"):
        refuse_options(ctx, ("workers",), "a --scheduler's cluster (it has its own workers)")
