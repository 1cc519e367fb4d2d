"""Executors and batched runs: outputs bit-identical across executors and worker counts, checks, seeds."""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tiers import examples

from dpkit.algorithms.executors import (
    EXECUTORS,
    AutoExecutor,
    DaskExecutor,
    InProcessExecutor,
    ProcessPoolExecutor,
    make_executor,
    run_batched,
    run_pair,
    spawn_seeds,
)

DATASET = np.array([0.5, 1.0, -2.0])


# Release functions and tasks must be top-level (picklable by reference) for process pools and Dask.


def noisy_sum(dataset, rng, n):
    """A Gaussian mechanism on the sum, with a vector output: shape (n, 3)."""
    return float(np.sum(dataset)) + rng.standard_normal((n, 3))


def scalar_release(dataset, rng, n):
    """One scalar per run plus a uniform: shape (n,)."""
    return float(np.sum(dataset)) + rng.uniform(size=n)


def short_last_chunk(dataset, rng, n):
    """Returns one row too few for any chunk shorter than 10 runs."""
    return rng.standard_normal(n if n == 10 else n - 1)


def nan_in_short_chunk(dataset, rng, n):
    out = rng.standard_normal((n, 2))
    if n != 10:
        out[0, 1] = np.nan
    return out


def inf_everywhere(dataset, rng, n):
    return np.full(n, np.inf)


def slow_release(dataset, rng, n):
    """About a millisecond a run (a slow target)."""
    time.sleep(1e-3 * n)
    return float(np.sum(dataset)) + rng.standard_normal((n, 2))


def ragged_trailing(dataset, rng, n):
    """Trailing shape (2,) for full chunks of 10, (3,) for the others."""
    return rng.standard_normal((n, 2 if n == 10 else 3))


def scalar_output(dataset, rng, n):
    return np.float64(rng.standard_normal())


def string_output(dataset, rng, n):
    return np.array(["x"] * n)


def bool_release(dataset, rng, n):
    return rng.uniform(size=n) < 0.5


def slow_identity(x):
    """Earlier tasks take longer, so tasks finish in reverse order."""
    time.sleep(0.05 * (4 - x))
    return x


def fail_on_two(x):
    if x == 2:
        raise ValueError("task 2 failed")
    return x


