"""Shared pytest configuration: Hypothesis profiles.

The tier's Hypothesis budget is tests/support/tiers.py's (``DPKIT_EXAMPLES=fast`` in ``make test``: a quarter of
the examples). The ``dpkit`` profile is loaded by default (no deadline: the accountants call root-finders
and dp-accounting, whose run time varies). When the environment variable ``CI`` is set the
``dpkit-ci`` profile is loaded instead, which also derandomises Hypothesis so that CI runs
are reproducible. ``HYPOTHESIS_PROFILE`` selects a profile explicitly.

A time budget for the second tier: with ``DPKIT_SLOW_BUDGET_SECONDS`` set (``.ci/run`` sets it, so that CI stays
within its 30 minutes), a test marked ``slow`` that has not started when the run is that many seconds old is
skipped, saying so (a skip, never a pass); ``make test-all`` and ``make test-slow`` run every one.
"""

from __future__ import annotations

import math
import os
import time

import pytest
from hypothesis import settings
from tiers import examples

# the tier's share of Hypothesis's 100 default examples (tests/support/tiers.py: all of them unless make test's
# fast tier); tests that set max_examples scale it with tiers.examples
settings.register_profile("dpkit", deadline=None, max_examples=examples(100))
settings.register_profile(
    "dpkit-ci", deadline=None, derandomize=True, database=None, print_blob=True, max_examples=examples(100)
)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("dpkit-ci" if os.environ.get("CI") else "dpkit"))

_STARTED = time.monotonic()
_SLOW_BUDGET = float(os.environ.get("DPKIT_SLOW_BUDGET_SECONDS") or math.inf)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("slow") is not None and time.monotonic() - _STARTED > _SLOW_BUDGET:
        pytest.skip(
            f"the second tier's time budget of {_SLOW_BUDGET:.0f} s (DPKIT_SLOW_BUDGET_SECONDS) is spent: "
            "make test-all runs every test"
        )
