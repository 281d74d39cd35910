"""Chapter 6, section 2: training that goes wrong, produced on purpose and measured.

Four experiments on tiny causal models, all on the same task: the *lag* task, where the target
at position ``t`` is the token at ``t - lag`` of a random sequence (so the model must learn to
look back ``lag`` places; chance is ``ln V`` nats). It is learnt in a few dozen steps when
training works, which leaves room for a grid of runs on a CPU.

- :func:`ln_grid`: Post-LN against Pre-LN (Xiong et al., 2020) over learning rates, with and
  without warm-up, several seeds; :func:`init_layer_grad_norms`: gradient norm per layer at
  initialisation.
- :func:`train_lag_model` with ``clip_grad_norm``: clipping in the unstable setting.
- :func:`init_saturation`, :func:`dead_row_share`: projections initialised too large saturate the softmax at
  step 0, and the saturated rows pass no gradient.
- :func:`adam_spike_steps`: the arithmetic of a gradient spike under Adam (both moments hold it).
- :func:`train_monitored`: per-head attention entropy during training, with the two failure
  modes (uniform attention, entropy collapse; Zhai et al., 2023) and their fixes (QK-norm).

Shape legend:
    B batch, L length, D model width, H heads, E head size, V vocabulary, N layers.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .. import seeding
from ..diagnostics import (
    GradientNormTracker,
    SaturationStats,
    attention_entropy,
    saturation_stats,
    softmax_jacobian_norm,
)
from ..models import TinyConfig, TinyGPT
from ..multihead import MultiHeadAttention
from ..sigma_reparam import apply_sigma_reparam
from ..train import TrainingHistory, set_seed, train

__all__ = [
    "VOCAB", "LAG", "lag_batches", "lag_loss", "spiked_loss", "RunResult", "train_lag_model", "ln_grid",
    "failure_share",
    "INITS", "init_layer_grad_norms", "init_scores", "init_saturation", "dead_row_share", "adam_spike_steps",
    "MonitorLM", "MonitoredRun", "train_monitored",
    "mean_spread",
]

VOCAB = 16  # V: token ids of the lag task
LAG = 2  # the target at t is the token at t - LAG
CHANCE = math.log(VOCAB)  # loss of a uniform guess, in nats


def lag_batches(seed: int, *, batch: int = 16, length: int = 16, vocab: int = VOCAB, lag: int = LAG
                ) -> Callable[[int], tuple[Tensor, Tensor]]:
    """A ``make_batch(step)`` for the lag task: random tokens, target = the token ``lag`` places back.

    The first ``lag`` targets wrap around (they are ignored by :func:`lag_loss`).

    Shape:
        each batch: inputs ``(B, L)``, targets ``(B, L)``, both int64.
    """
    generator = seeding.generator(10_000 + seed)

    def make_batch(step: int) -> tuple[Tensor, Tensor]:
        tokens = torch.randint(0, vocab, (batch, length), generator=generator)  # (B, L)
        return tokens, tokens.roll(lag, dims=1)  # target[t] = tokens[t - lag]

    return make_batch


def lag_loss(lag: int = LAG) -> Callable[[Tensor, Tensor], Tensor]:
    """Cross-entropy over the positions ``t >= lag`` (the earlier ones have nothing to look back to)."""

    def loss_fn(logits: Tensor, targets: Tensor) -> Tensor:
        return F.cross_entropy(logits[:, lag:].float().reshape(-1, logits.shape[-1]),
                               targets[:, lag:].reshape(-1))  # (B*(L-lag), V)

    return loss_fn


@dataclass
class RunResult:
    """One training run of the lag task."""

    norm_first: bool
    lr: float
    warmup_steps: int
    seed: int
    clip_grad_norm: float | None
    loss: list[float]  # per step (shorter when stopped early)
    grad_norm: list[float]  # total gradient norm per step, before clipping
    stopped_early: bool  # the loss became non-finite or exceeded twice chance

    @property
    def final_loss(self) -> float:
        """Mean loss of the last 5 recorded steps (``inf`` after a divergence)."""
        if self.stopped_early or not self.loss:
            return math.inf
        return statistics.fmean(self.loss[-5:])

    @property
    def failed(self) -> bool:
        """Diverged, or ended no better than 90 % of chance (stuck)."""
        return self.final_loss > 0.9 * CHANCE


def spiked_loss(loss_fn: Callable[[Tensor, Tensor], Tensor], *, every: int, scale: float
                ) -> Callable[[Tensor, Tensor], Tensor]:
    """``loss_fn`` with every ``every``-th call (the 1st, the ``every + 1``-th, ...) multiplied by ``scale``.

    A gradient spike injected by hand: the loss, and so the whole gradient, of one batch in
    ``every`` is ``scale`` times too large, as a corrupt batch can make it. The training loop
    calls the loss once per step, so the spikes fall on steps ``0, every, 2 every, ...``.

    Args:
        loss_fn: The loss, ``(logits, targets) -> scalar``.
        every: The period of the spikes, in calls (>= 1).
        scale: The factor of a spiked loss (> 0).

    Returns:
        The spiked loss function (it counts its calls).

    Raises:
        ValueError: If ``every`` < 1 or ``scale`` <= 0.
    """
    if not isinstance(every, int) or every < 1:
        raise ValueError(f"every must be an int >= 1, got {every!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    calls = [0]

    def spiked(logits: Tensor, targets: Tensor) -> Tensor:
        factor = scale if calls[0] % every == 0 else 1.0
        calls[0] += 1
        return factor * loss_fn(logits, targets)

    return spiked


def train_lag_model(*, norm_first: bool, lr: float, warmup_steps: int = 0, seed: int = 0, steps: int = 80,
                    num_layers: int = 6, embed_dim: int = 32, num_heads: int = 2,
                    clip_grad_norm: float | None = None, spike_every: int | None = None,
                    spike_scale: float = 1000.0) -> RunResult:
    """Train a TinyGPT on the lag task with AdamW; stop early if the loss diverges.

    Args:
        norm_first: Pre-LN (``True``) or Post-LN (``False``) blocks.
        lr: Peak learning rate.
        warmup_steps: Linear warm-up length.
        seed: Seed of the weights and batches.
        steps: Training steps.
        num_layers, embed_dim, num_heads: The model's size.
        clip_grad_norm: Clip the total gradient norm to this value (``None``: no clipping).
        spike_every: Inject a gradient spike every this many steps (:func:`spiked_loss`); ``None``: none.
        spike_scale: The factor of a spiked step's loss.

    Returns:
        A :class:`RunResult`; its ``loss`` is the *unspiked* loss of every step (a spiked step's
        recorded loss divided by ``spike_scale``).
    """
    set_seed(seed)
    model = TinyGPT(TinyConfig(vocab_size=VOCAB, embed_dim=embed_dim, num_heads=num_heads, num_layers=num_layers,
                               norm_first=norm_first, max_positions=32))

    loss_fn = lag_loss()
    if spike_every is not None:
        loss_fn = spiked_loss(loss_fn, every=spike_every, scale=spike_scale)

    def unspiked(step: int, history: TrainingHistory) -> None:
        if spike_every is not None and step % spike_every == 0:
            history.loss[-1] /= spike_scale

    def diverged(step: int, _model: nn.Module, history: TrainingHistory) -> bool:
        unspiked(step, history)
        return not math.isfinite(history.loss[-1]) or history.loss[-1] > 2 * CHANCE

    history = train(model, lag_batches(seed), steps=steps, lr=lr, warmup_steps=warmup_steps, seed=seed,
                    loss_fn=loss_fn, accuracy_fn=None, clip_grad_norm=clip_grad_norm, callback=diverged)
    stopped = len(history.loss) < steps or not math.isfinite(history.loss[-1]) or history.loss[-1] > 2 * CHANCE
    return RunResult(norm_first, lr, warmup_steps, seed, clip_grad_norm, history.loss, history.grad_norm, stopped)


def ln_grid(lrs: Sequence[float], warmups: Sequence[int], seeds: Sequence[int] = (0, 1, 2), **kwargs: object
            ) -> dict[tuple[bool, int, float], list[RunResult]]:
    """Post-LN and Pre-LN over ``lrs`` x ``warmups`` x ``seeds``: ``{(norm_first, warmup, lr): runs}``."""
    return {(norm_first, warmup, lr): [train_lag_model(norm_first=norm_first, lr=lr, warmup_steps=warmup,
                                                       seed=seed, **kwargs) for seed in seeds]  # type: ignore[arg-type]
            for norm_first in (False, True) for warmup in warmups for lr in lrs}


def failure_share(runs: Sequence[RunResult]) -> float:
    """Fraction of runs that diverged or stayed near chance."""
    return sum(r.failed for r in runs) / len(runs)


def mean_spread(values: Sequence[float]) -> tuple[float, float, float]:
    """``(mean, min, max)`` of a few seeds' results."""
    return statistics.fmean(values), min(values), max(values)