def manual_runs(release, dataset, n, seed, chunk_size):
    """The documented contract, written out: chunk i gets child i of SeedSequence(seed)."""
    n_chunks = -(-n // chunk_size)
    children = np.random.SeedSequence(seed).spawn(n_chunks)
    sizes = [min(chunk_size, n - i * chunk_size) for i in range(n_chunks)]
    return np.concatenate([release(dataset, np.random.default_rng(c), m) for c, m in zip(children, sizes)])


# ---------------------------------------------------------------------------------------------
# Fixtures: pools are started once per module (spawn start-up is the slow part).


@pytest.fixture(scope="module")
def pool1():
    with ProcessPoolExecutor(1) as ex:
        yield ex


@pytest.fixture(scope="module")
def pool2():
    with ProcessPoolExecutor(2) as ex:
        yield ex


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("dask.distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def dask_executor(dask_client):
    return DaskExecutor(client=dask_client)


# ---------------------------------------------------------------------------------------------
# The contract and reproducibility


def test_matches_the_documented_seed_contract():
    out = run_batched(noisy_sum, DATASET, 2_345, 7, chunk_size=1_000)
    assert out.shape == (2_345, 3)
    np.testing.assert_array_equal(out, manual_runs(noisy_sum, DATASET, 2_345, 7, 1_000))


@settings(max_examples=examples(60))
@given(n=st.integers(1, 300), chunk_size=st.integers(1, 120), seed=st.integers(0, 2**64))
def test_contract_for_any_n_and_chunk_size(n, chunk_size, seed):
    out = run_batched(scalar_release, DATASET, n, seed, chunk_size=chunk_size)
    assert out.shape == (n,)
    np.testing.assert_array_equal(out, manual_runs(scalar_release, DATASET, n, seed, chunk_size))


def test_same_seed_same_output_and_different_seeds_differ():
    a = run_batched(noisy_sum, DATASET, 500, 11, chunk_size=64)
    b = run_batched(noisy_sum, DATASET, 500, 11, chunk_size=64)
    c = run_batched(noisy_sum, DATASET, 500, 12, chunk_size=64)
    np.testing.assert_array_equal(a, b)
    assert not np.any(a == c)


def test_seed_sequence_seed_equals_int_seed_and_is_not_consumed():
    ss = np.random.SeedSequence(11)
    a = run_batched(noisy_sum, DATASET, 500, ss, chunk_size=64)
    b = run_batched(noisy_sum, DATASET, 500, ss, chunk_size=64)  # spawn() would have advanced ss
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, run_batched(noisy_sum, DATASET, 500, 11, chunk_size=64))
    assert ss.n_children_spawned == 0


def test_chunk_size_changes_the_stream_not_the_shape():
    a = run_batched(noisy_sum, DATASET, 1_000, 3, chunk_size=100)
    b = run_batched(noisy_sum, DATASET, 1_000, 3, chunk_size=250)
    assert a.shape == b.shape == (1_000, 3)
    assert not np.array_equal(a, b)
    # the first chunk is the same stream (child 0), only its length differs
    np.testing.assert_array_equal(a[:100], b[:100])


@pytest.mark.parametrize(("n", "chunk_size"), [(1, 10_000), (7, 10), (10, 10), (23, 10), (1_001, 100), (5, 1)])
def test_n_relative_to_chunk_size(n, chunk_size):
    out = run_batched(scalar_release, DATASET, n, 0, chunk_size=chunk_size)
    assert out.shape == (n,)
    np.testing.assert_array_equal(out, manual_runs(scalar_release, DATASET, n, 0, chunk_size))


def test_n_below_chunk_size_is_one_chunk_with_child_zero():
    out = run_batched(noisy_sum, DATASET, 37, 5)
    expected = noisy_sum(DATASET, np.random.default_rng(np.random.SeedSequence(5).spawn(1)[0]), 37)
    np.testing.assert_array_equal(out, expected)


def test_bool_outputs_are_accepted():
    out = run_batched(bool_release, DATASET, 55, 1, chunk_size=10)
    assert out.dtype == bool and out.shape == (55,)


def test_spawn_seeds():
    seeds = spawn_seeds(4, 3)
    for mine, theirs in zip(seeds, np.random.SeedSequence(4).spawn(3)):
        assert mine.entropy == theirs.entropy and mine.spawn_key == theirs.spawn_key
    assert [s.spawn_key for s in spawn_seeds(seeds[1], 2)] == [(1, 0), (1, 1)]


# ---------------------------------------------------------------------------------------------
# Bit-identical across executors and worker counts


def test_identical_across_in_process_and_process_pools(pool1, pool2):
    reference = run_batched(noisy_sum, DATASET, 20_003, 42, chunk_size=1_000)
    for ex in (InProcessExecutor(), pool1, pool2):
        out = run_batched(noisy_sum, DATASET, 20_003, 42, executor=ex, chunk_size=1_000)
        assert out.dtype == reference.dtype
        np.testing.assert_array_equal(out, reference)
    assert pool1.workers == 1 and pool2.workers == 2


def test_identical_on_dask(dask_executor):
    reference = run_batched(noisy_sum, DATASET, 20_003, 42, chunk_size=1_000)
    out = run_batched(noisy_sum, DATASET, 20_003, 42, executor=dask_executor, chunk_size=1_000)
    np.testing.assert_array_equal(out, reference)
    assert dask_executor.workers == 2


@pytest.mark.parametrize("which", ["pool2", "dask_executor"])
def test_run_pair_identical_on_process_pool_and_dask(which, request):
    ex = request.getfixturevalue(which)
    reference = run_pair(noisy_sum, DATASET, DATASET, 3_001, 9, chunk_size=500)
    out0, out1 = run_pair(noisy_sum, DATASET, DATASET, 3_001, 9, executor=ex, chunk_size=500)
    np.testing.assert_array_equal(out0, reference[0])
    np.testing.assert_array_equal(out1, reference[1])


@pytest.mark.parametrize("which", ["in-process", "pool2", "dask"])
def test_map_keeps_task_order(which, request):
    ex = (
        InProcessExecutor()
        if which == "in-process"
        else request.getfixturevalue("pool2" if which == "pool2" else "dask_executor")
    )
    done = []
    assert ex.map(slow_identity, [0, 1, 2, 3], on_done=lambda i, r: done.append((i, r))) == [0, 1, 2, 3]
    assert sorted(done) == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert ex.map(slow_identity, []) == []
    assert ex.map(slow_identity, [3, 2]) == [3, 2]


@pytest.mark.parametrize("which", ["in-process", "pool2", "dask"])
def test_task_exceptions_propagate(which, request):
    ex = (
        InProcessExecutor()
        if which == "in-process"
        else request.getfixturevalue("pool2" if which == "pool2" else "dask_executor")
    )
    with pytest.raises(ValueError, match="task 2 failed"):
        ex.map(fail_on_two, [0, 1, 2, 3])
    assert ex.map(fail_on_two, [0, 1]) == [0, 1]  # still usable afterwards


# ---------------------------------------------------------------------------------------------
# Checks on the release's output


@pytest.mark.parametrize(
    ("release", "message"),
    [
        (short_last_chunk, r"chunk 2 \(runs 20\.\.22\).*leading axis of length 3"),
        (nan_in_short_chunk, r"1 non-finite value.*chunk 2 \(runs 20\.\.22\)"),
        (inf_everywhere, r"10 non-finite value.*chunk 0 \(runs 0\.\.9\)"),
        (ragged_trailing, r"shape \(3, 3\) for chunk 2 \(runs 20\.\.22\).*trailing shape \(2,\) as for chunk 0"),
        (scalar_output, r"shape \(\) for chunk 0"),
        (string_output, r"non-numeric array.*chunk 0"),
    ],
)
def test_bad_release_output_names_the_chunk(release, message):
    with pytest.raises(ValueError, match=message):
        run_batched(release, DATASET, 23, 0, chunk_size=10)


@pytest.mark.parametrize("which", ["pool1", "dask_executor"])
def test_bad_release_output_names_the_chunk_on_parallel_executors(which, request):
    ex = request.getfixturevalue(which)
    with pytest.raises(ValueError, match=r"non-finite.*chunk 2 \(runs 20\.\.22\)"):
        run_batched(nan_in_short_chunk, DATASET, 23, 0, executor=ex, chunk_size=10)
    with pytest.raises(ValueError, match=r"chunk 2 \(runs 20\.\.22\).*trailing shape"):
        run_batched(ragged_trailing, DATASET, 23, 0, executor=ex, chunk_size=10)


# ---------------------------------------------------------------------------------------------
# Progress


@pytest.mark.parametrize("which", ["in-process", "pool2", "dask"])
def test_progress_increments_sum_to_n(which, request):
    ex = (
        InProcessExecutor()
        if which == "in-process"
        else request.getfixturevalue("pool2" if which == "pool2" else "dask_executor")
    )
    seen = []
    out = run_batched(scalar_release, DATASET, 2_345, 1, executor=ex, chunk_size=500, progress=seen.append)
    assert out.shape == (2_345,)
    assert sorted(seen) == [345, 500, 500, 500, 500]
    assert sum(seen) == 2_345


def test_progress_in_process_follows_chunk_order():
    seen = []
    run_batched(scalar_release, DATASET, 25, 1, chunk_size=10, progress=seen.append)
    assert seen == [10, 10, 5]
    assert list(np.cumsum(seen)) == [10, 20, 25]


def test_run_pair_progress_counts_both_datasets():
    seen = []
    run_pair(scalar_release, DATASET, DATASET, 25, 1, chunk_size=10, progress=seen.append)
    assert sum(seen) == 50


# ---------------------------------------------------------------------------------------------
# Pairs


def test_run_pair_independent_streams_and_reproducible():
    out0, out1 = run_pair(noisy_sum, DATASET, DATASET, 1_000, 5, chunk_size=300)
    assert out0.shape == out1.shape == (1_000, 3)
    assert not np.any(out0 == out1)  # identical datasets, independent streams
    again0, again1 = run_pair(noisy_sum, DATASET, DATASET, 1_000, 5, chunk_size=300)
    np.testing.assert_array_equal(out0, again0)
    np.testing.assert_array_equal(out1, again1)
    s0, s1 = np.random.SeedSequence(5).spawn(2)
    np.testing.assert_array_equal(out0, run_batched(noisy_sum, DATASET, 1_000, s0, chunk_size=300))
    np.testing.assert_array_equal(out1, run_batched(noisy_sum, DATASET, 1_000, s1, chunk_size=300))
    # neither stream is the plain run_batched stream of the same seed
    assert not np.array_equal(out0, run_batched(noisy_sum, DATASET, 1_000, 5, chunk_size=300))


def test_run_pair_uses_each_dataset():
    out0, out1 = run_pair(scalar_release, np.zeros(2), np.full(2, 50.0), 200, 0)
    assert np.all(out0 < 1.0) and np.all(out1 >= 100.0)


# ---------------------------------------------------------------------------------------------
# Bad inputs


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, r"n must be an integer >= 1, got 0"),
        ({"n": -5}, r"n must be an integer >= 1, got -5"),
        ({"n": 2.5}, r"n must be an integer >= 1, got 2\.5"),
        ({"chunk_size": 0}, r"chunk_size must be an integer >= 1, got 0"),
        ({"chunk_size": True}, r"chunk_size must be an integer >= 1, got True"),
        ({"seed": -1}, r"seed must be an integer >= 0.*got -1"),
        ({"seed": 1.5}, r"seed must be an integer >= 0.*got 1\.5"),
        ({"seed": None}, r"seed must be an integer >= 0.*got None"),
        ({"release": "noisy_sum"}, r"release must be callable, got 'noisy_sum'"),
        ({"executor": "processes"}, r"executor must be an Executor.*got 'processes'"),
        ({"progress": 3}, r"progress must be callable or None, got 3"),
    ],
)
def test_run_batched_bad_inputs(kwargs, message):
    args = {"release": noisy_sum, "dataset": DATASET, "n": 10, "seed": 0} | kwargs
    with pytest.raises(ValueError, match=message):
        run_batched(**args)


