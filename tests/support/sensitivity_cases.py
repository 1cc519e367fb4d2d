"""The closed-form sensitivity cases the tests share: each closed form of :mod:`dpkit.accountant.sensitivity` with an
additive statistic that has exactly that sensitivity, a sampler of admissible users and a pair attaining it
(tests/accountant/test_sensitivity.py checks the closed forms on them, tests/audits/test_sensitivity_check.py the
empirical checker)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from dpkit.accountant.sensitivity import (
    RELATIONS,
    SensitivityNoise,
    clip_norm,
    episode_outer_product_sensitivity,
    episode_product_sensitivity,
    episode_sum_sensitivity,
    outer_product_sensitivity,
    product_sensitivity,
    symmetric_matrix_sensitivity,
    upper_triangle,
    vector_sensitivity,
)

B, V, C, H = 1.5, 0.5, 2.0, 3  # vector bound, scalar bound, Frobenius bound, episode length


def e(i: int, d: int) -> np.ndarray:
    out = np.zeros(d)
    out[i] = 1.0
    return out


def clip(z: np.ndarray, bound: float, nonnegative: bool = False) -> np.ndarray:
    return clip_norm(np.maximum(z, 0.0) if nonnegative else z, bound)


def release(g: np.ndarray, noise: str) -> np.ndarray:
    """What a batch of symmetric matrices (batch, d, d) releases under ``noise``."""
    return upper_triangle(g) if noise == "upper" else g.reshape(len(g), -1)


@dataclass(frozen=True)
class Case:
    """One closed form with an additive statistic that has exactly that sensitivity."""

    name: str
    claim: Callable[[str], float]  # relation -> closed form
    fv: Callable[[np.ndarray], np.ndarray]  # vectorised f: (batch, n_users, p) -> (batch, ...)
    project_many: Callable[[np.ndarray], np.ndarray]  # (n, p) -> admissible (n, p)
    p: int
    worst: Callable[[str], tuple[np.ndarray, np.ndarray | None]]  # a pair attaining the claim

    def f(self, dataset: np.ndarray) -> np.ndarray:
        return self.fv(dataset[None])[0]

    def project(self, z: np.ndarray) -> np.ndarray:
        return self.project_many(z[None])[0]

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # Gaussian directions at log-uniform radii: many land inside, many are clipped onto the sphere.
        raw = rng.standard_normal((n, self.p)) * 10.0 ** rng.uniform(-1.0, 0.7, (n, 1))
        return self.project_many(raw)

    def _repr__(self) -> str:
        return self.name


def pair(add: np.ndarray, replace: tuple[np.ndarray, np.ndarray]) -> Callable[[str], tuple]:
    return lambda relation: (add, None) if relation == "add_remove" else replace


def vector_case(nn: bool, d: int = 3) -> Case:
    return Case(
        f"vector(nonnegative={nn})",
        lambda r: vector_sensitivity(B, r, nonnegative=nn),
        lambda D: D.sum(axis=-2),
        lambda Z: clip(Z, B, nn),
        d,
        pair(B * e(0, d), (B * e(0, d), B * (e(1, d) if nn else -e(0, d)))),
    )


def outer_case(noise: str, d: int = 3) -> Case:
    return Case(
        f"outer_product(noise={noise})",
        lambda r: outer_product_sensitivity(B, r, noise=noise),
        lambda D: release(np.einsum("bni,bnj->bij", D, D), noise),
        lambda Z: clip(Z, B),
        d,
        pair(B * e(0, d), (B * e(0, d), B * e(1, d))),
    )


def symmetric_project(psd: bool, d: int) -> Callable[[np.ndarray], np.ndarray]:
    def project(Z: np.ndarray) -> np.ndarray:
        m = Z.reshape(len(Z), d, d)
        m = (m + np.swapaxes(m, -1, -2)) / 2
        if psd:
            w, q = np.linalg.eigh(m)
            m = np.einsum("nij,nj,nkj->nik", q, np.maximum(w, 0.0), q)
            m = (m + np.swapaxes(m, -1, -2)) / 2
        return clip_norm(m, C, axis=(-2, -1)).reshape(len(Z), d * d)

    return project


def symmetric_case(psd: bool, noise: str, d: int = 2) -> Case:
    e11, e22 = np.diag(e(0, d)).ravel() * C, np.diag(e(1, d)).ravel() * C
    return Case(
        f"symmetric_matrix(psd={psd}, noise={noise})",
        lambda r: symmetric_matrix_sensitivity(C, r, psd=psd, noise=noise),
        lambda D: release(D.reshape(*D.shape[:2], d, d).sum(axis=1), noise),
        symmetric_project(psd, d),
        d * d,
        pair(e11, (e11, e22 if psd else -e11)),
    )


def product_project(nn: bool, d: int, steps: int) -> Callable[[np.ndarray], np.ndarray]:
    def project(Z: np.ndarray) -> np.ndarray:
        r = Z.reshape(len(Z), steps, d + 1)
        x = clip(r[..., :d], B, nn)
        v = np.clip(r[..., d:], 0.0 if nn else -V, V)
        return np.concatenate([x, v], axis=-1).reshape(len(Z), -1)

    return project


def product_fv(d: int, steps: int) -> Callable[[np.ndarray], np.ndarray]:
    def fv(D: np.ndarray) -> np.ndarray:
        r = D.reshape(*D.shape[:2], steps, d + 1)
        return (r[..., :d] * r[..., d:]).sum(axis=(1, 2))

    return fv


def product_case(nn: bool, d: int = 3) -> Case:
    u = np.append(B * e(0, d), V)
    return Case(
        f"product(nonnegative={nn})",
        lambda r: product_sensitivity(B, scalar_bound=V, relation=r, nonnegative=nn),
        product_fv(d, 1),
        product_project(nn, d, 1),
        d + 1,
        pair(u, (u, np.append(B * e(1, d), V) if nn else np.append(B * e(0, d), -V))),
    )


def episode_sum_case(nn: bool, d: int = 2) -> Case:
    def project(Z: np.ndarray) -> np.ndarray:
        return clip(Z.reshape(len(Z), H, d), B, nn).reshape(len(Z), -1)

    one, two = np.tile(B * e(0, d), H), np.tile(B * e(1, d), H)
    return Case(
        f"episode_sum(nonnegative={nn})",
        lambda r: episode_sum_sensitivity(B, steps=H, relation=r, nonnegative=nn),
        lambda D: D.reshape(*D.shape[:2], H, d).sum(axis=(1, 2)),
        project,
        H * d,
        pair(one, (one, two if nn else -one)),
    )


def episode_outer_case(noise: str, d: int = 2, steps: int = 2) -> Case:
    def fv(D: np.ndarray) -> np.ndarray:
        z = D.reshape(len(D), -1, d)  # every step of every user
        return release(np.einsum("bni,bnj->bij", z, z), noise)

    def project(Z: np.ndarray) -> np.ndarray:
        return clip(Z.reshape(len(Z), steps, d), B).reshape(len(Z), -1)

    one, two = np.tile(B * e(0, d), steps), np.tile(B * e(1, d), steps)
    return Case(
        f"episode_outer_product(noise={noise})",
        lambda r: episode_outer_product_sensitivity(B, steps=steps, relation=r, noise=noise),
        fv,
        project,
        steps * d,
        pair(one, (one, two)),
    )


def episode_product_case(nn: bool, d: int = 2, steps: int = 2) -> Case:
    one = np.tile(np.append(B * e(0, d), V), steps)
    two = np.tile(np.append(B * e(1, d), V) if nn else np.append(B * e(0, d), -V), steps)
    return Case(
        f"episode_product(nonnegative={nn})",
        lambda r: episode_product_sensitivity(B, scalar_bound=V, steps=steps, relation=r, nonnegative=nn),
        product_fv(d, steps),
        product_project(nn, d, steps),
        steps * (d + 1),
        pair(one, (one, two)),
    )


CASES = [
    *(vector_case(nn) for nn in (False, True)),
    *(outer_case(noise) for noise in SensitivityNoise),
    *(symmetric_case(psd, noise) for psd in (False, True) for noise in SensitivityNoise),
    *(product_case(nn) for nn in (False, True)),
    *(episode_sum_case(nn) for nn in (False, True)),
    *(episode_outer_case(noise) for noise in SensitivityNoise),
    *(episode_product_case(nn) for nn in (False, True)),
]
COMBOS = list(itertools.product(CASES, RELATIONS))
COMBO_PARAMS = [pytest.param(case, relation, id=f"{case.name}-{relation}") for case, relation in COMBOS]


def pair_changes(case: Case, users: np.ndarray, replacements: np.ndarray | None) -> np.ndarray:
    """‖f(D) − f(D′)‖ for single-user datasets, all pairs at once (f is additive, f(∅) = 0)."""
    terms = case.fv(users[:, None, :]).reshape(len(users), -1)
    if replacements is not None:
        terms = terms - case.fv(replacements[:, None, :]).reshape(len(users), -1)
    return np.linalg.norm(terms, axis=1)
