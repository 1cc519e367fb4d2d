"""What a report states in words: the neighbouring relations, the privacy models and each
algorithm's assumptions (the conditions under which its declared sensitivities hold).

The numbers come from the ledgers; these sentences only say what the numbers are about. They
restate the docstrings of the algorithm modules in :mod:`dpkit.algorithms`.
"""

from __future__ import annotations

from dpkit.accountant.sensitivity import check_relation

__all__ = ["RELATION_TEXT", "PRIVACY_MODEL_TEXT", "ASSUMPTIONS", "METHOD_LABELS", "relation_text", "assumptions"]

RELATION_TEXT: dict[str, str] = {
    "replace_one": (
        "Replace-one: two datasets are neighbours when they differ in one user, whose data is replaced by "
        "anyone else's (the other users and their order stay). A sensitivity is the largest change that "
        "replacing one user can make to a released statistic."
    ),
    "add_remove": (
        "Add/remove: two datasets are neighbours when one holds one more user than the other. A sensitivity is "
        "the largest change that one user's presence can make to a released statistic."
    ),
}

PRIVACY_MODEL_TEXT: dict[str, str] = {
    "LDP": (
        "Local DP: each user randomises her own messages before sending them; the observer is the server, who "
        "sees every message. The guarantee holds for any two data of one user, so the relation is replace-one."
    ),
    "JDP": (
        "Joint DP: the observer sees the released shared statistics (the billboard) and everything given to the "
        "other users; a user's own actions may depend on her own data."
    ),
}

ASSUMPTIONS: dict[str, tuple[str, ...]] = {
    "ldp-ucrl-vtr": (
        "A tabular MDP in its linear-mixture view: one-hot features φ(s′|s, a) = e_(s,a,s′), d = S²A.",
        "The §6 (experiment) reading of the paper's σ: rewards divided by H, so values lie in [0, 1] and "
        "‖φ_V‖ <= sqrt(S).",
        "Each user clips V to [0, 1] and φ_V to the norm bound before adding noise, so the sensitivities hold "
        "whatever the server computes.",
        "The Gram update carries symmetric noise (i.i.d. on the upper triangle, mirrored); its sensitivity is "
        "taken on that triangle.",
    ),
    "private-linopt-vi": (
        "A tabular MDP in its linear-mixture view: transition features of dimension d1 = S²A, reward features "
        "of dimension d2 = SA.",
        "Values lie in [0, H] and rewards in [0, 1]; features, values and rewards are clipped to these bounds "
        "before they are counted.",
        "Four binary-tree counters per step, released at the start of each episode over the episodes before it "
        "(the before-episode schedule).",
    ),
    "private-linopt-po": (
        "A tabular MDP in its linear-mixture view: transition features of dimension d1 = S²A, reward features "
        "of dimension d2 = SA.",
        "Values lie in [0, H] and rewards in [0, 1]; features, values and rewards are clipped to these bounds "
        "before they are counted.",
        "Four binary-tree counters per step, released at the start of each episode over the episodes before it "
        "(the before-episode schedule). The policy update (mirror descent) uses only released statistics.",
    ),
    "private-ofu-rl": (
        "An LQ system under the paper's Assumption 1: ‖A‖ + γ‖B‖ + C_w <= 1, states in the unit ball and "
        "controls of norm at most γ.",
        "States are clipped to the unit ball and controls to γ before they are counted, which is what the "
        "sensitivities assume.",
        "Two binary-tree counters (B1 on z zᵀ with symmetric noise, B2 on z x′ᵀ), released at the start of each "
        "episode over the episodes before it.",
    ),
    "rlsvi": (
        "Tabular RLSVI adds no noise for privacy: its exploration noise w ~ N(0, β_k/(n + 1)) on every Q-value "
        "is the privacy (Russo's β_k unless σ is rescaled).",
        "Neighbouring runs differ only in the rewards (in [0, 1]) of one episode; its states and actions, and so "
        "the visit counts, stay the same and are treated as public.",
        "Observed rewards are clipped to [0, 1]; the released perturbed Q-values are the billboard.",
    ),
}

#: Labels of the accounting methods (keys of ``dpkit.accountant.VARIANTS``).
METHOD_LABELS: dict[str, str] = {
    "exact": "exact (μ-GDP)",
    "pld": "PLD (dp-accounting)",
    "rdp": "RDP, improved conversion",
    "rdp-mironov": "RDP, Mironov's conversion",
    "zcdp-rdp-optimal": "zCDP, optimal RDP conversion",
    "zcdp": "zCDP, Bun–Steinke conversion",
    "classic": "classic (Dwork–Roth, basic composition)",
}


def relation_text(relation: str) -> str:
    """The neighbouring relation ``relation`` (add_remove or replace_one) in words."""
    return RELATION_TEXT[check_relation(relation)]


def assumptions(algorithm: str) -> tuple[str, ...]:
    """The assumptions behind ``algorithm``'s declared sensitivities, in words."""
    if algorithm not in ASSUMPTIONS:
        raise ValueError(f"no assumptions are written for algorithm {algorithm!r}")
    return ASSUMPTIONS[algorithm]
