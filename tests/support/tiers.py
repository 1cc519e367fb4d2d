"""The Hypothesis budget of the two test tiers.

``make test`` (the fast tier, at most five minutes on a 2-core machine) sets ``DPKIT_EXAMPLES=fast``: every
property test runs a quarter of the examples it is written for (at least 10). The second tier (``make test-all``,
``make test-slow``) and ``.ci/run`` leave it unset (or ``full``): every property test runs all its examples. No
property is dropped from either tier; the fast one looks at fewer random cases of it.
"""

from __future__ import annotations

import os

#: ``fast`` in ``make test``; anything else (or unset): every example.
TIER = os.environ.get("DPKIT_EXAMPLES", "full")
if TIER not in ("fast", "full"):
    raise ValueError(f"DPKIT_EXAMPLES must be 'fast' or 'full', got {TIER!r}")

#: The share of its examples a property test runs in the fast tier, and the fewest it runs there.
FAST_SHARE, FAST_MIN = 0.25, 10


def examples(n: int) -> int:
    """The examples a property test written for ``n`` runs in this tier: ``n``, or in the fast tier a quarter of
    them (at least :data:`FAST_MIN`, never more than ``n``)."""
    if TIER == "full":
        return n
    return min(n, max(FAST_MIN, round(n * FAST_SHARE)))
