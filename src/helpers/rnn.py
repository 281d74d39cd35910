"""The recurrent baseline of chapter 1: a GRU encoder-decoder, with and without attention.

An encoder reads the source into hidden states; a decoder writes the target one token at a
time. Without attention (Cho et al., 2014; Sutskever et al., 2014) the decoder sees the source
only through one fixed-size vector, the encoder's final state: an information bottleneck that
a longer source overflows. With attention (Bahdanau, Cho & Bengio, 2015) the decoder computes,
at every step, a fresh weighted average of *all* encoder states, weighted by an additive score
against its current state. Both models here share everything else, so the comparison isolates
that one difference:

- encoder: a bidirectional GRU over the embedded source, states ``h_j = [h_fwd_j; h_bwd_j]``;
- decoder initial state ``s_0 = tanh(W_init [h_fwd_{S-1}; h_bwd_0])``;
- decoder step ``i``: a context ``c_i``, then ``s_i = GRU([embed(y_{i-1}); c_i], s_{i-1})`` and
  ``logits_i = W_out [s_i; c_i]``;
- ``c_i`` is the fixed summary ``[h_fwd_{S-1}; h_bwd_0]`` without attention (Bahdanau's
  "RNNencdec"), and ``sum_j alpha_ij h_j`` with ``alpha_i = softmax_j(v^T tanh(W_q s_{i-1} +
  W_k h_j))`` with attention ("RNNsearch", :class:`~helpers.attention.AdditiveAttention`).

Token conventions are those of :mod:`helpers.tasks` (``BOS_TOKEN`` starts decoding).

Shape legend:
    B: batch size
    S: source length (T_in)
    T: target length (T_out)
    E: embedding size
    H: hidden size of each GRU direction and of the decoder
    V: vocabulary size

Explained in chapter 1.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .attention import AdditiveAttention, scaled_dot_product_attention
from .tasks import BOS_TOKEN, copy_task, reverse_task, sort_task
from .train import TrainingHistory, num_threads, sequence_accuracy, set_seed, token_accuracy, train

__all__ = [
    "Seq2SeqGRU",
    "AlignmentRecorder",
    "train_seq2seq",
    "evaluate_seq2seq",
    "GradientByDistance",
    "gradient_by_distance",
    "sequential_vs_parallel_time",
]

TaskFn = Callable[..., tuple[Tensor, Tensor]]
_TASKS: dict[str, TaskFn] = {"copy": copy_task, "reverse": reverse_task, "sort": sort_task}


def _task_fn(task: str | TaskFn) -> TaskFn:
    if callable(task):
        return task
    if task not in _TASKS:
        raise ValueError(f"task must be one of {sorted(_TASKS)} or a callable, got {task!r}")
    return _TASKS[task]


class Seq2SeqGRU(nn.Module):
    """GRU encoder-decoder, with additive attention or with a fixed-vector bottleneck.

    Training uses teacher forcing (the decoder reads the true previous token); evaluation
    decodes greedily (it reads its own previous prediction). Bahdanau et al. (2015) for the
    attention model, Cho et al. (2014) and Sutskever et al. (2014) for the plain one; the
    module docstring gives the equations. Explained in chapter 1.

    Args:
        vocab_size: Size V of the shared source/target vocabulary.
        embed_dim: Embedding size E.
        hidden_dim: Hidden size H of each encoder direction and of the decoder; without
            attention the source reaches the decoder through ``2 * H`` numbers.
        attention: Use additive attention over all encoder states.
        attention_dim: Hidden size of the additive scoring network (default ``H``).

    Shape:
        src ``(B, S)``, tgt ``(B, T)`` -> logits ``(B, T, V)``, alignment ``(B, T, S)`` (or None).
    """

    def __init__(
        self, vocab_size: int, embed_dim: int, hidden_dim: int, *, attention: bool, attention_dim: int | None = None
    ) -> None:
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("embed_dim", embed_dim), ("hidden_dim", hidden_dim)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not isinstance(attention, bool):
            raise TypeError(f"attention must be a bool, got {type(attention).__name__}")
        self.vocab_size = vocab_size
        self.hidden_dim = hidden_dim
        self.use_attention = attention
        context_dim = 2 * hidden_dim
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.encoder = nn.GRU(embed_dim, hidden_dim, batch_first=True, bidirectional=True)
        self.init_proj = nn.Linear(context_dim, hidden_dim)  # W_init
        self.decoder = nn.GRUCell(embed_dim + context_dim, hidden_dim)
        self.attention = AdditiveAttention(hidden_dim, context_dim, attention_dim or hidden_dim) if attention else None
        self.out_proj = nn.Linear(hidden_dim + context_dim, vocab_size)  # W_out

    def encode(self, src: Tensor) -> tuple[Tensor, Tensor]:
        """Encoder states and the fixed summary ``[h_fwd_{S-1}; h_bwd_0]``.

        Shape:
            src ``(B, S)`` -> states ``(B, S, 2H)``, summary ``(B, 2H)``.
        """
        states, final = self.encoder(self.embedding(src))  # (B, S, 2H), (2, B, H)
        summary = torch.cat([final[0], final[1]], dim=-1)  # (B, H) + (B, H) -> (B, 2H)
        return states, summary

    def forward(self, src: Tensor, tgt: Tensor | None = None, *, max_len: int | None = None) -> tuple[Tensor, Tensor | None]:
        """Teacher-forced logits when ``tgt`` is given, else greedy decoding of ``max_len`` tokens.

        Args:
            src: Source tokens.
            tgt: Target tokens (teacher forcing: step ``i`` reads ``tgt[:, i - 1]``, step 0 reads
                ``BOS_TOKEN``), or None to decode greedily.
            max_len: Number of tokens to decode greedily (default S); only without ``tgt``.

        Returns:
            ``(logits, alignment)``; ``alignment[b, i]`` is the attention of output step ``i`` over
            the source (rows sum to 1), or None without attention.

        Shape:
            src ``(B, S)``, tgt ``(B, T)`` -> logits ``(B, T, V)``, alignment ``(B, T, S)``.
        """
        self._check_tokens("src", src)
        if tgt is not None:
            self._check_tokens("tgt", tgt)
            if tgt.shape[0] != src.shape[0]:
                raise ValueError(f"src and tgt must have the same batch size, got {tuple(src.shape)} and {tuple(tgt.shape)}")
            if max_len is not None:
                raise ValueError("max_len is for greedy decoding; with tgt the output has tgt's length")
        steps = tgt.shape[1] if tgt is not None else (max_len if max_len is not None else src.shape[1])
        if not isinstance(steps, int) or steps < 1:
            raise ValueError(f"max_len must be a positive int, got {max_len!r}")

        states, summary = self.encode(src)  # (B, S, 2H), (B, 2H)
        hidden = torch.tanh(self.init_proj(summary))  # s_0: (B, H)
        if self.attention is not None:
            keys = self.attention.key_proj(states)  # W_k h_j, once for all steps: (B, S, 2H) -> (B, S, A)
        bos = torch.full_like(src[:, :1], BOS_TOKEN)  # (B, 1)
        if tgt is not None:  # teacher forcing: every decoder input is known in advance
            embedded = self.embedding(torch.cat([bos, tgt[:, :-1]], dim=1))  # (B, T, E)
        outputs, contexts, logits, alignment = [], [], [], []
        previous = bos[:, 0]  # (B,)
        for i in range(steps):
            if self.attention is None:
                context = summary  # (B, 2H)
            else:
                context, weights = self._attend(hidden, keys, states)  # (B, 2H), (B, S)
                alignment.append(weights)
            step_embedding = embedded[:, i] if tgt is not None else self.embedding(previous)  # (B, E)
            hidden = self.decoder(torch.cat([step_embedding, context], dim=-1), hidden)  # (B, E + 2H) -> (B, H)
            if tgt is not None:
                outputs.append(hidden)
                contexts.append(context)
            else:
                step_logits = self.out_proj(torch.cat([hidden, context], dim=-1))  # (B, H + 2H) -> (B, V)
                logits.append(step_logits)
                previous = step_logits.argmax(-1)  # (B,)
        if tgt is not None:  # one output projection for all steps
            features = torch.cat([torch.stack(outputs, 1), torch.stack(contexts, 1)], dim=-1)  # (B, T, H + 2H)
            all_logits = self.out_proj(features)  # (B, T, V)
        else:
            all_logits = torch.stack(logits, 1)  # (B, T, V)
        return all_logits, (torch.stack(alignment, 1) if alignment else None)  # (B, T, V), (B, T, S)

    def _attend(self, query: Tensor, keys: Tensor, states: Tensor) -> tuple[Tensor, Tensor]:
        """One step of additive attention, with the keys' projection ``W_k h_j`` computed once.

        The formula and the parameters of :class:`~helpers.attention.AdditiveAttention`
        (``self.attention``): ``alpha = softmax(v^T tanh(W_q s + W_k h))``, ``c = alpha h``. Calling
        that module at every decoder step would project the keys again each time, which costs
        more than the rest of the step; the tests check that both give the same numbers.

        Shape:
            query ``(B, H)`` (the state ``s_{i-1}``), keys ``(B, S, A)``, states ``(B, S, 2H)``
            -> context ``(B, 2H)``, weights ``(B, S)``.
        """
        if self.attention is None:
            raise RuntimeError("_attend is only for models built with attention=True")
        projected = self.attention.query_proj(query)  # W_q s_{i-1}: (B, H) -> (B, A)
        features = torch.tanh(projected.unsqueeze(1) + keys)  # (B, 1, A) + (B, S, A) -> (B, S, A)
        scores = features @ self.attention.score_vector  # (B, S, A) x (A,) -> (B, S)
        weights = torch.softmax(scores.float(), dim=-1).to(states.dtype)  # (B, S)
        context = (weights.unsqueeze(1) @ states).squeeze(1)  # (B, 1, S) x (B, S, 2H) -> (B, 2H)
        return context, weights

    def _check_tokens(self, name: str, tokens: object) -> None:
        if not isinstance(tokens, Tensor) or tokens.dtype != torch.long:
            raise TypeError(f"{name} must be an int64 tensor of token ids, got {getattr(tokens, 'dtype', type(tokens))}")
        if tokens.dim() != 2 or tokens.shape[1] < 1:
            raise ValueError(f"{name} must be (B, length) with length >= 1, got shape {tuple(tokens.shape)}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(
                f"{name} holds token ids outside [0, {self.vocab_size}): min {tokens.min().item()}, max {tokens.max().item()}"
            )

    @torch.no_grad()
    def generate(self, src: Tensor, max_len: int | None = None) -> Tensor:
        """Greedy decoding: the predicted target tokens.

        Shape:
            src ``(B, S)`` -> ``(B, max_len)`` (``max_len`` defaults to S).
        """
        logits, _ = self(src, max_len=max_len)
        return logits.argmax(-1)  # (B, T)


class AlignmentRecorder:
    """A :func:`~helpers.train.train` callback that snapshots the alignment of fixed examples.

    Every ``every`` steps (and at step 0) it runs the model in eval mode, teacher-forced, on
    ``(src, tgt)`` and stores the alignment, so that the chapter can show the heatmap forming
    during training. Explained in chapter 1.

    Args:
        src: Source tokens to watch.
        tgt: Their targets.
        every: Snapshot period in steps.

    Attributes:
        steps: The steps of the snapshots.
        alignments: The alignments, each ``(B, T, S)``.
    """

    def __init__(self, src: Tensor, tgt: Tensor, every: int = 25) -> None:
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"every must be a positive int, got {every!r}")
        self.src, self.tgt, self.every = src, tgt, every
        self.steps: list[int] = []
        self.alignments: list[Tensor] = []

    def __call__(self, step: int, model: nn.Module, history: TrainingHistory) -> None:
        if step % self.every:
            return
        was_training = model.training
        model.eval()
        with torch.no_grad():
            _, alignment = model(self.src, self.tgt)
        model.train(was_training)
        if alignment is None:
            raise ValueError("AlignmentRecorder needs a model with attention (it returned no alignment)")
        self.steps.append(step)
        self.alignments.append(alignment.clone())


def train_seq2seq(
    model: Seq2SeqGRU,
    *,
    task: str | TaskFn = "reverse",
    lengths: Sequence[int],
    steps: int,
    batch_size: int = 32,
    lr: float = 1e-2,
    warmup_steps: int = 0,
    lr_decay: str = "cosine",
    clip_grad_norm: float | None = 1.0,
    seed: int = 0,
    callback: Callable[[int, nn.Module, TrainingHistory], bool | None] | None = None,
) -> TrainingHistory:
    """Train a :class:`Seq2SeqGRU` with teacher forcing on a sequence task of mixed lengths.

    Each step draws one length uniformly from ``lengths`` and a fresh batch of that length
    (seeded by ``seed`` and the step), so the model never sees the same batch twice. The
    defaults (batch 32, AdamW at 1e-2 with cosine decay, clipping at 1) are the ones tuned for
    chapter 1's experiment. Explained in chapter 1.

    Args:
        model: The model (trained in place).
        task: ``"copy"``, ``"reverse"``, ``"sort"`` or a function like :func:`~helpers.tasks.copy_task`.
        lengths: Sequence lengths to draw from.
        steps: Number of optimisation steps.
        batch_size: Sequences per batch.
        lr: AdamW peak learning rate.
        warmup_steps: Linear warm-up steps.
        lr_decay: ``"none"``, ``"linear"`` or ``"cosine"`` (see :func:`~helpers.train.lr_schedule`).
        clip_grad_norm: Gradient clipping (recurrent nets need it), or None.
        seed: Seed of the batches and of :func:`~helpers.train.train`.
        callback: Passed to :func:`~helpers.train.train` (e.g. an :class:`AlignmentRecorder`).

    Returns:
        The :class:`~helpers.train.TrainingHistory`.
    """
    make = _task_fn(task)
    lengths = list(lengths)
    if not lengths or any(not isinstance(n, int) or n < 1 for n in lengths):
        raise ValueError(f"lengths must be a non-empty list of positive ints, got {lengths!r}")
    gen = torch.Generator().manual_seed(seed)
    picks = torch.randint(0, len(lengths), (steps,), generator=gen).tolist()

    def make_batch(step: int) -> tuple[tuple[Tensor, Tensor], Tensor]:
        src, tgt = make(batch_size, lengths[picks[step]], model.vocab_size, seed=seed * 1_000_003 + step)
        return (src, tgt), tgt

    return train(
        model, make_batch, steps=steps, lr=lr, warmup_steps=warmup_steps, lr_decay=lr_decay,
        clip_grad_norm=clip_grad_norm, seed=seed, callback=callback,
    )


@torch.no_grad()
def evaluate_seq2seq(
    model: Seq2SeqGRU, seq_len: int, *, task: str | TaskFn = "reverse", num_samples: int = 256, seed: int = 12345
) -> dict[str, float]:
    """Greedy-decoding accuracy of a model at one source length, on fresh seeded data.

    Explained in chapter 1.

    Args:
        model: The model.
        seq_len: Source (and target) length.
        task: As in :func:`train_seq2seq`.
        num_samples: Number of test sequences.
        seed: Seed of the test data (keep it apart from training seeds).

    Returns:
        ``{"token_accuracy": ..., "sequence_accuracy": ...}``: the fraction of tokens right, and
        of sequences with every token right.
    """
    src, tgt = _task_fn(task)(num_samples, seq_len, model.vocab_size, seed=seed)
    was_training = model.training
    model.eval()
    predictions = model.generate(src, max_len=tgt.shape[1])  # (N, T)
    model.train(was_training)
    return {
        "token_accuracy": token_accuracy(predictions, tgt),
        "sequence_accuracy": sequence_accuracy(predictions, tgt),
    }


@dataclass(frozen=True)
class GradientByDistance:
    """Gradient norms of the last output with respect to each input, by distance.

    Attributes:
        distance: Distance ``L - 1 - j`` of input position ``j`` from the last position.
        rnn: Mean Frobenius norm of ``d h_{L-1} / d x_j`` for a GRU, per distance.
        attention: The same for one self-attention layer.
    """

    distance: Tensor
    rnn: Tensor
    attention: Tensor


def _jacobian_norms(fn: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    """Frobenius norm of d fn(x) / d x[j] for every position j; fn maps (L, D) to (D_out,)."""
    jac = torch.autograd.functional.jacobian(fn, x)  # (D_out, L, D)
    return jac.pow(2).sum((0, 2)).sqrt()  # (L,)


def gradient_by_distance(seq_len: int = 32, dim: int = 32, *, seeds: Sequence[int] = (0, 1, 2)) -> GradientByDistance:
    """How strongly the last output depends on each input, for a GRU and for self-attention.

    At initialisation (PyTorch's default, seeded), with standard-normal input embeddings,
    measure ``||d y_{L-1} / d x_j||_F`` for every position ``j``: ``y`` is the GRU's last hidden
    state, or the last output of one single-head self-attention layer (``W_q, W_k, W_v``, scaled
    dot product, no residual). In the GRU the signal from ``x_j`` passes through ``L - 1 - j``
    recurrent steps and its gradient shrinks roughly geometrically with distance; in attention
    every input is one step away, so the gradient does not depend on distance. Averaged over
    ``seeds``. Explained in chapter 1.

    Args:
        seq_len: Sequence length L.
        dim: Embedding and hidden size.
        seeds: Seeds to average over.

    Returns:
        A :class:`GradientByDistance`, indexed by distance ``0 .. L - 1``.
    """
    if not isinstance(seq_len, int) or seq_len < 2 or not isinstance(dim, int) or dim < 1:
        raise ValueError(f"seq_len must be an int >= 2 and dim an int >= 1, got seq_len={seq_len!r}, dim={dim!r}")
    if len(seeds) == 0:
        raise ValueError("seeds must hold at least one seed")
    rnn_norms, attention_norms = [], []
    with num_threads(1):
        for seed in seeds:
            set_seed(seed)
            gru = nn.GRU(dim, dim, batch_first=True)
            q_proj, k_proj, v_proj = (nn.Linear(dim, dim, bias=False) for _ in range(3))
            x = torch.randn(seq_len, dim)  # (L, D)

            def rnn_last(inputs: Tensor) -> Tensor:
                return gru(inputs[None])[0][0, -1]  # (1, L, D) -> (D,)

            def attention_last(inputs: Tensor) -> Tensor:
                q, k, v = q_proj(inputs)[None], k_proj(inputs)[None], v_proj(inputs)[None]  # (1, L, D) each
                return scaled_dot_product_attention(q, k, v)[0, -1]  # (1, L, D) -> (D,)

            rnn_norms.append(_jacobian_norms(rnn_last, x).flip(0))  # index by distance L - 1 - j
            attention_norms.append(_jacobian_norms(attention_last, x).flip(0))
    return GradientByDistance(
        distance=torch.arange(seq_len),
        rnn=torch.stack(rnn_norms).mean(0),
        attention=torch.stack(attention_norms).mean(0),
    )


@torch.no_grad()
def sequential_vs_parallel_time(
    lengths: Sequence[int], dim: int = 64, *, batch_size: int = 8, repeats: int = 5, threads: int = 1
) -> list[dict[str, float | int]]:
    """Wall time of a GRU over n steps against one self-attention layer over n tokens.

    Both in their fastest PyTorch form: ``nn.GRU`` (a fused loop, but its n steps must run one
    after another) and ``torch.nn.functional.scaled_dot_product_attention`` after one QKV
    projection (``O(n^2 d)`` work in a few large matrix products that no step has to wait for).
    What parallel hardware can exploit is the number of sequential steps, n against 1; on one
    CPU thread (the default) nothing runs in parallel, so the times compare the total work, and
    attention's ``n^2`` eventually costs more. Median of ``repeats`` runs after a warm-up run.
    Timings are measurements, not seeded numbers: they vary by machine and load. Explained in
    chapter 1.

    Args:
        lengths: Sequence lengths n.
        dim: Model width d.
        batch_size: Batch size.
        repeats: Timed runs per length.
        threads: Intra-op threads.

    Returns:
        A list with one dict per length, holding ``seq_len``, ``gru_ms``, ``attention_ms``, and the number of
        sequential steps ``gru_sequential_steps`` (n) and ``attention_sequential_steps`` (1).
    """
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    rows: list[dict[str, float | int]] = []
    with num_threads(threads):
        set_seed(0)
        gru = nn.GRU(dim, dim, batch_first=True)
        qkv = nn.Linear(dim, 3 * dim)

        def run_attention(x: Tensor) -> Tensor:
            q, k, v = qkv(x).chunk(3, dim=-1)  # (B, n, 3d) -> 3 x (B, n, d)
            return F.scaled_dot_product_attention(q, k, v)  # (B, n, n) weights -> (B, n, d)

        for seq_len in lengths:
            x = torch.randn(batch_size, seq_len, dim)  # (B, n, d)
            timings = {}
            for name, fn in (("gru_ms", lambda: gru(x)), ("attention_ms", lambda: run_attention(x))):
                fn()
                samples = []
                for _ in range(repeats):
                    start = time.perf_counter()
                    fn()
                    samples.append((time.perf_counter() - start) * 1000)
                timings[name] = sorted(samples)[len(samples) // 2]
            rows.append(
                {"seq_len": seq_len, **timings, "gru_sequential_steps": seq_len, "attention_sequential_steps": 1}
            )
    return rows
