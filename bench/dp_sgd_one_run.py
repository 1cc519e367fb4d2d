"""Benchmark: the one-run audit of the reference DP-SGD — the one-run ε lower bound beside the accountant's ε, the zoo's
detections and the correct loop's false alarms.

Run (from the repository root)::

    .venv/bin/python bench/dp_sgd_one_run.py table --canaries 1000 4000 --seeds 3
    .venv/bin/python bench/dp_sgd_one_run.py zoo --seeds 10
    .venv/bin/python bench/dp_sgd_one_run.py false-alarms --seeds 100
    .venv/bin/python bench/dp_sgd_one_run.py ceiling --canaries 1000 2000 4000 --seeds 41

``table``: white-box, every iterate, σ calibrated to ε ∈ {1, 2, 4} at δ = 10⁻⁵ (q = 0.5, T = 20). ``zoo``: each bug
of :class:`dpkit.audits.dp_sgd_reference.DpSgdBug` at ε = 2 (q = 0.25, T = 40), 1,000 canaries. ``false-alarms``:
the correct loop there. ``ceiling``: what any one-run audit of this kind could certify — ideal runs at the claim
(the table's schedule) scored by the Neyman–Pearson likelihood ratio (the most powerful test of each canary's coin),
the guess count chosen *after* seeing the run (an oracle: no fixed count does better on that run) and the best count
fixed before it (the one whose median bound is highest); prints the median bound ÷ ε and the share of runs whose
bound reaches half of ε. Prints wall and CPU seconds per audit
(the machine is shared: wall time is inflated).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import optimize

from dpkit.audits.dp_sgd_audit import _right, audit_training_run
from dpkit.audits.dp_sgd_claim import DpSgdClaim
from dpkit.audits.dp_sgd_reference import DP_SGD_BUGS, DpSgdBug, ReferenceDpSgd, make_task

#: The schedules: the acceptance table's, and the zoo's (q small enough for the 4× rate bug).
TABLE_SCHEDULE = (0.5, 20)
ZOO_SCHEDULE = (0.25, 40)


def sigma_for(epsilon: float, sampling_rate: float, steps: int) -> float:
    """The noise multiplier at which the accountant's ε at δ = 1e-5 is ``epsilon`` (to 1e-4 in σ, from above)."""
    gap = lambda s: DpSgdClaim(s, sampling_rate, steps).epsilon_at(1e-5) - epsilon  # noqa: E731
    return float(optimize.brentq(gap, 0.8, 50.0, xtol=1e-4)) + 1e-4


def _audit(bug: DpSgdBug, eps: float, schedule: tuple[float, int], m: int, seed: int) -> tuple[object, float, float]:
    q, steps = schedule
    sigma = sigma_for(eps, q, steps)
    d = 2048 if m <= 2048 else 4096
    data = make_task(features=d, rng=np.random.default_rng(0))
    wall, cpu = time.perf_counter(), time.process_time()
    result = audit_training_run(
        ReferenceDpSgd(sigma, q, steps, bug=bug), claim=DpSgdClaim(sigma, q, steps), parameters=d, dataset=data,
        canaries=m, seed=seed,
    )  # fmt: skip
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("table", "zoo", "false-alarms", "ceiling"))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--canaries", type=int, nargs="+", default=[1000])
    args = parser.parse_args(argv)
    if args.what == "ceiling":
        return _ceiling(args.canaries, args.seeds)
    if args.what == "table":
        print("M      ε(accountant)  verdicts (seeds)            one-run ε lower bound (DP-SGD curves / any)   power")
        for m in args.canaries:
            for eps in (1.0, 2.0, 4.0):
                runs = [_audit(DpSgdBug.NONE, eps, TABLE_SCHEDULE, m, s) for s in range(args.seeds)]
                res = [r for r, _, _ in runs]
                print(
                    f"{m:<6} {res[0].claimed_epsilon:<14.4f} {' '.join(r.verdict for r in res):<28}"  # type: ignore[attr-defined]
                    f" {' '.join(f'{r.epsilon_lower:.2f}/{r.epsilon_lower_any:.2f}' for r in res):<44}"  # type: ignore[attr-defined]
                    f" {res[0].power:.2f}   wall {np.mean([w for _, w, _ in runs]):.1f} s,"  # type: ignore[attr-defined]
                    f" cpu {np.mean([c for _, _, c in runs]):.1f} s per audit",
                    flush=True,
                )
        return 0
    bugs = DP_SGD_BUGS if args.what == "zoo" else (DpSgdBug.NONE,)
    for bug in bugs:
        for m in args.canaries:
            runs = [_audit(bug, 2.0, ZOO_SCHEDULE, m, s) for s in range(args.seeds)]
            hits = sum(r.verdict == "violation" for r, _, _ in runs)  # type: ignore[attr-defined]
            print(
                f"{bug.value:<22} M = {m}: violation in {hits} of {args.seeds} seeds; wall "
                f"{np.mean([w for _, w, _ in runs]):.1f} s, cpu {np.mean([c for _, _, c in runs]):.1f} s per audit",
                flush=True,
            )
    return 0


