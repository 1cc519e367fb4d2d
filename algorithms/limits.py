"""The stated limits of the sizes dpkit accepts, checked before anything is computed or allocated.

One table for every entry point: runs (simulations, RLSVI runs, a report's algorithm entries) at :data:`LIMITS` and
at most :data:`MAX_STEPS` steps, privacy declarations at :data:`DECLARATION_LIMITS`, audits at :data:`AUDIT_LIMITS`,
ledgers at :data:`MAX_RELEASES` releases. The counts the accountant composes in closed form have no limit. The
module imports nothing at load, so a command can read a limit without importing the algorithms (which entry point
reads which limit: docs/explanation/observers.md).
"""

from __future__ import annotations

__all__ = [
    "LIMITS",
    "MAX_STEPS",
    "DECLARATION_LIMITS",
    "MAX_DELTAS",
    "MAX_GRID_POINTS",
    "MAX_ENTRIES",
    "AUDIT_LIMITS",
    "MAX_RELEASES",
    "above_limit",
    "check_releases",
]

#: The largest size of each kind a run (a regret experiment, an RLSVI run) accepts.
LIMITS: dict[str, int] = {
    "episodes": 10**6,
    "seeds": 10**3,
    "states": 10**3,
    "actions": 10**2,
    "horizon": 10**4,
    "state_dim": 10**2,
    "control_dim": 10**2,
    "workers": 256,
}
#: The largest total work of a regret experiment over its seeds: episodes × seeds × horizon steps.
MAX_STEPS = 10**9
#: The largest size of each kind a privacy declaration is computed at (the horizon's steps are accounted one by
#: one: 10⁴ take seconds; episodes, states, actions and dimensions enter closed forms).
DECLARATION_LIMITS: dict[str, int] = {
    "episodes": 10**12,
    "horizon": 10**4,
    "states": 10**6,
    "actions": 10**6,
    "dim": 10**6,
}
#: The most runs per dataset an RL audit accepts (each is a whole run of the algorithm; 10⁶ already takes hours)
#: and the most users K an audited run may have.
AUDIT_LIMITS: dict[str, int] = {"runs": 1_000_000, "episodes": 100_000}
#: The most distinct releases a ledger or event file composes (each is accounted on its own under PLD: 3,000
#: distinct Laplace releases take about a minute, 20,000 Gaussian ones three); repeats go in a release's ``count``.
MAX_RELEASES = 10_000
#: The most δ a report's ε(δ) curves are drawn at (each is an accounting under every method).
MAX_DELTAS = 100
#: The most points of a report's RLSVI ``episode_grid`` (each is an RLSVI run).
MAX_GRID_POINTS = 100
#: The most ``[[algorithm]]`` and ``[[ledger]]`` entries (each a file read and accounted under every method) and
#: plugins of a report.
MAX_ENTRIES = 100


def above_limit(name: str, value: float, limit: int) -> str:
    """The message of a size above its limit.

    Args:
        name: The size's name.
        value: The size.
        limit: Its limit.

    Returns:
        The message.

    Examples:
        >>> above_limit("episodes", 2_000_000, 1_000_000)
        'episodes = 2,000,000 is above the limit of 1,000,000'
    """
    from dpkit.accountant.validation import shown_int

    shown = shown_int(value) if isinstance(value, int) else f"{value:g}"
    return f"{name} = {shown} is above the limit of {limit:,}"


def check_releases(what: str, target: object) -> None:
    """Refuse a ledger or event of more than :data:`MAX_RELEASES` distinct releases, before it is accounted.

    The releases are the leaves of its event, each with its multiplicity.

    Args:
        what: The file it was read from (for the error).
        target: The ledger or event.

    Raises:
        ValueError: It composes more than :data:`MAX_RELEASES` distinct releases.
    """
    from dpkit.accountant.events import Event, walk
    from dpkit.accountant.ledger import Ledger

    event = target.event if isinstance(target, Ledger) else target
    assert isinstance(event, Event)
    n = sum(1 for _ in walk(event))
    if n > MAX_RELEASES:
        raise ValueError(
            f"{what} composes {n:,} distinct releases, above the limit of {MAX_RELEASES:,} (each is accounted on "
            "its own: give repeated releases once, with a count)"
        )
