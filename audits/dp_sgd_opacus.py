"""An adapter for Opacus (PyTorch's DP-SGD library): a logistic regression trained by Opacus's own
``GradSampleModule`` (per-example gradients), ``DPOptimizer`` (clipping and noise) and Poisson ``DPDataLoader``,
called as the ``train(dataset, rng)`` the one-run audit runs (:mod:`dpkit.audits.dp_sgd_audit`).

White-box canaries reach it as examples: a Dirac canary on coordinate c is the input e_c with the loss
``norm · logit``, whose per-example gradient is norm · e_c; the other examples' loss is the logistic loss.
``clipping=False`` is the zoo's first bug in Opacus: an optimizer that sums the per-example gradients unclipped and
adds Opacus's noise. Needs the ``opacus`` extra (``pip install 'dpkit[opacus]'``: PyTorch's CPU build, pinned).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpkit.accountant.validation import check_count, check_positive, check_unit_interval

from .dp_sgd_canaries import TrainingSet

__all__ = ["OpacusLogisticRegression"]


def _unclipped_optimizer(base: Any) -> Any:
    """A subclass of Opacus's ``DPOptimizer`` that sums the per-example gradients without clipping them."""
    import torch

    class Unclipped(base):
        def clip_and_accumulate(self) -> None:
            for p in self.params:
                grad = self._get_flat_grad_sample(p).to(p.dtype).sum(dim=0)  # the bug: no per-example clipping
                p.summed_grad = grad if p.summed_grad is None else p.summed_grad + grad
                p.grad_sample = None if isinstance(p.grad_sample, torch.Tensor) else p.grad_sample

    return Unclipped


@dataclass(frozen=True)
class OpacusLogisticRegression:
    """DP-SGD of a logistic regression (no bias) in Opacus; ``train(dataset, rng)`` returns every iterate.

    Attributes:
        noise_multiplier: σ (Opacus's ``noise_multiplier``).
        sampling_rate: q (the ``DPDataLoader``'s Poisson ``sample_rate``).
        steps: T.
        clip_norm: C (Opacus's ``max_grad_norm``).
        learning_rate: η; the SGD step is η / (q·n) times the noisy sum.
        clipping: False: the bug, per-example gradients summed unclipped.
    """

    noise_multiplier: float
    sampling_rate: float
    steps: int
    clip_norm: float = 1.0
    learning_rate: float = 1.0
    clipping: bool = True

    def __post_init__(self) -> None:
        """Validate the values; a ValueError names the bad one."""
        check_positive("noise_multiplier", self.noise_multiplier)
        if not check_unit_interval("sampling_rate", self.sampling_rate) > 0.0:
            raise ValueError(f"sampling_rate must lie in (0, 1], got {self.sampling_rate!r}")
        check_count("steps", self.steps)
        check_positive("clip_norm", self.clip_norm)
        check_positive("learning_rate", self.learning_rate)

    def __call__(self, dataset: TrainingSet, rng: np.random.Generator) -> np.ndarray:
        """Train once through Opacus.

        Args:
            dataset: The examples and the included gradient canaries.
            rng: Seeds PyTorch's generator of the batches and the noise.

        Returns:
            Every iterate, (steps + 1, d).
        """
        import torch
        from opacus import GradSampleModule
        from opacus.data_loader import DPDataLoader
        from opacus.optimizers import DPOptimizer
        from torch.utils.data import TensorDataset

        x = torch.as_tensor(np.asarray(dataset.features, dtype=np.float64))
        y = torch.as_tensor(np.asarray(dataset.labels, dtype=np.float64))
        d = x.shape[1]
        weight = torch.zeros(x.shape[0], dtype=torch.float64)  # 0: a real example; > 0: a canary's gradient norm
        canaries = dataset.gradient_canaries
        if canaries is not None and len(canaries):
            eye = torch.zeros(len(canaries), d, dtype=torch.float64)
            eye[torch.arange(len(canaries)), torch.as_tensor(canaries.coordinates)] = 1.0
            x, y = torch.cat([x, eye]), torch.cat([y, torch.zeros(len(canaries), dtype=torch.float64)])
            weight = torch.cat([weight, torch.full((len(canaries),), float(canaries.norm), dtype=torch.float64)])
        generator = torch.Generator().manual_seed(int(rng.integers(2**62)))
        loader = DPDataLoader(TensorDataset(x, y, weight), sample_rate=self.sampling_rate, generator=generator)
        model = torch.nn.Linear(d, 1, bias=False).double()
        torch.nn.init.zeros_(model.weight)
        module = GradSampleModule(model)
        batch = self.sampling_rate * x.shape[0]
        sgd = torch.optim.SGD(module.parameters(), lr=self.learning_rate / batch)
        kind = DPOptimizer if self.clipping else _unclipped_optimizer(DPOptimizer)
        optimizer = kind(
            sgd,
            noise_multiplier=self.noise_multiplier,
            max_grad_norm=self.clip_norm,
            expected_batch_size=max(1, round(batch)),
            loss_reduction="sum",
            generator=generator,
        )
        iterates = [model.weight.detach().reshape(-1).clone()]
        while len(iterates) <= self.steps:
            for xb, yb, wb in loader:
                if len(iterates) > self.steps:
                    break
                optimizer.zero_grad()
                logit = module(xb).reshape(-1)
                real = torch.nn.functional.binary_cross_entropy_with_logits(logit, yb, reduction="none")
                with warnings.catch_warnings():  # the inputs need no gradient: PyTorch says so, Opacus needs none
                    warnings.filterwarnings("ignore", message="Full backward hook is firing")
                    torch.where(wb > 0, wb * logit, real).sum().backward()
                optimizer.step()
                iterates.append(model.weight.detach().reshape(-1).clone())
        return torch.stack(iterates).numpy()
