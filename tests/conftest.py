"""Shared pytest configuration: Hypothesis profiles, and the skips a run may make.

The tier's Hypothesis budget is tests/support/tiers.py's (``DPKIT_EXAMPLES=fast`` in ``make test``: a quarter of
the examples). The ``dpkit`` profile is loaded by default (no deadline: the accountants call root-finders
and dp-accounting, whose run time varies). When the environment variable ``CI`` is set the
``dpkit-ci`` profile is loaded instead, which also derandomises Hypothesis so that CI runs
are reproducible. ``HYPOTHESIS_PROFILE`` selects a profile explicitly.

Every run ends with a line of how many tests ran and were skipped, and why each skip happened; every skip the suite
can make is declared in tests/support/skips.py, and with ``DPKIT_STRICT_SKIPS=1`` (``.ci/run`` sets it) a skip for
any other reason fails the run. No test is skipped for time: ``.ci/run`` runs both tiers whole.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings
from skips import undeclared
from tiers import examples

# the tier's share of Hypothesis's 100 default examples (tests/support/tiers.py: all of them unless make test's
# fast tier); tests that set max_examples scale it with tiers.examples
settings.register_profile("dpkit", deadline=None, max_examples=examples(100))
settings.register_profile(
    "dpkit-ci", deadline=None, derandomize=True, database=None, print_blob=True, max_examples=examples(100)
)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("dpkit-ci" if os.environ.get("CI") else "dpkit"))

_SESSION: list[pytest.Session] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    _SESSION.append(session)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
    """How many tests ran and were skipped, and why; with ``DPKIT_STRICT_SKIPS=1`` an undeclared skip fails the run."""
    stats = terminalreporter.stats
    ran = sum(len(stats.get(k, [])) for k in ("passed", "failed", "xfailed", "xpassed"))
    reasons = []
    for report in stats.get("skipped", []):
        longrepr = report.longrepr
        why = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons.append((report.nodeid, why.removeprefix("Skipped: ")))
    terminalreporter.write_line(f"dpkit: {ran} tests ran, {len(reasons)} skipped")
    for test, why in reasons:
        terminalreporter.write_line(f"  skipped {test}: {why}")
    bad = undeclared(reasons)
    if bad and os.environ.get("DPKIT_STRICT_SKIPS") == "1":
        terminalreporter.write_line(
            f"dpkit: {len(bad)} skip(s) not declared in tests/support/skips.py (a skipped test checks nothing):",
            red=True,
        )
        for test, why in bad:
            terminalreporter.write_line(f"  {test}: {why}", red=True)
        for session in _SESSION:  # the run fails: a skipped test checks nothing
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
