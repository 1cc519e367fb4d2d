"""The one-run audit of a real DP-SGD library: Opacus (PyTorch) training a logistic regression on data the test makes
(second tier; needs the opacus extra, which .ci/run installs): consistent when correct, a violation with clipping
off."""

from __future__ import annotations

import numpy as np
import pytest

from dpkit.audits.dp_sgd_audit import audit_training_run
from dpkit.audits.dp_sgd_claim import DpSgdClaim
from dpkit.audits.dp_sgd_reference import make_task

pytestmark = pytest.mark.slow

SIGMA, Q, STEPS = 2.6322, 0.5, 20  # the accountant's ε = 4.0 at δ = 1e-5


@pytest.mark.parametrize(("clipping", "verdict"), [(True, "consistent"), (False, "violation")])
def test_opacus_run_is_audited(clipping: bool, verdict: str) -> None:
    pytest.importorskip("opacus")
    from dpkit.audits.dp_sgd_opacus import OpacusLogisticRegression

    data = make_task(features=2048, rng=np.random.default_rng(0))
    claim = DpSgdClaim(SIGMA, Q, STEPS)
    run = OpacusLogisticRegression(SIGMA, Q, STEPS, clipping=clipping)
    result = audit_training_run(run, claim=claim, parameters=2048, dataset=data, canaries=1000, seed=0)
    assert result.verdict == verdict, result.reason
    assert (result.epsilon_lower > result.claimed_epsilon) == (not clipping)