def test_run_pair_bad_inputs():
    with pytest.raises(ValueError, match="n must be an integer >= 1, got 0"):
        run_pair(noisy_sum, DATASET, DATASET, 0, 0)
    with pytest.raises(ValueError, match="seed must be an integer >= 0.*got -3"):
        run_pair(noisy_sum, DATASET, DATASET, 5, -3)


def test_spawn_seeds_bad_inputs():
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        spawn_seeds(0, 0)
    with pytest.raises(ValueError, match="seed must be .*got 'abc'"):
        spawn_seeds("abc", 2)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("threads",), {}, r"executor must be one of in-process, processes, dask, auto; got 'threads'"),
        (("processes",), {"workers": 0}, r"workers must be an integer >= 1, got 0"),
        (("processes",), {"workers": -2}, r"workers must be an integer >= 1, got -2"),
        (("processes",), {"workers": 1.5}, r"workers must be an integer >= 1, got 1\.5"),
        (
            ("in-process",),
            {"workers": 2},
            r"workers applies only to the 'processes' and 'auto' executors.*got workers=2",
        ),
        (("processes",), {"scheduler": "tcp://x:1"}, r"scheduler applies only to the 'dask' executor.*'tcp://x:1'"),
        (
            ("dask",),
            {"workers": 4, "scheduler": "tcp://x:1"},
            r"workers applies only to the 'processes' and 'auto' executors.*got workers=4",
        ),
    ],
)
def test_make_executor_bad_inputs(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_executor(*args, **kwargs)


def test_process_pool_bad_start_method():
    with pytest.raises(ValueError, match=r"start_method must be one of spawn, forkserver, fork; got 'thread'"):
        ProcessPoolExecutor(2, start_method="thread")


def test_dask_executor_needs_exactly_one_of_scheduler_and_client():
    with pytest.raises(ValueError, match="exactly one of scheduler.*scheduler=None and client=None"):
        DaskExecutor()
    with pytest.raises(ValueError, match="exactly one of scheduler"):
        DaskExecutor("tcp://x:1", client=object())
    with pytest.raises(ValueError, match="scheduler must be a scheduler address.*got ''"):
        DaskExecutor("")


def test_dask_missing_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ValueError, match=r"install dpkit\[distributed\]"):
        make_executor("dask", scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match=r"install dpkit\[distributed\]"):
        DaskExecutor(client=object())


