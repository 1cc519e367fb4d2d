"""The skips a test run may make, each declared with why (``.ci/run`` fails on any other).

A test that is skipped checks nothing: a regression in it lands green. So every skip the suite can make is declared
here, with the condition that causes it; with ``DPKIT_STRICT_SKIPS=1`` (``.ci/run`` sets it) a run that skips a test
for any other reason fails, naming the test and its reason. Every run prints how many tests ran and were skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: (a regular expression the skip's reason must match, why the skip is allowed).
DECLARED: tuple[tuple[str, str], ...] = (
    (r"no headless Chromium", "the browser tests need Debian's Chromium, which .ci/run installs where apt can"),
    (
        r"seed file .* not available|the seed files are not beside the repository",
        "the seed papers live outside "
        "the repository (shared/seeds beside it, or DPKIT_SEEDS): a clone alone does not have them",
    ),
    (
        r"could not import '(dask|dask\.distributed|gymnasium|prv_accountant|mkdocs|opacus)'",
        "an optional extra not installed (make install installs every extra the tests use)",
    ),
    (r"^no \S+ here$", "a fuzz target whose optional dependency is not installed"),
)


def undeclared(reasons: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (test, reason) pairs whose reason matches no declared skip."""
    return [(test, why) for test, why in reasons if not any(re.search(p, why) for p, _ in DECLARED)]
