"""One-run audits of RL agents (Steinke, Nasr & Jagielski 2023): every user of one run is a canary.

User k is canary 1 with probability ½ (her coin), else canary 0 — the two canaries of the algorithm's audit world;
changing one coin changes one user (a replace-one neighbour). Each user gets a score (the exact log-likelihood
ratio of her messages for a local-DP agent, or the algorithm's own ``one_run`` hook), and the right guesses on the
highest and lowest scores are judged against the claim's whole trade-off curve by
:func:`dpkit.audits.one_run.judge_one_run`. :func:`audit_one_run` is the audit; :func:`one_run_scores` the run. How
each kind of algorithm is scored: see docs/explanation/rl-audits.md ("One-run RL audits").
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpkit.accountant.declarations import informative_delta
from dpkit.accountant.gdp import gdp_epsilon
from dpkit.accountant.sensitivity import ReleaseNoise
from dpkit.accountant.validation import check_count, check_index, check_member, enum_values, shown_int
from dpkit.algorithms.episodes import play_episode

from ..claims import Claim
from ..one_run import OneRunResult, design_guesses, judge_one_run
from ..summary import SingleRun
from ..verdicts import Verdict
from .candidates import RlAttack
from .fixed import declared_mu
from .observers import OneRun, OneRunView, flat
from .psums import one_sigma
from .setting import (
    RlSetting,
    audit_hook,
    declared_sensitivities,
    default_setting,
    make_setting_agent,
    registered_declaration,
    setting_claim_sigmas,
    setting_world,
)

__all__ = [
    "MAX_CANARIES",
    "ONE_RUN_ATTACKS",
    "OneRunScores",
    "RlOneRunResult",
    "audit_one_run",
    "learned_one_run",
    "one_run_scores",
]

#: The most canary users one run may hold.
MAX_CANARIES = 1_000_000
#: The scores a one-run audit judges (:func:`audit_one_run`): the attacks of an algorithm's audit
#: (:class:`~dpkit.audits.rl.candidates.RlAttack`).
ONE_RUN_ATTACKS: tuple[str, ...] = enum_values(RlAttack)


@dataclass(frozen=True)
class OneRunScores:
    """One run's coins (1: canary 1) and each user's score (higher: canary 1 more likely), read by ``observer``."""

    setting: RlSetting
    seed: int
    coins: np.ndarray
    scores: np.ndarray
    seconds: float
    observer: str = "messages"
    #: the μ per user the scores could show at the claim (:class:`~dpkit.audits.rl.observers.OneRunView`)
    reach: float | None = None
    #: (users, F) coordinates for a score learned on held-out canaries (``None``: the observer offers none)
    features: np.ndarray | None = None


def _llr(messages: Any, m0: Any, m1: Any, agent: Any) -> float:
    """log p(messages | canary 1) − log p(messages | canary 0), the messages Gaussian around the statistics with
    the σ the agent uses (symmetric releases read on their upper triangle, where the noise is independent)."""
    total = 0.0
    for release in agent.declaration.releases:
        name, sigma = release.name, one_sigma(release.name, agent.sigmas[release.name])
        sym = release.noise == ReleaseNoise.SYMMETRIC
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
    """One run of ``algorithm`` on ``canaries`` canary users with independent fair coins; each user's score.

    Args:
        algorithm: A registered (or :func:`~dpkit.audits.rl.register_agent`-ed) algorithm with a one-run reading.
        canaries: The users of the run, each a canary (2 to :data:`MAX_CANARIES`).
        seed: The run's seed.
        epsilon: The target ε (default: the algorithm's).
        delta: The target δ (default: the algorithm's).
        sigma: ``"tight"``, another named σ, or a number.
        implementation: Replaces the agent factory (the claim stays the registered declaration's).
        progress: Called with the users done, or None.

    Returns:
        The coins, the scores (and features where the observer offers them), the setting and the reach.

    Raises:
        ValueError: If ``canaries`` is out of range, or the algorithm's hook returns scores or features of the
            wrong shape or not finite.
        TypeError: If the algorithm has no one-run reading, or its hook returns no OneRunView.
    """
    m = check_count("canaries", canaries)
    if m > MAX_CANARIES:
        raise ValueError(f"canaries must be <= {MAX_CANARIES:,} (each is a user of the run), got {shown_int(m)}")
    if m < 2:
        raise ValueError(f"canaries must be >= 2, got {m}")
    seed = check_index("seed", seed)
    base = default_setting(algorithm, epsilon=epsilon, delta=delta, sigma=sigma)
    setting = replace(base, episodes=m, implementation=implementation)
    started = time.perf_counter()
    world = setting_world(setting)
    env, _, pair = world
    coins_rng, agent_rng, policy_rng = np.random.default_rng(seed).spawn(3)
    coins = coins_rng.integers(0, 2, m)
    hook = audit_hook(setting, "one_run")
    if hook is not None:  # the algorithm scores its own observer (a billboard, Q-values, …)
        run = OneRun(
            setting,
            world,
            coins.copy(),
            functools.partial(make_setting_agent, setting),
            setting_claim_sigmas(setting),
            declared_sensitivities(setting),
            progress,
        )
        view = hook(run, agent_rng)
        if not isinstance(view, OneRunView):
            raise TypeError(f"{algorithm}'s one_run hook must return a OneRunView, got {type(view).__name__}")
        scores = np.asarray(view.scores, dtype=float)
        if scores.shape != (m,) or not np.isfinite(scores).all():
            raise ValueError(f"{algorithm}'s one_run hook must return {m} finite scores, got shape {scores.shape}")
        seconds = time.perf_counter() - started
        features = None if view.features is None else np.asarray(view.features, dtype=float)
        if features is not None and (features.ndim != 2 or features.shape[0] != m or not np.isfinite(features).all()):
            raise ValueError(f"{algorithm}'s one_run hook must return finite features of shape ({m}, F)")
        return OneRunScores(setting, seed, coins, scores, seconds, view.observer, view.reach, features)
    agent = make_setting_agent(setting, agent_rng, env)
    if not hasattr(agent, "message_statistics"):
        raise TypeError(
            f"{algorithm} has no one-run hook and its agent no message_statistics: one-run audits read an "
            "algorithm's own one_run scores (AuditSpec.one_run) or a local-DP agent's messages"
        )
    setting_claim_sigmas(setting)  # the registered declaration must be readable, at the audit's target
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


@dataclass(frozen=True, repr=False)
class RlOneRunResult(SingleRun):
    """A one-run audit of an RL agent: the run's coins and scores, and their judgement
    (:class:`~dpkit.audits.one_run.OneRunResult`) against the claim — the declared releases at the σ the target
    needs (dpkit's σ_tight of the registered declaration), i.e. μ-GDP with that ledger's exact μ per user (its
    whole trade-off curve, hence its (ε, δ) at the target δ and at every other)."""

    scores: OneRunScores
    judged: OneRunResult
    claimed_epsilon: float
    #: the score that was judged: ``white-box`` (every canary) or ``learned`` (the held-out half)
    attack: str = "white-box"

    @property
    def delta(self) -> float:
        return self.judged.delta

    @property
    def claim(self) -> Claim:
        """The claim judged: μ-GDP per user with the registered declaration's μ at the σ the target needs."""
        return self.judged.claim

    @property
    def alpha(self) -> float:
        return self.judged.alpha

    @property
    def claimed_mu(self) -> float:
        return float(self.judged.claim.mu)  # type: ignore[arg-type]

    @property
    def delta_informative(self) -> float:
        """min(1e-5, 1/K) of the registered declaration (:func:`~dpkit.accountant.declarations.informative_delta`)."""
        return informative_delta(registered_declaration(self.scores.setting))

    @property
    def claimed_epsilon_at_informative_delta(self) -> float:
        """The claim's ε at :attr:`delta_informative`: exact, from the claim's μ."""
        mu = self.claimed_mu
        return gdp_epsilon(mu, self.delta_informative) if mu > 0 else 0.0

    @property
    def guesses(self) -> int:
        return self.judged.guesses

    @property
    def correct(self) -> int:
        return self.judged.correct

    @property
    def p_value(self) -> float:
        return self.judged.p_value

    @property
    def epsilon_lower(self) -> float:
        return self.judged.epsilon_lower

    @property
    def mu_lower(self) -> float:
        return self.judged.mu_lower

    @property
    def power(self) -> float:
        """The μ these canaries and guesses certify for the ideal mechanism exactly at the claim."""
        return self.judged.power

    @property
    def power_ratio(self) -> float:
        return self.judged.power_ratio

    @property
    def verdict(self) -> str:
        return self.judged.verdict

    def to_dict(self) -> dict[str, Any]:
        """The result as plain data (JSON-ready).

        Returns:
            The algorithm, observer, attack and canaries, the one-run result's keys (:meth:`OneRunResult.to_dict`),
            the claimed ε and the informative δ.
        """
        s = self.scores.setting
        out = self.judged.to_dict()
        out.pop("claim")
        out.pop("seconds")
        return {
            "algorithm": s.algorithm,
            "observer": self.scores.observer,
            "attack": self.attack,
            "run_canaries": int(self.scores.coins.shape[0]),
            **out,
            "claimed_epsilon": self.claimed_epsilon,
            "delta_informative": self.delta_informative,
            "claimed_epsilon_at_informative_delta": self.claimed_epsilon_at_informative_delta,
            "sigma": s.sigma if not isinstance(s.sigma, tuple) else dict(s.sigma),
            "sigmas_claim": dict(setting_claim_sigmas(s)),
            "seed": self.scores.seed,
            "seconds": self.scores.seconds,
            "relation": s.relation,
        }


def audit_one_run(
    algorithm: str,
    *,
    canaries: int = 5000,
    seed: int = 0,
    epsilon: float | None = None,
    delta: float | None = None,
    sigma: str | float = "tight",
    alpha: float = 0.05,
    attack: RlAttack | str = "white-box",
    implementation: Callable[..., Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> RlOneRunResult:
    """One run, every user a canary, judged against the claim's trade-off curve.

    The claim is the registered declaration at the σ the target (ε, δ) needs, μ-GDP per user; the guess count is
    chosen from the claim alone (:func:`dpkit.audits.one_run.judge_one_run`).

    Args:
        algorithm: The registered algorithm.
        canaries: The users of the run.
        seed: The run's seed.
        epsilon: The target ε (default: the algorithm's).
        delta: The target δ (default: the algorithm's).
        sigma: ``"tight"``, another named σ, or a number.
        alpha: The test's level, in (0, 1).
        attack: ``white-box`` (default: the observer's scores, every canary), ``learned`` (a score learned on half
            the canaries, judged on the other: :func:`learned_one_run`) or ``auto`` (both, each at α/2).
        implementation: Replaces the agent factory (the claim stays the registered declaration's).
        progress: Called with the users done, or None.

    Returns:
        The one-run audit's result.

    Raises:
        ValueError: If ``alpha`` is not in (0, 1), ``attack`` is unknown, ``learned`` is asked of an observer
            without features, or :func:`one_run_scores` refuses.
        TypeError: As :func:`one_run_scores`.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    attack = check_member("attack", attack, RlAttack)
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
    setting = scores.setting
    mu = declared_mu(registered_declaration(setting), setting_claim_sigmas(setting), setting.relation)
    if attack == RlAttack.LEARNED and scores.features is None:
        raise ValueError(
            f"{algorithm}'s one-run observer ({scores.observer}) offers no features to learn a score from: use "
            "attack='white-box'"
        )
    both = attack == RlAttack.AUTO and scores.features is not None
    share = alpha / 2 if both else alpha
    claim = Claim.gdp(mu)
    results: list[tuple[str, OneRunResult]] = []
    if attack in (RlAttack.WHITE_BOX, RlAttack.AUTO):
        judged = judge_one_run(
            scores.coins,
            scores.scores,
            claim,
            alpha=share,
            delta=setting.delta,
            seed=scores.seed,
            seconds=scores.seconds,
            reach=scores.reach,
        )
        results.append(("white-box", judged))
    if attack == RlAttack.LEARNED or both:
        results.append(("learned", learned_one_run(scores, claim, alpha=share)))
    name, judged = next(((n, j) for n, j in results if j.verdict == Verdict.VIOLATION), results[0])
    return RlOneRunResult(scores, judged, float(setting.epsilon), name)


def learned_one_run(scores: OneRunScores, claim: Claim, *, alpha: float) -> OneRunResult:
    """A score learned on half the canaries, judged on the other half.

    The halves are drawn from the run's seed (not from the coins); a logistic regression on the first half's
    standardised features and coins scores the second half, which alone is judged. Valid: given the first half's
    coins the run is a mechanism of the second half's coins, each a replace-one neighbour.

    Args:
        scores: The run's scores, with features.
        claim: The claim.
        alpha: The test's level.

    Returns:
        The judgement of the second half (its power from the observer's reach).

    Raises:
        ValueError: If the scores carry no features.
    """
    from sklearn.linear_model import LogisticRegression

    if scores.features is None:
        raise ValueError("the one-run scores carry no features to learn from")
    coins, features = np.asarray(scores.coins), np.asarray(scores.features, dtype=float)
    m = coins.shape[0]
    order = np.random.default_rng(np.random.SeedSequence([scores.seed, 1])).permutation(m)
    train, test = np.sort(order[: m // 2]), np.sort(order[m // 2 :])
    centre, scale = features[train].mean(axis=0), features[train].std(axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    if np.unique(coins[train]).size < 2:  # every coin alike on the first half: nothing to learn, no score
        learned = np.zeros(test.size)
    else:
        model = LogisticRegression(C=1.0, max_iter=2000).fit((features[train] - centre) / scale, coins[train])
        learned = model.decision_function((features[test] - centre) / scale)
    delta = scores.setting.delta
    return judge_one_run(
        coins[test],
        learned,
        claim,
        alpha=alpha,
        delta=delta,
        # the guesses designed for the claim itself (a learned score is there to see more than the observer's
        # reach), the power for what the scores can show at the claim (the reach)
        guesses=design_guesses(claim, canaries=test.size, alpha=alpha, delta=delta),
        seed=scores.seed,
        seconds=scores.seconds,
        reach=scores.reach,
    )
