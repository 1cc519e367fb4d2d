"""Benchmark: one-run audits of a Gaussian sum — false alarms at the claim's σ, detections at half of it.

Run (from the repository root)::

    .venv/bin/python bench/one_run_target.py                 # 100 seeds, 1,000 canaries, ε = 2, 4, 8 at δ = 1e-5
    .venv/bin/python bench/one_run_target.py --seeds 200 --canaries 500 --epsilons 3 --json

The release is Σ of the records (clipped to the unit ball) + N(0, σ²I) in R^M, the M canaries the standard basis
(they do not interfere); σ is ``calibrate_sigma(ε, δ)`` — the claim is that Gaussian mechanism, i.e. its GDP
trade-off curve — or half of it. For each seed, one run (:func:`dpkit.audits.one_run.audit_one_run_target`). Prints,
per ε: the rate of ``violation`` at σ (false alarms; must be at most α = 5%) and at σ/2 (power), each with a 95%
Clopper–Pearson interval; the median μ and ε lower bounds; the guess count chosen; seconds per audit. Beside it,
the (ε, δ) theorem of Steinke et al. on the same guesses (Bonferroni-free, its best guess count chosen after the
fact — an optimistic reading of that analysis): how often its ε bound exceeds the claim at σ/2.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time

import numpy as np


def gaussian_sum(dataset: list, rng: np.random.Generator, n: int, *, dim: int, sigma: float) -> np.ndarray:
    total = np.zeros(dim)
    for x in dataset:
        x = np.asarray(x, dtype=float)
        total += x / max(1.0, float(np.linalg.norm(x)))
    return total + sigma * rng.standard_normal((n, dim))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--canaries", type=int, default=1000)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[2.0, 4.0, 8.0])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from scipy import stats

    from dpkit.accountant import calibrate_sigma
    from dpkit.audits.claims import Claim
    from dpkit.audits.one_run import audit_one_run_target
    from dpkit.audits.one_run_estimators import one_run_epsilon_lower

    def interval(k: int, n: int) -> list[float]:
        ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        return [float(ci.low), float(ci.high)]

    m = args.canaries
    canaries = list(np.eye(m))
    rows = []
    for eps in args.epsilons:
        sigma = calibrate_sigma(eps, args.delta).sigma
        claim = Claim.gaussian(sigma, 1.0)
        row: dict = {"epsilon": eps, "delta": args.delta, "canaries": m, "sigma": sigma, "claimed_mu": claim.mu}
        for label, factor in (("at_sigma", 1.0), ("at_half_sigma", 0.5)):
            release = functools.partial(gaussian_sum, dim=m, sigma=factor * sigma)
            verdicts, mus, epss, guesses, steinke, started = [], [], [], [], 0, time.perf_counter()
            for seed in range(args.seeds):
                r = audit_one_run_target(release, canaries=canaries, claim=claim, seed=seed, delta=args.delta)
                verdicts.append(r.verdict)
                mus.append(r.mu_lower)
                epss.append(r.epsilon_lower)
                guesses.append(r.guesses)
                order = np.argsort(r.scores, kind="stable")
                best = 0.0
                for share in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5):
                    k = max(1, int(share * m) // 2)
                    v = int(r.coins[order[-k:]].sum() + (1 - r.coins[order[:k]]).sum())
                    best = max(best, one_run_epsilon_lower(canaries=m, guesses=2 * k, correct=v, delta=args.delta))
                steinke += best > eps
            n_v = verdicts.count("violation")
            row[label] = {
                "violations": n_v,
                "rate": n_v / args.seeds,
                "rate_interval": interval(n_v, args.seeds),
                "verdicts": {v: verdicts.count(v) for v in sorted(set(verdicts))},
                "median_mu_lower": statistics.median(mus),
                "median_epsilon_lower": statistics.median(epss),
                "guesses": statistics.median(guesses),
                "steinke_epsilon_above_claim": steinke,
                "seconds_per_audit": (time.perf_counter() - started) / args.seeds,
            }
        rows.append(row)
    if args.json:
        json.dump({"seeds": args.seeds, "rows": rows}, sys.stdout, indent=2)
        print()
        return 0
    print(f"one-run audits of a Gaussian sum, {m} canaries, {args.seeds} seeds, claim = the Gaussian at σ(ε, δ)")
    print(
        "ε      false alarms at σ (95% CI)     violations at σ/2 (95% CI)   μ↓ / ε↓ at σ/2 (median)  guesses  "
        "Steinke ε↓ > ε at σ/2   s/audit"
    )
    for row in rows:
        a, b = row["at_sigma"], row["at_half_sigma"]
        print(
            f"{row['epsilon']:<6g} {a['violations']:>3}/{args.seeds} [{a['rate_interval'][0]:.3f}, "
            f"{a['rate_interval'][1]:.3f}]        {b['violations']:>3}/{args.seeds} [{b['rate_interval'][0]:.3f}, "
            f"{b['rate_interval'][1]:.3f}]       {b['median_mu_lower']:.3f} / {b['median_epsilon_lower']:.3f}"
            f"      {b['guesses']:>6g}   {b['steinke_epsilon_above_claim']:>3}/{args.seeds}"
            f"                  {0.5 * (a['seconds_per_audit'] + b['seconds_per_audit']):.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
