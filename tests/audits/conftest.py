"""A process pool shared by the RL mutant tests: each audit runs its D and D′ runs on two workers (the verdicts
do not depend on the executor: every chunk of runs has its own seed), started once for the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dpkit.algorithms.executors import Executor, make_executor


@pytest.fixture(scope="session")
def pool() -> Iterator[Executor]:
    with make_executor("processes", workers=2) as executor:
        yield executor