INITS = ("gpt2", "xavier")
"""The initialisations :func:`init_layer_grad_norms` compares — GPT-2's (the package's models) and Xavier's."""


def _xavier_init(model: nn.Module) -> None:
    """Xavier-uniform weights for every linear layer (zero biases), ``N(0, 1/D)`` embeddings: the
    initialisation of Xiong et al.'s analysis, in place of GPT-2's ``N(0, 0.02)``."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=module.embedding_dim ** -0.5)


def init_layer_grad_norms(norm_first: bool, *, num_layers: int = 6, embed_dim: int = 32, seed: int = 0,
                          init: str = "gpt2") -> list[float]:
    """Gradient norm of each block's parameters at initialisation, on one batch of the lag task.

    Xiong et al. (2020) bound the gradient of the last layer at initialisation (Xavier weights):
    in Post-LN it does not shrink with depth, in Pre-LN it shrinks as ``1/sqrt(N)``.

    Args:
        norm_first: Pre-LN (``True``) or Post-LN (``False``) blocks.
        num_layers, embed_dim: The model's size.
        seed: Seed of the weights and the batch.
        init: ``"gpt2"`` (the package's ``N(0, 0.02)``) or ``"xavier"`` (``_xavier_init``).

    Returns:
        One norm per block, first block first (``sqrt`` of the sum of its parameters' squared norms).
    """
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    set_seed(seed)
    model = TinyGPT(TinyConfig(vocab_size=VOCAB, embed_dim=embed_dim, num_heads=2, num_layers=num_layers,
                               norm_first=norm_first, max_positions=32))
    if init == "xavier":
        _xavier_init(model)
    tokens, targets = lag_batches(seed, batch=64)(0)
    with GradientNormTracker(model) as tracker:
        lag_loss()(model(tokens).output, targets).backward()
    squares = [0.0] * num_layers
    for name, norm in tracker.latest().items():
        if name.startswith("stack.blocks."):
            squares[int(name.split(".")[2])] += norm**2
    return [math.sqrt(s) for s in squares]


def init_scores(stds: Sequence[float], *, embed_dim: int = 64, num_heads: int = 4, length: int = 32,
                seed: int = 0) -> list[Tensor]:
    """Scaled attention scores at step 0 when ``W^Q`` and ``W^K`` are drawn from ``N(0, std^2)``.

    The input is layer-normalised (unit variance per feature, as a Transformer's attention sees
    it), so each score ``q.k / sqrt(E)`` has a standard deviation of about ``D std^2``
    (chapter 3's variance argument, with the projections' variance ``D std^2`` per query entry).
    No mask: every row has ``length`` keys.

    Returns:
        One ``(8, H, L, L)`` score tensor per ``std``.
    """
    results = []
    for std in stds:
        set_seed(seed)
        layer = MultiHeadAttention(embed_dim, num_heads)
        nn.init.normal_(layer.q_proj.weight, std=std)
        nn.init.normal_(layer.k_proj.weight, std=std)
        x = F.layer_norm(torch.randn(8, length, embed_dim), (embed_dim,))  # (B, L, D)
        e = layer.head_dim
        with torch.no_grad():
            q = layer.q_proj(x).view(8, length, num_heads, e).transpose(1, 2)  # (B, H, L, E)
            k = layer.k_proj(x).view(8, length, num_heads, e).transpose(1, 2)  # (B, H, L, E)
            results.append(q @ k.transpose(-2, -1) / math.sqrt(e))  # (B, H, L, E) x (B, H, E, L) -> (B, H, L, L)
    return results


def init_saturation(stds: Sequence[float], *, embed_dim: int = 64, num_heads: int = 4, length: int = 32,
                    seed: int = 0) -> list[SaturationStats]:
    """Softmax saturation at step 0 when ``W^Q`` and ``W^K`` are drawn from ``N(0, std^2)`` (:func:`init_scores`).

    Returns:
        One :class:`~helpers.diagnostics.SaturationStats` per ``std``.
    """
    return [saturation_stats(scores) for scores in init_scores(stds, embed_dim=embed_dim, num_heads=num_heads,
                                                               length=length, seed=seed)]


def dead_row_share(scores: Tensor, *, below: float = 0.01) -> tuple[float, float]:
    """Share of softmax rows whose Jacobian ``diag(p) - p p^T`` has a Frobenius norm under ``below``,
    and the mean norm of the other rows.

    Such a row passes (almost) no gradient back to its scores: it is saturated. A uniform row of
    ``n`` keys has a norm of ``sqrt(n - 1) / n``, a one-hot row 0.

    Returns:
        ``(share of dead rows, mean Jacobian norm of the live rows)`` (the mean is 0 when every row is dead).

    Shape:
        scores: ``(..., S)``.
    """
    norms = softmax_jacobian_norm(scores.float()).flatten()
    dead = norms < below
    alive = norms[~dead]
    return dead.float().mean().item(), (alive.mean().item() if alive.numel() else 0.0)


def adam_spike_steps(*, steps: int = 80, every: int = 10, scale: float = 1000.0, sign: float = 1.0,
                     lr: float = 1.0) -> list[float]:
    """AdamW's update, step by step, on one parameter whose gradient is 1 except every ``every``-th step.

    The spiked steps (0, ``every``, ...) have gradient ``sign * scale``: the arithmetic of a gradient
    spike under Adam, with PyTorch's defaults (beta1 0.9, beta2 0.999, bias correction, no weight decay).
    Without spikes every update is ``lr`` (a constant gradient of 1 gives ``m_hat = v_hat = 1``).

    Returns:
        The update of each step along the ordinary gradient's descent direction, in units of ``lr``
        (positive: the step the ordinary gradient asks for; negative: the opposite way).
    """
    param = torch.zeros(1, requires_grad=True)
    optimiser = torch.optim.AdamW([param], lr=lr, weight_decay=0.0)
    updates = []
    for step in range(steps):
        param.grad = torch.tensor([sign * scale if step % every == 0 else 1.0])
        before = param.detach().clone()
        optimiser.step()
        updates.append((before - param.detach()).item() / lr)
    return updates


class MonitorLM(nn.Module):
    """A small Pre-LN causal language model whose attention options the experiments change.

    Embedding + learned positions + ``N`` blocks (``x + Attn(LN(x))``, ``x + MLP(LN(x))``) +
    LN + output. Returns ``(logits, [weights of each layer])``, the contract of
    :func:`helpers.train.train`, so that the loop records the attention entropy.

    Args:
        num_layers: ``N``.
        embed_dim: ``D``.
        num_heads: ``H``.
        qk_norm: QK-norm in every attention layer (the fix for entropy collapse).
        scale: the attention's score scale (``None``: ``1/sqrt(E)``); a tiny value reproduces a
            units bug that leaves attention uniform.
        sigma_reparam: σReparam on every linear layer (Zhai et al.'s fix for entropy collapse,
            :func:`helpers.sigma_reparam.apply_sigma_reparam`).
    """

    def __init__(self, *, num_layers: int = 2, embed_dim: int = 32, num_heads: int = 4, qk_norm: bool = False,
                 scale: float | None = None, vocab: int = VOCAB, max_positions: int = 32,
                 sigma_reparam: bool = False) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, embed_dim)
        self.position_embedding = nn.Embedding(max_positions, embed_dim)
        self.attn_norms = nn.ModuleList(nn.LayerNorm(embed_dim) for _ in range(num_layers))
        self.attns = nn.ModuleList(MultiHeadAttention(embed_dim, num_heads, qk_norm=qk_norm, scale=scale)
                                   for _ in range(num_layers))
        self.mlp_norms = nn.ModuleList(nn.LayerNorm(embed_dim) for _ in range(num_layers))
        self.mlps = nn.ModuleList(nn.Sequential(nn.Linear(embed_dim, 4 * embed_dim), nn.GELU(),
                                                nn.Linear(4 * embed_dim, embed_dim)) for _ in range(num_layers))
        self.final_norm = nn.LayerNorm(embed_dim)
        self.lm_head = nn.Linear(embed_dim, vocab)
        if sigma_reparam:
            apply_sigma_reparam(self)

    def forward(self, tokens: Tensor) -> tuple[Tensor, list[Tensor]]:
        positions = torch.arange(tokens.size(1), device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(positions)  # (B, L, D)
        weights = []
        for norm, attn, mlp_norm, mlp in zip(self.attn_norms, self.attns, self.mlp_norms, self.mlps):
            attended, w = attn(norm(x), is_causal=True, need_weights=True)  # (B, L, D), (B, H, L, L)
            x = x + attended
            x = x + mlp(mlp_norm(x))  # (B, L, D)
            weights.append(w)
        return self.lm_head(self.final_norm(x)), weights  # (B, L, V)


@dataclass
class MonitoredRun:
    """A run of :class:`MonitorLM` with its per-head entropy recorded every ``probe_every`` steps."""

    label: str
    seed: int
    loss: list[float]
    probe_step: list[int] = field(default_factory=list)
    head_entropy: list[Tensor] = field(default_factory=list)  # per probe: (N, H), normalised to [0, 1]

    @property
    def final_loss(self) -> float:
        return statistics.fmean(self.loss[-5:]) if all(map(math.isfinite, self.loss[-5:])) else math.inf

    def entropy_series(self, reduce: str = "min") -> list[float]:
        """The lowest (``"min"``) or mean (``"mean"``) normalised head entropy at each probe."""
        return [float(e.min() if reduce == "min" else e.mean()) for e in self.head_entropy]


def _probe_entropy(model: MonitorLM, tokens: Tensor) -> Tensor:
    """Normalised entropy per layer and head, causal rows: each row divided by log(its length)."""
    was_training = model.training
    model.eval()
    with torch.no_grad():
        _, weights = model(tokens)
    model.train(was_training)
    length = tokens.size(1)
    sizes = torch.arange(1, length + 1, dtype=torch.float32)  # row i sees i + 1 keys
    logs = torch.where(sizes > 1, sizes.log(), torch.ones_like(sizes))
    per_layer = []
    for w in weights:  # (B, H, L, L)
        rows = attention_entropy(w, average_queries=False) / logs  # (B, H, L)
        per_layer.append(rows[..., 1:].mean(dim=(0, 2)))  # (H,), the first row has one key
    return torch.stack(per_layer)  # (N, H)


def train_monitored(label: str, *, lr: float, seed: int = 0, steps: int = 120, qk_norm: bool = False,
                    scale: float | None = None, probe_every: int = 10, warmup_steps: int = 0,
                    sigma_reparam: bool = False, **model_kwargs: int) -> MonitoredRun:
    """Train :class:`MonitorLM` on the lag task and probe each head's entropy on a fixed batch."""
    set_seed(seed)
    model = MonitorLM(qk_norm=qk_norm, scale=scale, sigma_reparam=sigma_reparam, **model_kwargs)
    probe_tokens, _ = lag_batches(seed + 999, batch=32)(0)
    run = MonitoredRun(label, seed, [])

    def probe(step: int, m: nn.Module, history: TrainingHistory) -> bool:
        if step % probe_every == 0 or step == steps - 1:
            run.probe_step.append(step)
            run.head_entropy.append(_probe_entropy(model, probe_tokens))
        return not math.isfinite(history.loss[-1])

    run.probe_step.append(-1)  # before training
    run.head_entropy.append(_probe_entropy(model, probe_tokens))
    history = train(model, lag_batches(seed), steps=steps, lr=lr, seed=seed, loss_fn=lag_loss(),
                    accuracy_fn=None, warmup_steps=warmup_steps, callback=probe)
    run.loss = history.loss
    return run
