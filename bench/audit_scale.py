"""Benchmark: audits that scale — trials per second of every attack and peak memory at 10⁶ and 10⁷ trials.

Run (from the repository root)::

    .venv/bin/python bench/audit_scale.py            # 10⁶ and 10⁷ trials per dataset (several minutes)
    .venv/bin/python bench/audit_scale.py --quick    # 10⁵ and 10⁶
    .venv/bin/python bench/audit_scale.py --json

The target is a 10-dimensional Gaussian mechanism (mean shift 1/σ·e₁, σ = 3.7306: (1, 1e-5)-DP) audited
against (1, 1e-5) with each attack named by ``dpkit.audits.ATTACK_NAMES`` that needs no parameters, and
``auto``. Each (attack, trials) runs in a fresh subprocess, which reports its wall time and its peak
resident memory (``resource.getrusage``), so the figures do not leak into each other. The audit
streams: only the training split (at most ``dpkit.audits.engine.TRAIN_CAP`` runs per dataset) is held as
outputs; the selection and evaluation splits come back as scores, chunk by chunk.
Goal: 10⁷ trials under 2 GB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

SIGMA = 3.730631635
DIM = 10
ATTACKS = ("gaussian-lr-fitted", "logistic", "density-ratio", "atoms", "boosting", "auto")  # histogram: 1-2 values only


def gaussian10(ds: float, rng: np.random.Generator, n: int) -> np.ndarray:
    out = SIGMA * rng.standard_normal((n, DIM))
    out[:, 0] += ds
    return out


def _one(attack: str, trials: int) -> dict[str, object]:
    from dpkit.audits import Claim, audit_pair

    started = time.perf_counter()
    r = audit_pair(gaussian10, 0.0, 1.0, Claim.dp(1.0, 1e-5), attack=attack, runs=trials, seed=1, chunk_size=250_000)
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return {
        "attack": attack,
        "chosen": r.attack,
        "trials": trials,
        "seconds": seconds,
        "trials_per_second": 2 * trials / seconds,
        "peak_mb": peak_mb,
        "epsilon_lower": r.epsilon_lower,
        "mu_lower": r.mu_lower,
        "verdict": r.verdict,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--one", nargs=2, metavar=("ATTACK", "TRIALS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(_one(args.one[0], int(args.one[1]))))
        return 0
    sizes = (10**5, 10**6) if args.quick else (10**6, 10**7)
    rows = []
    for trials in sizes:
        for attack in ATTACKS:
            out = subprocess.run(
                [sys.executable, __file__, "--one", attack, str(trials)], capture_output=True, text=True, check=True
            )
            rows.append(json.loads(out.stdout))
            print(f"  {attack} at {trials:,}: {rows[-1]['seconds']:.1f} s", file=sys.stderr)
    if args.json:
        print(json.dumps({"dim": DIM, "sigma": SIGMA, "rows": rows}))
        return 0
    print(f"{DIM}-dimensional Gaussian target (σ = {SIGMA}), claim (1, 1e-5), 95% confidence, in-process")
    print(
        f"{'attack':>20} {'chosen':>20} {'trials':>12} {'time':>8} {'trials/s':>12} {'peak MB':>8} "
        f"{'ε lower':>8} {'μ lower':>8} verdict"
    )
    for r in rows:
        print(
            f"{r['attack']:>20} {r['chosen']:>20} {r['trials']:>12,} {r['seconds']:>7.1f}s "
            f"{r['trials_per_second']:>12,.0f} {r['peak_mb']:>8.0f} {r['epsilon_lower']:>8.3f} "
            f"{r['mu_lower']:>8.3f} {r['verdict']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
