"""Benchmark: what the best one-run audit could see of a binary-tree counter — an ideal attacker, not dpkit's.

Run (from the repository root)::

    .venv/bin/python bench/one_run_tree_ceiling.py               # K = 5,000 and 20,000 users, 10 seeds (≈ 1 min)
    .venv/bin/python bench/one_run_tree_ceiling.py --users 100000 --seeds 10 --json   # ≈ 6 min

A jointly private agent that publishes binary-tree counters before each episode puts user k in n_k released p-sums
(:func:`dpkit.accountant.tree.psums_per_item`); its declaration charges every user the most any user is in, m. At the
σ its claim needs, user k is μ·sqrt(n_k/m)-GDP — the typical user in about half of m. This benchmark gives every
user of one run a coin and an attacker that knows everything but the coins: the exact log-likelihood ratio of her
own releases, no other user's coin mixed in (what no real observer of one run has), for an implementation whose σ is
the claim's divided by ``factor``: 1 (correct), √2 (σ from the add/remove sensitivity where users are replaced: the
``WrongFormula`` twin of examples/jdp_agent.py) and sqrt(m/(m − 1)) (the tree accounted one level short:
``OneLevelShort``). Each run is judged against the claim as a one-run audit judges it
(:func:`dpkit.audits.one_run.judge_one_run`, guesses designed for the claim itself — the most favourable design).
The table gives, per claim μ and K, how many of the seeds were a violation and the median μ lower bound: if even this
attacker cannot call the twins violations, no one-run audit of the agent can, and the many-run audit (one user
changed at the worst position) is the one that sees them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np


def ceiling(users: int, mu: float, factor: float, seed: int, *, alpha: float = 0.05, delta: float = 1e-5) -> tuple:
    """One ideal one-run audit: (verdict, μ lower bound, guesses, right)."""
    from dpkit.accountant.tree import psums_per_item
    from dpkit.audits.claims import Claim
    from dpkit.audits.one_run import design_guesses, judge_one_run

    n = np.asarray(psums_per_item(users, schedule="before-episode"), dtype=float)
    mu_k = factor * mu * np.sqrt(n / n.max())
    rng = np.random.default_rng(seed)
    coins = rng.integers(0, 2, users)
    llr = mu_k * (rng.standard_normal(users) + mu_k * (coins - 0.5))  # exact per user: N(±μ_k²/2, μ_k²)
    claim = Claim.gdp(mu)
    guesses = design_guesses(claim, canaries=users, alpha=alpha, delta=delta)
    judged = judge_one_run(coins, llr, claim, alpha=alpha, delta=delta, guesses=guesses, seed=seed)
    return judged.verdict, judged.mu_lower, judged.guesses, judged.correct


def main(argv: list[str] | None = None) -> int:
    from dpkit.accountant.tree import max_psums_per_item

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[5_000, 20_000])
    parser.add_argument("--mu", type=float, nargs="+", default=[1.0, 1.666])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    started = time.perf_counter()
    for users in args.users:
        m = max_psums_per_item(users, schedule="before-episode")
        for mu in args.mu:
            for twin, factor in (
                ("correct", 1.0),
                ("WrongFormula", math.sqrt(2)),
                ("OneLevelShort", math.sqrt(m / (m - 1))),
            ):
                runs = [ceiling(users, mu, factor, seed) for seed in range(args.seeds)]
                rows.append(
                    {
                        "users": users,
                        "m": m,
                        "claim_mu": mu,
                        "twin": twin,
                        "factor": factor,
                        "violations": sum(v == "violation" for v, *_ in runs),
                        "seeds": args.seeds,
                        "mu_lower_median": float(np.median([r[1] for r in runs])),
                        "guesses": runs[0][2],
                    }
                )
    if args.json:
        json.dump({"rows": rows, "seconds": time.perf_counter() - started}, sys.stdout, indent=2)
        print()
        return 0
    print("| users K | m | claim μ | implementation | μ × | violations (of seeds) | median μ lower | guesses |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['users']:,} | {r['m']} | {r['claim_mu']:g} | {r['twin']} | {r['factor']:.3f} | "
            f"{r['violations']} of {r['seeds']} | {r['mu_lower_median']:.3f} | {r['guesses']:,} |"
        )
    print(f"\n{time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
