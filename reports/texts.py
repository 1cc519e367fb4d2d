"""What a report states in words: the neighbouring relations, the privacy models and each
algorithm's assumptions (the conditions under which its declared sensitivities hold).

The numbers come from the ledgers; these sentences only say what the numbers are about. An
algorithm's assumptions are written beside it, in its registration (its spec's ``report``).
"""

from __future__ import annotations

from dpkit.accountant.sensitivity import Relation, check_relation

__all__ = ["RELATION_TEXT", "PRIVACY_MODEL_TEXT", "METHOD_LABELS", "relation_text", "assumptions"]

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


def relation_text(relation: Relation | str) -> str:
    """The neighbouring relation ``relation`` in words.

    Args:
        relation: ``add_remove`` or ``replace_one``.

    Returns:
        The relation described in a sentence.
    """
    return RELATION_TEXT[check_relation(relation)]


def assumptions(algorithm: str) -> tuple[str, ...]:
    """The assumptions behind ``algorithm``'s declared sensitivities, in words.

    Args:
        algorithm: The registered algorithm's name.

    Returns:
        One sentence per assumption.
    """
    from dpkit.algorithms import registry

    return registry.get(algorithm, private=True).report.assumptions


def __getattr__(name: str) -> object:
    # the assumptions of every registered private algorithm, as registered now (they live with each algorithm)
    if name == "ASSUMPTIONS":
        from dpkit.algorithms import registry

        return {n: registry.get(n).report.assumptions for n in registry.names(private=True)}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