# ---------------------------------------------------------------------------------------------
# Construction


def test_make_executor_names_and_defaults():
    assert EXECUTORS == ("in-process", "processes", "dask", "auto")
    ex = make_executor()
    assert isinstance(ex, InProcessExecutor) and ex.name == "in-process" and ex.workers == 1
    with make_executor("processes", workers=3) as pool:
        assert isinstance(pool, ProcessPoolExecutor) and pool.name == "processes" and pool.workers == 3
        assert pool.start_method == "spawn"
    assert make_executor("processes").workers >= 1


def test_make_executor_dask_by_address(dask_client):
    address = dask_client.scheduler.address
    with make_executor("dask", scheduler=address) as ex:
        assert isinstance(ex, DaskExecutor) and ex.name == "dask" and ex.workers == 2
        np.testing.assert_array_equal(
            run_batched(scalar_release, DATASET, 250, 3, executor=ex, chunk_size=100),
            run_batched(scalar_release, DATASET, 250, 3, chunk_size=100),
        )
        own_client = ex.client
    assert ex.client is None and own_client.status == "closed"
    assert dask_client.status == "running"  # a given client is left open


def test_dask_given_client_is_not_closed(dask_client):
    ex = DaskExecutor(client=dask_client)
    ex.close()
    assert ex.client is dask_client and dask_client.status == "running"


