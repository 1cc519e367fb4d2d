"""Shared pytest configuration: Hypothesis profiles.

The ``dpkit`` profile is loaded by default (no deadline: the accountants call root-finders
and dp-accounting, whose run time varies). When the environment variable ``CI`` is set the
``dpkit-ci`` profile is loaded instead, which also derandomises Hypothesis so that CI runs
are reproducible. ``HYPOTHESIS_PROFILE`` selects a profile explicitly.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("dpkit", deadline=None)
settings.register_profile("dpkit-ci", deadline=None, derandomize=True, database=None, print_blob=True)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("dpkit-ci" if os.environ.get("CI") else "dpkit"))
