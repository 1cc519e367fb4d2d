"""The binary counting mechanism: p-sum counts against a brute-force simulation, the working
counter's noise, the counter's privacy under every method, and the seeds' depth m = ⌈log K⌉."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from fractions import Fraction

import dp_accounting
import numpy as np
import pytest
import references as ref
from dp_accounting.pld import pld_privacy_accountant as dp_pld
from dp_accounting.rdp import rdp_privacy_accountant as dp_rdp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats
from tiers import examples

from dpkit.accountant import Ledger, calibrate_sigma, gaussian_delta, gaussian_epsilon, make_accountant
from dpkit.accountant.pld import auto_discretization
from dpkit.accountant.tree import (
    SCHEDULES,
    BinaryCounter,
    calibrate_tree_sigma,
    max_psums_per_item,
    max_psums_per_prefix,
    paper_depth,
    prefix_decomposition,
    prefix_noise_variance,
    psum_interval,
    psums_per_item,
    released_prefixes,
    symmetric_noise_norm_bound,
    tree_delta,
    tree_epsilon,
    tree_ledger,
    tree_mu,
    worst_item,
)

DP_ORDERS = tuple(float(o) for o in dp_rdp.DEFAULT_RDP_ORDERS)
FAST = ref.FAST_METHODS
delta_st = st.floats(-28.0, math.log(1e-2)).map(math.exp)  # 7e-13 … 1e-2
schedule_st = st.sampled_from(SCHEDULES)

#: Per-check false-alarm level of the statistical tests (deterministic seeds make them
#: reproducible; at this level a correct counter cannot fail them by chance in practice).
LEVEL = 1e-9


# ----------------------------------------------------------------------------------------
# Brute force: the counter simulated as a binary carry on blocks of items (no bit tricks)
# ----------------------------------------------------------------------------------------


def _simulate(last: int) -> Iterator[tuple[int, tuple[int, int], list[tuple[int, int]]]]:
    """Run the counter on items 1 … ``last``; after item t yield (t, the p-sum created, the p-sums held).

    A p-sum is an interval (first, last) of items. The new item is a block of one item; it
    absorbs the held p-sums while the newest one is as large as itself (the carry of a binary
    counter: α_i = x_t + Σ_{j<i} α_j), and the result is the one p-sum noised at time t. The
    prefix 1 … t is the sum of the held p-sums.
    """
    held: list[tuple[int, int]] = []
    for t in range(1, last + 1):
        first = t
        while held and held[-1][1] - held[-1][0] == t - first:
            first = held.pop()[0]
        held.append((first, t))
        yield t, (first, t), list(held)


def _brute_counts(steps: int, schedule: str) -> tuple[np.ndarray, int]:
    """Per-item count of released p-sums and the largest number of p-sums in a released prefix."""
    last = steps if schedule == "after-each" else steps - 1
    counts = np.zeros(steps, dtype=np.int64)
    per_prefix = 0
    for _, (a, b), held in _simulate(last):
        counts[a - 1 : b] += 1
        per_prefix = max(per_prefix, len(held))
    return counts, per_prefix


def _check_against(steps: int, schedule: str, counts: np.ndarray, per_prefix: int) -> None:
    got = psums_per_item(steps, schedule=schedule)
    assert got.shape == (steps,) and got.dtype.kind == "i"
    assert np.array_equal(got, counts), (steps, schedule)
    assert max_psums_per_item(steps, schedule=schedule) == counts.max()
    assert max_psums_per_prefix(steps, schedule=schedule) == per_prefix
    if counts.max() == 0:
        with pytest.raises(ValueError, match="nothing is released"):
            worst_item(steps, schedule=schedule)
    else:
        assert worst_item(steps, schedule=schedule) == int(np.argmax(counts)) + 1 == 1


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_counts_match_brute_force_for_every_steps_up_to_2000(schedule: str) -> None:
    """One incremental simulation; after each item, every count is compared for the T it settles."""
    n = 2000
    counts = np.zeros(n, dtype=np.int64)
    per_prefix = 0
    sim = _simulate(n)
    simulated = 0  # items simulated = last released prefix so far
    for steps in range(1, n + 1):
        last = steps if schedule == "after-each" else steps - 1
        assert released_prefixes(steps, schedule=schedule) == last
        while simulated < last:
            simulated, (a, b), held = next(sim)
            counts[a - 1 : b] += 1
            per_prefix = max(per_prefix, len(held))
            # The simulated p-sums are the formulas' intervals.
            assert psum_interval(simulated) == (a, b)
            assert prefix_decomposition(simulated) == held
        _check_against(steps, schedule, counts[:steps], per_prefix)


def test_full_dyadic_tree_has_the_same_max_count_per_item() -> None:
    """Every node [(j−1)2^i + 1, j 2^i] with j 2^i <= T′: larger per-item counts, same maximum."""
    n = 2000
    dyadic = np.zeros(n, dtype=np.int64)
    fenwick = np.zeros(n, dtype=np.int64)
    nodes: set[tuple[int, int]] = set()
    sim = _simulate(n)
    for last in range(1, n + 1):
        size = 1
        while size <= last:  # the nodes completed by item `last`
            if last % size == 0:
                dyadic[last - size : last] += 1
                nodes.add((last - size + 1, last))
            size *= 2
        _, (a, b), _ = next(sim)
        fenwick[a - 1 : b] += 1
        assert (a, b) in nodes  # every p-sum of the binary mechanism is a dyadic node
        assert np.all(fenwick[:last] <= dyadic[:last])
        assert dyadic[:last].max() == fenwick[:last].max() == max_psums_per_item(last)


@settings(max_examples=examples(15))
@given(steps=st.integers(1, 30_000), schedule=schedule_st)
@example(steps=30_000, schedule="after-each")
@example(steps=2**14, schedule="after-each")
@example(steps=2**14 + 1, schedule="before-episode")
def test_counts_match_brute_force_for_random_steps(steps: int, schedule: str) -> None:
    _check_against(steps, schedule, *_brute_counts(steps, schedule))


@settings(max_examples=examples(20))
@given(steps=st.integers(1, 10**6), schedule=schedule_st, picks=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4))
@example(steps=10**6, schedule="after-each", picks=[0.0, 1.0])
@example(steps=10**6, schedule="before-episode", picks=[0.5])
@example(steps=2**19, schedule="after-each", picks=[0.25])
@example(steps=2**19 + 1, schedule="before-episode", picks=[0.75])
def test_closed_forms_for_large_steps(steps: int, schedule: str, picks: list[float]) -> None:
    last = steps if schedule == "after-each" else steps - 1
    counts = psums_per_item(steps, schedule=schedule)
    depth = 0  # ⌊log2 T′⌋ + 1 by counting powers of two
    while 2**depth <= last:
        depth += 1
    assert counts.max() == max_psums_per_item(steps, schedule=schedule) == depth
    assert counts[0] == depth  # item 1 attains it
    if last:
        assert worst_item(steps, schedule=schedule) == 1
        t = np.arange(1, last + 1, dtype=np.int64)
        assert max_psums_per_prefix(steps, schedule=schedule) == np.bitwise_count(t).max()
        # The p-sums' sizes add up to the total count; a few items checked by the definition.
        low = t & -t
        assert counts.sum() == low.sum()
        for s in (1 + int(u * (steps - 1)) for u in picks):
            assert counts[s - 1] == np.count_nonzero((t - low < s) & (s <= t))
    else:
        assert max_psums_per_prefix(steps, schedule=schedule) == 0
    if schedule == "before-episode":
        assert counts[-1] == 0  # item K is never released


def test_reference_values() -> None:
    assert psums_per_item(8).tolist() == [4, 3, 3, 2, 3, 2, 2, 1]
    assert psums_per_item(8, schedule="before-episode").tolist() == [3, 2, 2, 1, 2, 1, 1, 0]
    assert psums_per_item(1, schedule="before-episode").tolist() == [0]
    assert (max_psums_per_item(1), max_psums_per_item(1, schedule="before-episode")) == (1, 0)
    assert psum_interval(1) == (1, 1) and psum_interval(12) == (9, 12) and psum_interval(16) == (1, 16)
    assert prefix_decomposition(0) == [] and prefix_decomposition(13) == [(1, 8), (9, 12), (13, 13)]
    assert max_psums_per_prefix(7) == 3 and max_psums_per_prefix(8, schedule="before-episode") == 3


# ----------------------------------------------------------------------------------------
# The seeds' depth m = ⌈log K⌉
# ----------------------------------------------------------------------------------------


def test_paper_depth_is_the_count_for_before_episode_only() -> None:
    for k in range(1, 5001):
        smallest = 0  # the smallest m with 2^m >= K
        while 2**smallest < k:
            smallest += 1
        assert paper_depth(k) == paper_depth(k, base=2) == smallest
        if k >= 2:
            assert paper_depth(k) == max_psums_per_item(k, schedule="before-episode")
        # after-each: one more exactly when T is a power of 2 (T = 1 = 2^0 included).
        power_of_two = k & (k - 1) == 0
        assert max_psums_per_item(k, schedule="after-each") - paper_depth(k) == (1 if power_of_two else 0)


@settings(max_examples=examples(200))
@given(
    steps=st.integers(1, 10**12),
    base=st.one_of(st.sampled_from([3.0, 10.0, math.e, 1.5, 2.5, 16.0]), st.floats(1.01, 1e3)),
)
def test_paper_depth_other_bases_is_exact(steps: int, base: float) -> None:
    m = paper_depth(steps, base=base)
    assert Fraction(base) ** m >= steps
    assert m == 0 or Fraction(base) ** (m - 1) < steps


@pytest.mark.parametrize("base", [3, 10, 7.0])
def test_paper_depth_at_exact_powers(base: float) -> None:
    for k in range(1, 16):
        power = int(base) ** k
        assert paper_depth(power, base=base) == k
        assert paper_depth(power + 1, base=base) == k + 1
        assert paper_depth(power - 1, base=base) == (k if power - 1 > int(base) ** (k - 1) else k - 1)


# ----------------------------------------------------------------------------------------
# The working counter
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "symmetric"), [((5,), False), ((), False), ((3, 4, 4), False), ((3, 4, 4), True)])
def test_noiseless_counter_gives_exact_cumulative_sums(shape: tuple[int, ...], symmetric: bool) -> None:
    rng = np.random.default_rng(1)
    items = rng.integers(-1000, 1000, size=(100, *shape)).astype(float)  # exact in doubles
    counter = BinaryCounter(shape, 0.0, 0, symmetric=symmetric)
    assert np.array_equal(counter.prefix(), np.zeros(shape))
    expected = np.cumsum(items, axis=0)
    for t, item in enumerate(items, start=1):
        counter.add(item)
        assert counter.t == t
        assert np.array_equal(counter.prefix(), expected[t - 1])


def test_noiseless_counter_on_real_items() -> None:
    items = np.random.default_rng(2).normal(size=(300, 6))
    counter = BinaryCounter(6, 0.0, 0)
    for t, item in enumerate(items, start=1):
        counter.add(item)
        np.testing.assert_allclose(counter.prefix(), items[:t].sum(axis=0), rtol=1e-12, atol=1e-12)


def _chi2_ok(samples: np.ndarray, variance: float) -> bool:
    """Two-sided chi-square test that zero-mean normal ``samples`` have ``variance``."""
    n = samples.size
    statistic = float(np.sum(samples * samples)) / variance
    return stats.chi2.ppf(LEVEL / 2, n) <= statistic <= stats.chi2.isf(LEVEL / 2, n)


def test_prefix_noise_variance_and_covariance() -> None:
    """Var = popcount(t)σ²; Cov(t, t′) = σ² · shared p-sums (fresh noise per p-sum)."""
    sigma, n, horizon = 1.5, 40_000, 16
    rng = np.random.default_rng(3)
    counter = BinaryCounter((n,), sigma, rng)
    items = rng.integers(-5, 5, size=(horizon, n)).astype(float)
    noise = []
    for t, item in enumerate(items, start=1):
        counter.add(item)
        noise.append(counter.prefix() - items[:t].sum(axis=0))
        variance = prefix_noise_variance(t, sigma)
        assert variance == t.bit_count() * sigma**2
        assert _chi2_ok(noise[-1], variance), t
        assert abs(noise[-1].mean()) <= stats.norm.isf(LEVEL / 2) * math.sqrt(variance / n)
    held = [set(h) for _, _, h in _simulate(horizon)]
    for t in range(horizon):
        for u in range(t + 1, horizon):
            shared = len(held[t] & held[u])
            var_t, var_u = len(held[t]) * sigma**2, len(held[u]) * sigma**2
            # Cov = (Var(x + y) − Var(x − y))/4, each side a chi-square test.
            assert _chi2_ok(noise[t] + noise[u], var_t + var_u + 2 * shared * sigma**2), (t + 1, u + 1)
            assert _chi2_ok(noise[t] - noise[u], var_t + var_u - 2 * shared * sigma**2), (t + 1, u + 1)


def test_symmetric_noise() -> None:
    sigma, runs, d = 0.7, 20_000, 3
    counter = BinaryCounter((runs, d, d), sigma, np.random.default_rng(4), symmetric=True)
    for t in range(1, 4):
        counter.add(np.zeros((runs, d, d)))
        noise = counter.prefix()
        assert np.array_equal(noise, np.swapaxes(noise, -1, -2))  # exactly symmetric
        variance = t.bit_count() * sigma**2
        rows, cols = np.triu_indices(d, 1)
        assert _chi2_ok(np.diagonal(noise, axis1=-2, axis2=-1), variance)
        assert _chi2_ok(noise[:, rows, cols], variance)
        # Distinct upper entries are independent: Var(x ± y) = 2 variance.
        assert _chi2_ok(noise[:, 0, 1] + noise[:, 0, 2], 2 * variance)
        assert _chi2_ok(noise[:, 0, 1] - noise[:, 1, 1], 2 * variance)


@pytest.mark.parametrize(
    ("shape", "symmetric", "per_psum"), [((7, 3, 3), True, 7 * 6), ((7, 3, 3), False, 63), ((), False, 1)]
)
def test_counter_draws_exactly_the_needed_normals(shape: tuple[int, ...], symmetric: bool, per_psum: int) -> None:
    rng = np.random.default_rng(5)
    counter = BinaryCounter(shape, 2.0, rng, symmetric=symmetric)
    for _ in range(5):
        counter.add(np.ones(shape))
        counter.prefix()
        counter.prefix()
    reference = np.random.default_rng(5)
    reference.standard_normal(5 * per_psum)
    assert np.array_equal(rng.standard_normal(8), reference.standard_normal(8))


def test_counter_bookkeeping_and_repeatable_prefix() -> None:
    counter = BinaryCounter((2,), 1.0, 6, steps=200)
    for t in range(1, 201):
        counter.add([t, -t])
        assert counter.t == t == counter.noise_draws
        assert counter.stored_psums == t.bit_count() == len(prefix_decomposition(t))
        # Only the levels in use are stored: popcount(t) exact and noisy p-sums.
        assert sum(a is not None for a in counter._exact) == t.bit_count()
        first = counter.prefix()
        first += 1e6  # the caller's copy; the counter is unaffected
        assert np.array_equal(counter.prefix(), counter.prefix())
        assert not np.array_equal(counter.prefix(), first)


def test_same_seed_same_output() -> None:
    def run(rng: int | np.random.Generator) -> list[np.ndarray]:
        counter = BinaryCounter((2, 3, 3), 0.5, rng, symmetric=True)
        out = []
        for t in range(20):
            counter.add(np.full((2, 3, 3), float(t)))
            out.append(counter.prefix())
        return out

    a, b, c = run(11), run(np.random.default_rng(11)), run(12)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not any(np.array_equal(x, y) for x, y in zip(a, c))


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: BinaryCounter((2,), -1.0, 0), r"sigma must be >= 0, got -1\.0"),
        (lambda: BinaryCounter((2,), math.nan, 0), "sigma must be a number, got NaN"),
        (lambda: BinaryCounter((2, 3), 1.0, 0, symmetric=True), r"last two axes .* got shape \(2, 3\)"),
        (lambda: BinaryCounter((3,), 1.0, 0, symmetric=True), r"got shape \(3,\)"),
        (lambda: BinaryCounter((2, 0), 1.0, 0), r"shape .* got \(2, 0\)"),
        (lambda: BinaryCounter("ab", 1.0, 0), "shape must be a tuple"),
        (lambda: BinaryCounter((2,), 1.0, "seed"), "rng must be a numpy Generator or an integer seed >= 0, got 'seed'"),
        (lambda: BinaryCounter((2,), 1.0, -3), "rng .* got -3"),
        (lambda: BinaryCounter((2,), 1.0, 0, steps=0), "steps must be an integer >= 1, got 0"),
    ],
)
def test_counter_rejects_bad_construction(make: Callable[[], object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        make()


def test_counter_rejects_bad_items() -> None:
    counter = BinaryCounter((2, 2), 1.0, 0, steps=2)
    with pytest.raises(ValueError, match=r"item 1 must have shape \(2, 2\), got shape \(2,\)"):
        counter.add([1.0, 2.0])
    with pytest.raises(ValueError, match=r"item 1 must be finite, got .*nan.* at index \(0, 1\)"):
        counter.add([[1.0, math.nan], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"item 1 must be finite, got .*inf"):
        counter.add([[1.0, 0.0], [-math.inf, 0.0]])
    with pytest.raises(ValueError, match="item 1 must be a real array"):
        counter.add([["a", "b"], ["c", "d"]])
    assert counter.t == 0  # nothing was added
    counter.add(np.eye(2))
    counter.add(np.eye(2))
    with pytest.raises(ValueError, match="at most steps = 2 items; cannot add item 3"):
        counter.add(np.eye(2))
    assert counter.t == 2


# ----------------------------------------------------------------------------------------
# Utility bounds
# ----------------------------------------------------------------------------------------


def test_symmetric_noise_norm_bound_reference_values() -> None:
    p = 2 * math.exp(-2.0)  # √(8 ln(2/p)) = 4
    assert symmetric_noise_norm_bound(1.0, psums=1, dim=1, failure_probability=p) == pytest.approx(8.0, rel=1e-14)
    assert symmetric_noise_norm_bound(2.0, psums=4, dim=9, failure_probability=p) == pytest.approx(
        2 * 2 * (12 + 4), rel=1e-14
    )
    assert symmetric_noise_norm_bound(2.0, psums=0, dim=9, failure_probability=p) == 0.0
    assert symmetric_noise_norm_bound(0.0, psums=3, dim=9, failure_probability=p) == 0.0
    for bad, match in [
        ((1.0, 1, 0, 0.1), "dim"),
        ((1.0, -1, 2, 0.1), "psums"),
        ((1.0, 1, 2, 1.0), "failure_probability"),
    ]:
        with pytest.raises(ValueError, match=match):
            sigma, psums, dim, p_fail = bad
            symmetric_noise_norm_bound(sigma, psums=psums, dim=dim, failure_probability=p_fail)


@pytest.mark.parametrize(("dim", "t"), [(1, 1), (2, 7), (5, 3), (30, 1), (30, 15)])
def test_symmetric_noise_norm_bound_holds_on_counter_noise(dim: int, t: int) -> None:
    """The noise of prefix t (popcount(t) symmetric matrices) exceeds the bound at most at rate p."""
    sigma, runs, p = 1.3, 2000, 0.3
    counter = BinaryCounter((runs, dim, dim), sigma, np.random.default_rng(dim * 100 + t), symmetric=True)
    for _ in range(t):
        counter.add(np.zeros((runs, dim, dim)))
    norms = np.abs(np.linalg.eigvalsh(counter.prefix())).max(axis=-1)
    bound = symmetric_noise_norm_bound(sigma, psums=counter.stored_psums, dim=dim, failure_probability=p)
    # Failures are Binomial(runs, <= p): allow the upper LEVEL quantile of Binomial(runs, p).
    assert np.count_nonzero(norms > bound) <= stats.binom.isf(LEVEL, runs, p)
    assert np.mean(norms > bound) <= p


# ----------------------------------------------------------------------------------------
# Privacy of one counter
# ----------------------------------------------------------------------------------------


@settings(max_examples=examples(100))
@given(steps=st.integers(1, 10**9), sigma=st.floats(0.01, 100.0), sens=st.floats(0.01, 100.0), schedule=schedule_st)
def test_tree_mu_is_sensitivity_sqrt_m_over_sigma(steps: int, sigma: float, sens: float, schedule: str) -> None:
    m = max_psums_per_item(steps, schedule=schedule)
    mu = tree_mu(steps, sigma=sigma, sensitivity=sens, schedule=schedule)
    if m == 0:
        assert mu == 0.0
        return
    assert mu == pytest.approx(sens * math.sqrt(m) / sigma, rel=4e-15)  # a few ulps: rounded up
    assert mu >= ref.gaussian_mu(sens, sigma, m)  # rounded up
    ledger = tree_ledger(steps, sigma=sigma, sensitivity=sens, schedule=schedule)
    assert ledger == Ledger.homogeneous(sens, sigma, compositions=m, name="binary-counter")
    assert ledger.compositions == m and ledger.mu == mu


@settings(max_examples=examples(60))
@given(
    steps=st.integers(2, 10**6),
    sigma=st.floats(0.5, 100.0),
    sens=st.floats(0.1, 10.0),
    delta=delta_st,
    schedule=schedule_st,
    mc=st.sampled_from([*FAST, ("classic", None)]),
)
def test_tree_guarantees_are_the_m_fold_gaussian(
    steps: int, sigma: float, sens: float, delta: float, schedule: str, mc: tuple[str, str | None]
) -> None:
    m = max_psums_per_item(steps, schedule=schedule)
    try:
        expected = gaussian_epsilon(sigma, delta, sensitivity=sens, compositions=m, method=mc[0], conversion=mc[1])
    except ValueError:  # classic refuses ε >= 1 per release; so must the tree
        with pytest.raises(ValueError):
            tree_epsilon(
                steps, sigma=sigma, delta=delta, sensitivity=sens, schedule=schedule, method=mc[0], conversion=mc[1]
            )
        return
    assert (
        tree_epsilon(
            steps, sigma=sigma, delta=delta, sensitivity=sens, schedule=schedule, method=mc[0], conversion=mc[1]
        )
        == expected
    )
    if expected.epsilon > 0:
        assert tree_delta(
            steps,
            sigma=sigma,
            epsilon=expected.epsilon,
            sensitivity=sens,
            schedule=schedule,
            method=mc[0],
            conversion=mc[1],
        ) == gaussian_delta(sigma, expected.epsilon, sensitivity=sens, compositions=m, method=mc[0], conversion=mc[1])


def _chain(steps: int, sigma: float, delta: float, schedule: str, with_pld: bool) -> None:
    eps = {}
    for key, mc in [
        ("exact", ("exact", None)),
        ("pld", ("pld", None)),
        ("rdp", ("rdp", "improved")),
        ("rdp-mironov", ("rdp", "mironov")),
        ("zcdp-rdp-optimal", ("zcdp", "rdp-optimal")),
        ("zcdp", ("zcdp", "bun-steinke")),
        ("classic", ("classic", None)),
    ]:
        if key == "pld" and not with_pld:
            continue
        try:
            eps[key] = tree_epsilon(
                steps, sigma=sigma, delta=delta, sensitivity=1.0, schedule=schedule, method=mc[0], conversion=mc[1]
            ).epsilon
        except ValueError:
            assert key == "classic"
    chain = [eps[k] for k in ("exact", "pld", "rdp", "rdp-mironov", "zcdp") if k in eps]
    assert all(a <= b for a, b in itertools.pairwise(chain)), eps
    assert eps["exact"] <= eps["zcdp-rdp-optimal"] <= eps["zcdp"], eps
    assert eps["rdp"] == pytest.approx(eps["zcdp-rdp-optimal"], rel=1e-9)
    if "classic" in eps:
        assert eps["exact"] <= eps["classic"], eps


@settings(max_examples=examples(60))
@given(steps=st.integers(1, 10**6), sigma=st.floats(0.3, 200.0), delta=delta_st, schedule=schedule_st)
def test_method_order(steps: int, sigma: float, delta: float, schedule: str) -> None:
    if max_psums_per_item(steps, schedule=schedule):
        _chain(steps, sigma, delta, schedule, with_pld=False)


@pytest.mark.parametrize(
    ("steps", "sigma", "delta", "schedule"),
    [(1000, 20.0, 1e-5, "before-episode"), (1024, 8.0, 1e-6, "after-each"), (50, 3.0, 1e-3, "before-episode")],
)
def test_tree_matches_dp_accounting(steps: int, sigma: float, delta: float, schedule: str) -> None:
    m = max_psums_per_item(steps, schedule=schedule)
    mu = tree_mu(steps, sigma=sigma, schedule=schedule)
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(sigma), m)
    # PLD: ours is dp-accounting's figure, raised to the exact one if discretisation undercut it.
    theirs = dp_pld.PLDAccountant(value_discretization_interval=auto_discretization(mu))
    theirs.compose(event)
    exact = tree_epsilon(steps, sigma=sigma, delta=delta, schedule=schedule).epsilon
    ours = tree_epsilon(steps, sigma=sigma, delta=delta, schedule=schedule, method="pld").epsilon
    assert ours == pytest.approx(max(theirs.get_epsilon(delta), exact), rel=1e-12)
    assert exact <= ours <= exact + 1e-3 * max(1.0, exact)
    # One Gaussian mechanism with sensitivity √m: the same privacy as the m-fold composition.
    single = dp_pld.PLDAccountant(value_discretization_interval=auto_discretization(mu))
    single.compose(dp_accounting.GaussianDpEvent(sigma / math.sqrt(m)))
    assert single.get_epsilon(delta) == pytest.approx(theirs.get_epsilon(delta), rel=1e-3)
    # RDP at dp-accounting's orders.
    rdp = dp_rdp.RdpAccountant(DP_ORDERS)
    rdp.compose(event)
    ours_rdp = tree_epsilon(steps, sigma=sigma, delta=delta, schedule=schedule, method="rdp", orders=DP_ORDERS).epsilon
    assert ours_rdp == pytest.approx(rdp.get_epsilon(delta), rel=1e-9)
    _chain(steps, sigma, delta, schedule, with_pld=True)


@settings(max_examples=examples(60))
@given(
    steps=st.integers(2, 10**6),
    eps=st.floats(0.01, 50.0),
    delta=delta_st,
    sens=st.floats(0.01, 100.0),
    schedule=schedule_st,
    mc=st.sampled_from(FAST),
)
def test_calibration_round_trips(
    steps: int, eps: float, delta: float, sens: float, schedule: str, mc: tuple[str, str | None]
) -> None:
    cal = calibrate_tree_sigma(
        steps, epsilon=eps, delta=delta, sensitivity=sens, schedule=schedule, method=mc[0], conversion=mc[1]
    )
    m = max_psums_per_item(steps, schedule=schedule)
    assert cal.compositions == m and cal.sensitivity == sens and cal.epsilon <= eps
    assert cal == calibrate_sigma(eps, delta, sensitivity=sens, compositions=m, method=mc[0], conversion=mc[1])
    again = tree_epsilon(
        steps, sigma=cal.sigma, delta=delta, sensitivity=sens, schedule=schedule, method=mc[0], conversion=mc[1]
    ).epsilon
    assert again == cal.epsilon <= eps
    assert again == pytest.approx(eps, rel=1e-9)


def test_pld_calibration_round_trips() -> None:
    cal = calibrate_tree_sigma(1000, epsilon=1.0, delta=1e-5, sensitivity=1.0, schedule="before-episode", method="pld")
    assert cal.compositions == 10
    again = tree_epsilon(
        1000, sigma=cal.sigma, delta=1e-5, sensitivity=1.0, schedule="before-episode", method="pld"
    ).epsilon
    assert again <= 1.0 and again == pytest.approx(1.0, rel=1e-6)


def test_nothing_released() -> None:
    """before-episode with K = 1: no p-sum is released, so no privacy is spent."""
    for mc in [*FAST, ("pld", None), ("classic", None)]:
        g = tree_epsilon(
            1, sigma=2.0, delta=1e-5, sensitivity=1.0, schedule="before-episode", method=mc[0], conversion=mc[1]
        )
        acc = make_accountant(mc[0], conversion=mc[1])
        assert (g.epsilon, g.delta, g.method, g.conversion) == (0.0, 1e-5, acc.method, acc.conversion)
        d = tree_delta(
            1, sigma=2.0, epsilon=0.5, sensitivity=1.0, schedule="before-episode", method=mc[0], conversion=mc[1]
        )
        assert (d.epsilon, d.delta) == (0.5, 0.0)
    assert tree_mu(1, sigma=2.0, schedule="before-episode") == 0.0
    with pytest.raises(ValueError, match="nothing is released"):
        tree_ledger(1, sigma=2.0, schedule="before-episode")
    with pytest.raises(ValueError, match="nothing is released"):
        calibrate_tree_sigma(1, epsilon=1.0, delta=1e-5, schedule="before-episode")
    with pytest.raises(ValueError, match="nothing is released"):
        worst_item(1, schedule="before-episode")


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: psums_per_item(0), "steps must be an integer >= 1, got 0"),
        (lambda: psums_per_item(2.5), "steps must be an integer >= 1, got 2.5"),
        (
            lambda: max_psums_per_item(4, schedule="after"),
            "schedule must be one of after-each, before-episode; got 'after'",
        ),
        (lambda: psum_interval(0), "t must be an integer >= 1, got 0"),
        (lambda: prefix_decomposition(-1), "t must be an integer >= 0, got -1"),
        (lambda: prefix_noise_variance(3, -1.0), "sigma must be >= 0"),
        (lambda: paper_depth(10, base=1.0), "base must be > 1, got 1.0"),
        (lambda: paper_depth(0), "steps must be an integer >= 1, got 0"),
        (lambda: tree_mu(10, sigma=0.0), "sigma must be > 0, got 0.0"),
        (lambda: tree_mu(10, sigma=1.0, sensitivity=-2.0), "sensitivity must be > 0, got -2.0"),
        (lambda: tree_epsilon(10, sigma=1.0, delta=1.5), "delta must lie in the closed interval"),
        (
            lambda: tree_epsilon(1, sigma=1.0, delta=1.5, schedule="before-episode"),
            "delta must lie in the closed interval",
        ),
        (lambda: tree_epsilon(10, sigma=1.0, delta=1e-5, method="gdp"), "method must be one of"),
        (lambda: tree_delta(10, sigma=1.0, epsilon=-1.0), "epsilon must be >= 0, got -1.0"),
        (lambda: calibrate_tree_sigma(10, epsilon=-1.0, delta=1e-5), "epsilon must be >= 0, got -1.0"),
        (lambda: tree_ledger(10, sigma=1.0, name=""), "release name must be a non-empty string"),
    ],
)
def test_bad_arguments_are_named(call: Callable[[], object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


def test_counter_takes_one_sigma_per_batch_index() -> None:
    import numpy as np

    from dpkit.accountant.tree import BinaryCounter

    c = BinaryCounter((3, 2, 2), [1.0, 0.0, 100.0], 0, symmetric=True, steps=4)
    c.add(np.zeros((3, 2, 2)))
    noise = c.prefix()
    assert np.all(noise[1] == 0.0) and np.abs(noise[2]).max() > np.abs(noise[0]).max()  # σ = 0 adds none
    assert np.array_equal(noise, np.swapaxes(noise, 1, 2))  # symmetric in every batch index
    with pytest.raises(ValueError, match="batch axis"):
        BinaryCounter((3, 3), [1.0, 2.0, 3.0], 0, symmetric=True)
    with pytest.raises(ValueError, match="first axis"):
        BinaryCounter((3, 2), [1.0, 2.0], 0)
