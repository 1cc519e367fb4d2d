"""A declaration may hold non-Gaussian and subsampled releases: its ledger holds their events, the paper's σ is
read through the method (pld by default), σ_tight is still one common factor, and what needs a single μ says so."""

from __future__ import annotations

import pytest

from dpkit.accountant import make_accountant
from dpkit.accountant.algorithm_ledgers import algorithm_ledger
from dpkit.accountant.declarations import DeclaredRelease, PrivacyDeclaration
from dpkit.accountant.events import GaussianEvent, LaplaceEvent, PoissonSampledEvent
from dpkit.accountant.ledger import EventRelease, GaussianRelease


def _declaration(relation: str = "add_remove") -> PrivacyDeclaration:
    releases = (
        DeclaredRelease("gram", "a noisy Gram matrix", 10, 1.0, 2.0, 1.0, 20.0),
        DeclaredRelease("sgd", "a DP-SGD step", 200, 1.0, 2.0, 1.0, 1.1, sampling_rate=0.01),
        DeclaredRelease("count", "a Laplace count", 3, 1.0, 2.0, 1.0, 10.0, mechanism="laplace"),
    )
    return PrivacyDeclaration("toy", "central", "a paper", relation, 2.0, 1e-5, releases)


def test_the_ledger_of_a_declaration_holds_its_events() -> None:
    ledger = _declaration().ledger()
    gram, sgd, count = ledger.releases
    assert gram == GaussianRelease("gram", 1.0, 20.0, 10)
    assert sgd == EventRelease("sgd", PoissonSampledEvent(0.01, GaussianEvent(1.1)), 200)
    assert count == EventRelease("count", LaplaceEvent(10.0), 3)
    replace_one = _declaration("replace_one").ledger()  # Δ = 2: the records are 2C apart
    assert replace_one.releases[1].event == PoissonSampledEvent(0.01, GaussianEvent(1.1, relation="replace_one"))
    assert replace_one.releases[2].event == LaplaceEvent(10.0, relation="replace_one")  # ε = 2/10 per release
    with pytest.raises(ValueError, match="not a plain Gaussian one"):
        _declaration().releases[1].gaussian("add_remove")


@pytest.mark.parametrize(("method", "label"), [(None, "pld"), ("rdp", "rdp (improved)")])
@pytest.mark.slow
def test_algorithm_ledger_calibrates_a_declaration_of_events(method: str | None, label: str) -> None:
    led = algorithm_ledger(_declaration(), method=method)
    assert led.method == label and led.mu_at_paper_sigma is None
    acc = make_accountant(label.split()[0])
    tight = _declaration().ledger(scale=led.scale)
    assert (
        acc.epsilon(tight, 1e-5).epsilon
        <= 2.0
        < acc.epsilon(_declaration().ledger(scale=led.scale * 0.999), 1e-5).epsilon
    )
    assert (
        led.to_dict()["releases"][1]["sampling_rate"] == 0.01 and led.to_dict()["releases"][2]["mechanism"] == "laplace"
    )
    with pytest.raises(ValueError, match="exact: no closed form"):
        algorithm_ledger(_declaration(), method="exact")


def test_bad_mechanisms_are_named() -> None:
    with pytest.raises(ValueError, match="x.mechanism"):
        DeclaredRelease("x", "s", 1, 1.0, 2.0, 1.0, 1.0, mechanism="cauchy")
    with pytest.raises(ValueError, match="x.sampling_rate"):
        DeclaredRelease("x", "s", 1, 1.0, 2.0, 1.0, 1.0, sampling_rate=1.5)
