"""Speed of the RL algorithms, and how to keep Σ⁻¹ up to date.

    python bench/speed.py [--episodes K] [--skip-inverse] [--skip-algorithms]

Part 1 — Σ⁻¹ after a rank-one update, at d = 50 and d = 200, for a stack of H = 10 matrices
(one per step, as the algorithms hold them). Each update adds φφᵀ to Σ; afterwards the
algorithm needs ‖φ(s,a)‖_{Σ⁻¹} for M = 10 feature vectors. Compared per update:

* ``inv``            — np.linalg.inv of the whole stack from scratch, then quadratic forms;
* ``cholesky``       — np.linalg.cholesky from scratch and one triangular solve per stack;
* ``sherman-morrison`` — the O(d²) rank-one update of the inverse.

Under local DP the server's update is φφᵀ + W with W a full symmetric noise matrix, so only a
refresh (inv or Cholesky) applies; the rank-one update is for the non-private algorithms. The
drift of Sherman–Morrison after many updates (against a fresh inverse) is printed too.

Part 2 — episodes per second of every algorithm at S = 5 (d = S²A = 50), H = 10, and the time of
K = 10 000 episodes of LDP-UCRL-VTR (the issue's target: under 60 s on 2 cores).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _time(fn, reps: int) -> float:  # type: ignore[no-untyped-def]
    fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def inverse_benchmark(d: int, stack: int = 10, features: int = 10, reps: int = 200, seed: int = 0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((stack, 4 * d, d)) / np.sqrt(d)
    sigma = np.eye(d) + np.einsum("hni,hnj->hij", x, x)
    inv = np.linalg.inv(sigma)
    phi = rng.standard_normal((stack, d)) / np.sqrt(d)
    feats = rng.standard_normal((stack, features, d)) / np.sqrt(d)

    def with_inv() -> np.ndarray:
        s = sigma + phi[:, :, None] * phi[:, None, :]
        s_inv = np.linalg.inv(s)
        return np.einsum("hmi,hmi->hm", feats @ s_inv, feats)

    def with_cholesky() -> np.ndarray:
        s = sigma + phi[:, :, None] * phi[:, None, :]
        chol = np.linalg.cholesky(s)
        y = np.linalg.solve(chol, np.swapaxes(feats, 1, 2))  # L y = φ  ⇒ ‖y‖² = φᵀΣ⁻¹φ
        return np.einsum("him,him->hm", y, y)

    def with_sherman_morrison() -> np.ndarray:
        v = (inv @ phi[:, :, None])[:, :, 0]
        denom = 1.0 + np.einsum("hi,hi->h", phi, v)
        s_inv = inv - v[:, :, None] * (v / denom[:, None])[:, None, :]
        return np.einsum("hmi,hmi->hm", feats @ s_inv, feats)

    ref = with_inv()
    for f in (with_cholesky, with_sherman_morrison):
        assert np.allclose(f(), ref, rtol=1e-8), f.__name__
    out = {
        "inv": _time(with_inv, reps),
        "cholesky": _time(with_cholesky, reps),
        "sherman-morrison": _time(with_sherman_morrison, reps),
    }
    # Drift: 10 000 Sherman–Morrison updates against a fresh inverse.
    s, s_inv = np.eye(d), np.eye(d)
    for _ in range(10_000):
        p = rng.standard_normal(d) / np.sqrt(d)
        s += np.outer(p, p)
        v = s_inv @ p
        s_inv -= np.outer(v, v) / (1.0 + p @ v)
    fresh = np.linalg.inv(s)
    out["drift"] = float(np.abs(s_inv - fresh).max() / np.abs(fresh).max())
    return out


def algorithm_speed(episodes: int) -> list[tuple[str, float, float]]:
    from dpkit.algorithms.simulation import Experiment, simulate

    rows = []
    settings = [
        ("ucrl-vtr", {}),
        ("ldp-ucrl-vtr", {"epsilon": 1.0, "delta": 0.1}),
        ("linopt-vi", {}),
        ("linopt-po", {}),
        ("private-linopt-vi", {"epsilon": 1.0, "delta": 0.1}),
        ("private-linopt-po", {"epsilon": 1.0, "delta": 0.1}),
        ("rlsvi", {}),
    ]
    for name, kw in settings:
        e = Experiment(name, "riverswim", episodes, states=5, **kw)  # type: ignore[arg-type]
        t0 = time.perf_counter()
        simulate(e, 0)
        dt = time.perf_counter() - t0
        rows.append((name, episodes / dt, dt))
    for name, kw in (("ofu-rl", {}), ("private-ofu-rl", {"epsilon": 1.0, "delta": 0.1})):
        e = Experiment(name, "lq", episodes, state_dim=2, control_dim=1, **kw)  # type: ignore[arg-type]
        t0 = time.perf_counter()
        simulate(e, 0)
        dt = time.perf_counter() - t0
        rows.append((name, episodes / dt, dt))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000, help="episodes per algorithm for the speed table")
    parser.add_argument("--full", type=int, default=10_000, help="K for the LDP-UCRL-VTR target run (0 to skip)")
    parser.add_argument("--skip-inverse", action="store_true")
    parser.add_argument("--skip-algorithms", action="store_true")
    args = parser.parse_args()
    if not args.skip_inverse:
        print("Σ⁻¹ after a rank-one update, stack of H = 10, 10 feature norms per matrix (µs per update)")
        print(
            f"{'d':>5} {'inv':>10} {'cholesky':>10} {'sh-morrison':>12} {'inv/SM':>8} {'chol/SM':>8} {'SM drift':>10}"
        )
        for d in (50, 200):
            r = inverse_benchmark(d, reps=200 if d == 50 else 30)
            print(
                f"{d:>5} {r['inv'] * 1e6:>10.1f} {r['cholesky'] * 1e6:>10.1f} {r['sherman-morrison'] * 1e6:>12.1f} "
                f"{r['inv'] / r['sherman-morrison']:>8.1f} {r['cholesky'] / r['sherman-morrison']:>8.1f} "
                f"{r['drift']:>10.2e}"
            )
    if not args.skip_algorithms:
        print(
            f"\nEpisodes per second, RiverSwim S = 5 (d = 50), H = 10 (LQ: n = 2, d = 1, H = 10), K = {args.episodes}"
        )
        for name, rate, dt in algorithm_speed(args.episodes):
            print(f"{name:>20} {rate:>10.0f} /s   ({dt:.2f} s)")
        if args.full:
            from dpkit.algorithms.simulation import Experiment, simulate

            e = Experiment("ldp-ucrl-vtr", "riverswim", args.full, states=5, epsilon=1.0, delta=0.1)
            t0 = time.perf_counter()
            simulate(e, 0)
            dt = time.perf_counter() - t0
            print(f"\nLDP-UCRL-VTR, K = {args.full}, S = 5, H = 10: {dt:.1f} s (target < 60 s)")


if __name__ == "__main__":
    main()