@pytest.mark.slow
def test_dask_without_scheduler_starts_a_local_cluster_with_the_same_result():
    """`make_executor("dask")` with no scheduler runs on a LocalCluster it closes itself; the runs
    are the same as in-process (seeds per chunk)."""
    with make_executor("dask", workers=1) as pool:
        assert pool.scheduler is not None and pool.workers >= 1
        remote = run_batched(scalar_release, 0.0, 50, 3, executor=pool, chunk_size=20)
    assert pool.client is None
    np.testing.assert_array_equal(remote, run_batched(scalar_release, 0.0, 50, 3, chunk_size=20))


def test_unreachable_dask_scheduler_is_one_error_naming_it(monkeypatch):
    monkeypatch.setattr(DaskExecutor, "connect_timeout", 1.0)
    with pytest.raises(ValueError, match=r"cannot reach the Dask scheduler at 'tcp://127.0.0.1:9'"):
        DaskExecutor("tcp://127.0.0.1:9")


# ---------------------------------------------------------------------------------------------
# The auto executor


def test_auto_executor_moves_slow_work_to_a_pool_and_the_result_does_not_change():
    reference = run_pair(slow_release, DATASET, DATASET, 200, 4, chunk_size=25)
    with AutoExecutor(workers=2, slow_seconds=0.05) as auto:
        assert auto.name == "in-process" and auto.workers == 1
        seen = []
        out0, out1 = run_pair(
            slow_release, DATASET, DATASET, 200, 4, chunk_size=25, executor=auto, progress=seen.append
        )
        # the first chunk ran here (25 ms measured), the 15 left (~0.4 s projected) on the pool
        assert auto.name == "processes" and auto.workers == 2 and auto.switched_after == 25
        assert "a process pool from then on" in auto.describe() and sum(seen) == 400
        again = run_pair(slow_release, DATASET, DATASET, 50, 5, chunk_size=25, executor=auto)  # stays on the pool
    np.testing.assert_array_equal(out0, reference[0])
    np.testing.assert_array_equal(out1, reference[1])
    np.testing.assert_array_equal(again[0], run_pair(slow_release, DATASET, DATASET, 50, 5, chunk_size=25)[0])


def test_auto_executor_stays_in_process_for_cheap_or_unpicklable_work():
    with AutoExecutor(workers=2) as auto:  # 2 s of projected work before it moves
        run_pair(noisy_sum, DATASET, DATASET, 20_000, 1, chunk_size=1_000, executor=auto)
        assert auto.name == "in-process" and auto.switched_after is None and auto.describe() == "in-process"
    closure = lambda ds, rng, n: slow_release(ds, rng, n)  # noqa: E731 - does not pickle
    with AutoExecutor(workers=2, slow_seconds=0.0) as auto:
        run_batched(closure, DATASET, 60, 2, chunk_size=20, executor=auto)
        assert auto.name == "in-process" and "does not pickle" in auto.describe()
    with AutoExecutor(workers=1, slow_seconds=0.0) as auto:  # one core: nothing to gain
        run_batched(slow_release, DATASET, 60, 2, chunk_size=20, executor=auto)
        assert auto.name == "in-process"


def test_auto_executor_bad_inputs():
    with pytest.raises(ValueError, match="slow_seconds must be a finite number >= 0, got -1"):
        AutoExecutor(slow_seconds=-1)
    with pytest.raises(ValueError, match="workers"):
        AutoExecutor(workers=0)
    assert isinstance(make_executor("auto", workers=3), AutoExecutor)