#: The guess counts the oracle tries, as shares of the canaries (finer than the audit's own grid).
ORACLE_SHARES = (0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)


def _likelihood_ratio_scores(x: np.ndarray, *, sampling_rate: float, noise: float) -> np.ndarray:
    """Σ_t log(1 − q + q·exp((x_t − ½)/σ²)): the log-likelihood ratio of "in" against "out" of each canary's
    alignments (C = 1), the most powerful test of its coin (Neyman–Pearson)."""
    return np.log1p(sampling_rate * np.expm1((x - 0.5) / noise**2)).sum(axis=1)


def _ceiling(canaries: list[int], runs: int) -> int:
    """Print, over ``runs`` ideal runs at the claim, what the best one-run audit of this kind certifies: the oracle
    (guess count chosen after the run) and the best fixed count (chosen knowing the claim, before the run)."""
    q, steps = TABLE_SCHEDULE
    alpha = 0.05 * 0.9  # the alignment test's share of α, as in the audit
    print(f"ideal runs at the claim (q = {q}, T = {steps}), likelihood-ratio scores; bound ÷ accountant's ε")
    print("M      ε(accountant)  oracle: median [min, max]  reach ½ ε   best fixed count: r  median  reach ½ ε   cpu s")
    for m in canaries:
        counts = sorted({2 * max(1, int(s * m / 2)) for s in ORACLE_SHARES})
        for eps in (1.0, 2.0, 4.0):
            cpu = time.process_time()
            sigma = sigma_for(eps, q, steps)
            claim = DpSgdClaim(sigma, q, steps)
            target = claim.epsilon_at(1e-5)
            rng = np.random.default_rng(20240 + m)
            ratios = np.empty((runs, len(counts)))
            for i in range(runs):
                coins = rng.integers(0, 2, m)
                x = (rng.random((m, steps)) < q) * coins[:, None] + sigma * rng.standard_normal((m, steps))
                scores = _likelihood_ratio_scores(x, sampling_rate=q, noise=sigma)
                ratios[i] = [
                    claim.epsilon_lower(
                        canaries=m, guesses=r, correct=_right(coins, scores, r), alpha=alpha, delta=1e-5
                    )
                    / target
                    for r in counts
                ]
            best = ratios.max(axis=1)
            j = int(np.argmax(np.median(ratios, axis=0)))
            fixed = ratios[:, j]
            print(
                f"{m:<6} {target:<14.4f} {np.median(best):.3f} [{best.min():.3f}, {best.max():.3f}]"
                f"{'':<6} {np.mean(best >= 0.5):.2f}{'':<8} {counts[j]:>20}  {np.median(fixed):.3f}"
                f"   {np.mean(fixed >= 0.5):.2f}{'':<8} {time.process_time() - cpu:.0f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
