"""One-run audits of RL agents whose privacy model is local (Steinke, Nasr & Jagielski 2023, "Privacy auditing
with one (1) training run").

Every user of one run is a canary: user k is canary 1 with probability ½ (her coin), else canary 0 — the two
canaries of the algorithm's audit world (:class:`~dpkit.algorithms.spec.AuditSpec`), which differ as much as the
assumptions allow (and beyond them, where only the agent's own clipping keeps her in range). Changing one coin
changes one user: a replace-one neighbour, so an agent that is (ε, δ)-DP per user under replace-one meets the
theorem's premise. The observer is the local-DP one (every user's messages); each user's score is the exact
log-likelihood ratio of her messages between the two canaries, given the plan she was served (the white-box
reading of :mod:`dpkit.audits.rl`, computed from the agent's ``message_statistics``, never from its noise). The
auditor guesses "canary 1" for the k highest scores and "canary 0" for the k lowest, abstains on the rest, and
the number of correct guesses gives the ε lower bound of
:func:`~dpkit.audits.estimators.one_run_epsilon_lower`.

Agents that follow the messages protocol (:func:`dpkit.algorithms.observers.observe_messages`) can be audited so:
LDP-UCRL-VTR and a user's own local-DP agent. A joint-DP billboard mixes every user into every release, so a
per-user score there needs the others' coins; it is not done here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_count, check_index
from dpkit.algorithms.episodes import play_episode
from dpkit.algorithms.observers import flat

from .estimators import one_run_epsilon_lower
from .rl import RlSetting, _claim_sigmas, _make_agent, _world, default_setting

__all__ = ["MAX_CANARIES", "GUESS_SHARES", "OneRunScores", "RlOneRunResult", "one_run_scores", "audit_one_run"]

#: The most canary users one run may hold.
MAX_CANARIES = 1_000_000


@dataclass(frozen=True)
class OneRunScores:
    """One run's coins (1: canary 1) and each user's log-likelihood ratio of canary 1 against canary 0."""

    setting: RlSetting
    seed: int
    coins: np.ndarray
    scores: np.ndarray
    seconds: float


def _llr(messages: Any, m0: Any, m1: Any, agent: Any) -> float:
    """log p(messages | canary 1) − log p(messages | canary 0), the messages Gaussian around the statistics with
    the σ the agent uses (symmetric releases read on their upper triangle, where the noise is independent)."""
    total = 0.0
    for release in agent.declaration.releases:
        name, sigma = release.name, float(agent.sigmas[release.name])
        sym = release.noise == "symmetric"
        x = flat(np.asarray(messages[name], dtype=float), sym, 0)
        a0 = flat(np.asarray(m0[name], dtype=float), sym, 0)
        a1 = flat(np.asarray(m1[name], dtype=float), sym, 0)
        d = a1 - a0
        total += float((x - a0) @ d - 0.5 * (d @ d)) / sigma**2
    return total


def one_run_scores(
    algorithm: str,
    *,
    canaries: int,
    seed: int = 0,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: str | float = "tight",
    implementation: Callable[..., Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> OneRunScores:
    """One run of ``algorithm`` (a registered or :func:`~dpkit.audits.rl.register_agent`-ed agent of the messages
    protocol) on ``canaries`` canary users with independent fair coins; each user's score. ``implementation``
    replaces the agent factory (the claim stays the registered declaration's)."""
    m = check_count("canaries", canaries)
    if m > MAX_CANARIES:
        raise ValueError(f"canaries must be <= {MAX_CANARIES:,} (each is a user of the run), got {m:,}")
    if m < 2:
        raise ValueError(f"canaries must be >= 2, got {m}")
    seed = check_index("seed", seed)
    base = default_setting(algorithm, epsilon=epsilon, delta=delta, sigma=sigma)
    setting = replace(base, episodes=m, implementation=implementation)
    started = time.perf_counter()
    env, _, pair = _world(setting)
    coins_rng, agent_rng, policy_rng = np.random.default_rng(seed).spawn(3)
    coins = coins_rng.integers(0, 2, m)
    agent = _make_agent(setting, agent_rng, env)
    if not hasattr(agent, "message_statistics"):
        raise TypeError(
            f"{algorithm}'s agent has no message_statistics: one-run audits read a local-DP agent's messages"
        )
    _claim_sigmas(setting)  # the registered declaration must be readable, at the audit's target
    scores = np.empty(m)
    for k in range(m):
        policy = np.asarray(agent.plan(k).policy)
        draws = policy_rng.random(env.horizon) if policy.ndim == 3 else None
        trajectories = [play_episode(env, policy, canary, draws) for canary in pair]
        m0, m1 = (agent.message_statistics(*t) for t in trajectories)
        messages = agent.update(k, *trajectories[int(coins[k])])
        scores[k] = _llr(messages, m0, m1, agent)
        if progress is not None:
            progress(1)
    return OneRunScores(setting, seed, coins, scores, time.perf_counter() - started)


@dataclass(frozen=True)
class RlOneRunResult:
    """A one-run audit: the guesses made, how many were right, the ε lower bound they certify (confidence
    1 − α, over the guess counts tried: Bonferroni), and the verdict against the claimed (ε, δ)."""

    scores: OneRunScores
    claimed_epsilon: float
    delta: float
    alpha: float
    guesses: int
    correct: int
    epsilon_lower: float
    power: float
    tried: tuple[tuple[int, int, float], ...]

    @property
    def verdict(self) -> str:
        if self.epsilon_lower > self.claimed_epsilon:
            return "violation"
        return "inconclusive" if self.power < 0.5 * self.claimed_epsilon else "consistent"

    @property
    def power_ratio(self) -> float:
        return self.power / self.claimed_epsilon

    def to_dict(self) -> dict[str, Any]:
        s = self.scores.setting
        return {
            "algorithm": s.algorithm,
            "observer": "messages",
            "mode": "one-run",
            "verdict": self.verdict,
            "claimed_epsilon": self.claimed_epsilon,
            "delta": self.delta,
            "epsilon_lower": self.epsilon_lower,
            "power": self.power,
            "power_ratio": self.power_ratio,
            "confidence": 1.0 - self.alpha,
            "canaries": int(self.scores.coins.shape[0]),
            "guesses": self.guesses,
            "correct": self.correct,
            "tried": [{"guesses": r, "correct": v, "epsilon_lower": e} for r, v, e in self.tried],
            "sigma": s.sigma if not isinstance(s.sigma, tuple) else dict(s.sigma),
            "sigmas_claim": dict(_claim_sigmas(s)),
            "seed": self.scores.seed,
            "seconds": self.scores.seconds,
            "relation": s.relation,
        }


#: The guess counts tried (each k: the k highest and the k lowest scores, 2k guesses), as shares of the canaries.
GUESS_SHARES: tuple[float, ...] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def audit_one_run(
    algorithm: str,
    *,
    canaries: int = 2000,
    seed: int = 0,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: str | float = "tight",
    alpha: float = 0.05,
    implementation: Callable[..., Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> RlOneRunResult:
    """One run, every user a canary (:func:`one_run_scores`), and the ε lower bound of Steinke et al. with
    abstention (:func:`dpkit.audits.estimators.one_run_epsilon_lower`) at the best of the guess counts
    :data:`GUESS_SHARES`, each tried at α/|shares| (Bonferroni: the bound holds for the one reported)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    scores = one_run_scores(
        algorithm,
        canaries=canaries,
        seed=seed,
        epsilon=epsilon,
        delta=delta,
        sigma=sigma,
        implementation=implementation,
        progress=progress,
    )
    m = scores.coins.shape[0]
    order = np.argsort(scores.scores, kind="stable")
    level = alpha / len(GUESS_SHARES)
    d = scores.setting.delta
    claimed = float(scores.setting.epsilon)
    tried = []
    for share in GUESS_SHARES:
        k = max(1, int(share * m) // 2)
        correct = int(scores.coins[order[-k:]].sum() + (1 - scores.coins[order[:k]]).sum())
        tried.append(
            (2 * k, correct, one_run_epsilon_lower(guesses=2 * k, correct=correct, canaries=m, delta=d, alpha=level))
        )
    r, v, eps = max(tried, key=lambda t: t[2])
    # power: the bound these guess counts would certify for an ideal mechanism exactly at the claim (each guess
    # right with probability e^ε/(1 + e^ε)), at the best guess count
    q = np.exp(claimed) / (1.0 + np.exp(claimed))
    power = max(
        one_run_epsilon_lower(guesses=g, correct=int(np.floor(g * q)), canaries=m, delta=d, alpha=level)
        for g, _, _ in tried
    )
    return RlOneRunResult(scores, claimed, d, alpha, r, v, eps, power, tuple(tried))
