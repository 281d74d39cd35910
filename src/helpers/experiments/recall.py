"""The associative-recall experiment of chapters 2 and 3: one attention layer that looks a key up.

Chapter 2 trains it with each score function (dot product, cosine, negative squared Euclidean,
general, additive); chapter 3 with the dot product at several ``d_k``, with the ``1/sqrt(d_k)``
scale, without it, with a learned temperature and with the multi-head scale bug. Everything a
run needs is one :class:`RecallConfig`; :func:`train_recall` trains one
:class:`RecallAttention` from it and returns a :class:`RecallRun`.

Shape legend::

    B   batch size                      T   tokens per sequence, 2P + 1
    P   key-value pairs per sequence    S   memory slots (P or 2P, see RecallConfig.slots)
    D   model width (embed_dim)         H   heads
    E   head dimension d_k (head_dim)   A   hidden size of additive scoring
    V   distinct value tokens (the classes to predict)

Explained in chapter 2 (``book/02-dot-product``, "Does the choice change what a model learns?")
and chapter 3 (``book/03-scaling``, "Does it matter for training?").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from ..attention import default_scale, masked_softmax
from ..checks import check_int, check_positive_int
from ..scores import additive_scores, cosine_scores, dot_scores, general_scores, neg_euclidean_scores
from ..tasks import associative_recall_task
from ..train import TrainingHistory, num_threads, set_seed, token_accuracy, train

__all__ = [
    "SCORE_FUNCTIONS",
    "SLOTS",
    "RecallConfig",
    "RecallAttention",
    "RecallRun",
    "train_recall",
    "steps_to_accuracy",
    "final_accuracy",
]

SCORE_FUNCTIONS: tuple[str, ...] = ("dot", "cosine", "neg_euclidean", "general", "additive")
"""The score functions :class:`RecallAttention` can use, from :mod:`helpers.attention` (chapter 2)."""

SLOTS: tuple[str, ...] = ("pairs", "tokens")
"""The two ways of laying out the memory (see ``RecallConfig.slots``)."""

TEST_SEED = 2**31 - 1
"""Seed of the held-out sequences; no training batch of a default run uses it."""


@dataclass(frozen=True)
class RecallConfig:
    """Everything one associative-recall run needs: the task, the model, training and measurement.

    Chapter 2 and chapter 3 each keep one of these as their defaults and change a field or two
    with :func:`dataclasses.replace`.
    """

    # The task: k_1 v_1 ... k_P v_P q -> the v_j with k_j = q (helpers.tasks.associative_recall_task)
    num_pairs: int = 8  # key-value pairs per sequence, P
    num_keys: int = 16  # distinct key tokens: ids 0 .. num_keys - 1
    num_values: int = 16  # distinct value tokens: the next num_values ids; the classes to predict
    slots: str = "pairs"  # memory: "pairs" (P slots, k_j -> v_j) or "tokens" (2P slots, token t -> token t + 1)
    # The model (RecallAttention)
    score: str = "dot"  # score function, one of SCORE_FUNCTIONS
    embed_dim: int = 16  # model width D; head_dim E = D / num_heads
    num_heads: int = 1  # heads H
    scale: float | None = None  # factor on the scores; None: 1/sqrt(E) for "dot", 1 for the others
    learned_scale: bool = False  # learn log(scale) with the other weights (a learned temperature)
    hidden_dim: int = 16  # hidden size A of additive scoring
    # Training (helpers.train.train: AdamW, no warm-up, no clipping, one PyTorch thread)
    steps: int = 300  # optimisation steps
    batch_size: int = 64  # sequences per step
    lr: float = 1e-3  # learning rate
    data_seed: int = 1234  # batch t of the run with seed s is drawn with seed data_seed + 1_000_003 s + t
    # Measurement
    num_test: int = 0  # held-out sequences (seed TEST_SEED); 0 measures the batch accuracy only
    eval_every: int = 20  # held-out accuracy every this many steps, and after the last
    target: float = 0.9  # the accuracy of RecallRun.steps_to_target
    window: int = 20  # steps averaged by steps_to_accuracy (the batch accuracy is noisy)
    # Optional (chapter 3; the defaults change nothing)
    stop_after_target: int | None = None  # end training this many steps after steps_to_target (None: all steps)
    scale_lr_factor: float = 1.0  # learned_scale only: the temperature's learning rate is scale_lr_factor * lr
    qk_dim: int | None = None  # size E of the queries and keys of a head (None: embed_dim / num_heads)
    qk_lr_factor: float = 1.0  # the learning rate of q_proj and k_proj is qk_lr_factor * lr

    def __post_init__(self) -> None:
        for name in ("num_pairs", "num_keys", "num_values", "embed_dim", "num_heads", "hidden_dim", "steps",
                     "batch_size", "eval_every", "window"):
            check_positive_int(name, getattr(self, name))
        check_int("num_test", self.num_test, 0)
        if self.slots not in SLOTS:
            raise ValueError(f"slots must be one of {SLOTS}, got {self.slots!r}")
        if self.score not in SCORE_FUNCTIONS:
            raise ValueError(f"score must be one of {SCORE_FUNCTIONS}, got {self.score!r}")
        if self.embed_dim % self.num_heads:
            raise ValueError(f"num_heads={self.num_heads} must divide embed_dim={self.embed_dim}")
        if self.qk_dim is not None:
            check_positive_int("qk_dim", self.qk_dim)
        if self.stop_after_target is not None:
            check_int("stop_after_target", self.stop_after_target, 0)
        for name in ("scale_lr_factor", "qk_lr_factor"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")

    @property
    def head_dim(self) -> int:
        """The size E (``d_k``) of each head's queries and keys: ``qk_dim``, or ``embed_dim / num_heads``."""
        return self.embed_dim // self.num_heads if self.qk_dim is None else self.qk_dim

    @property
    def initial_scale(self) -> float:
        """The factor on the scores at the start, which is ``scale`` or the default for ``score``."""
        if self.scale is not None:
            return float(self.scale)
        return default_scale(self.head_dim) if self.score == "dot" else 1.0

    def make_batch(self, step: int, seed: int = 0) -> tuple[Tensor, Tensor]:
        """Training batch ``step`` of the run with seed ``seed``.

        Returns:
            ``(tokens, target)``: tokens ``(B, 2P + 1)``, and the index of the value to predict
            ``(B,)``, in ``[0, num_values)``.
        """
        return self._batch(self.batch_size, self.data_seed + 1_000_003 * seed + step)

    def test_set(self) -> tuple[Tensor, Tensor]:
        """The ``num_test`` held-out sequences, ``(N, 2P + 1)``, and their answers ``(N,)``."""
        return self._batch(self.num_test, TEST_SEED)

    def _batch(self, size: int, seed: int) -> tuple[Tensor, Tensor]:
        tokens, target = associative_recall_task(size, self.num_pairs, self.num_keys, self.num_values, seed=seed)
        return tokens, target - self.num_keys


class RecallAttention(nn.Module):
    """One attention layer that answers associative recall: the query key looks up its value.

    The input ``k_1 v_1 ... k_P v_P q`` (:func:`~helpers.tasks.associative_recall_task`) is
    embedded, and the last token, the query, attends over memory slots. Slot ``s`` is found by
    one token and returns the token after it: the pairing "key, then its value" is given, as a
    previous-token layer would give it, so the one thing left to learn is the lookup itself:
    which slot matches the query? With ``slots="pairs"`` the slots are the P pairs
    ``(k_j, v_j)``; with ``slots="tokens"`` every token but the query is a slot (2P of them,
    half of them ``(v_j, k_{j+1})``, never the answer). Queries, keys and values go through
    ``q_proj``, ``k_proj``, ``v_proj``, are split into ``num_heads`` heads, scored, and the
    heads' outputs are concatenated through ``o_proj`` and named by a linear ``readout``.

    Only the scores change between the models the book compares:

    - ``score``: ``"dot"`` (:func:`~helpers.scores.dot_scores`), ``"cosine"``
      (:func:`~helpers.scores.cosine_scores`), ``"neg_euclidean"``
      (:func:`~helpers.scores.neg_euclidean_scores`), ``"general"``
      (:func:`~helpers.scores.general_scores`, a learned ``W`` per model) or ``"additive"``
      (:func:`~helpers.scores.additive_scores`, learned ``W_q, W_k, v``). Chapter 2.
    - ``scale``: a factor on the scores, ``None`` for the usual one (``1/sqrt(head_dim)`` for
      ``"dot"``, the Transformer's scaled dot product; 1 for the others), ``1.0`` for none,
      anything else for a fixed temperature (e.g. ``1/sqrt(d_model)``, the multi-head bug).
      ``learned_scale=True`` learns ``log(scale)`` from that start. Chapter 3.

    Args:
        num_keys: Distinct key tokens (the first ``num_keys`` token ids).
        num_values: Distinct value tokens (the next ``num_values`` ids).
        embed_dim: Model width D.
        num_heads: Heads H; must divide ``embed_dim``.
        score: One of :data:`SCORE_FUNCTIONS`.
        scale: The factor on the scores (its initial value when learned), ``> 0``.
        learned_scale: Make ``log(scale)`` a trainable parameter.
        hidden_dim: Hidden size A of additive scoring.
        slots: ``"pairs"`` or ``"tokens"`` (see above).
        qk_dim: Size E of each head's queries and keys (``None``: ``embed_dim / num_heads``); the values
            keep ``embed_dim / num_heads``. Chapter 3 changes ``d_k`` at a fixed model width with it.

    Shape:
        tokens ``(B, 2P + 1)`` -> logits ``(B, num_values)``, weights ``(B, H, 1, S)``.
    """

    def __init__(
        self,
        num_keys: int,
        num_values: int,
        embed_dim: int,
        num_heads: int = 1,
        *,
        score: str = "dot",
        scale: float | None = None,
        learned_scale: bool = False,
        hidden_dim: int = 16,
        slots: str = "pairs",
        qk_dim: int | None = None,
    ) -> None:
        super().__init__()
        config = RecallConfig(num_keys=num_keys, num_values=num_values, embed_dim=embed_dim, num_heads=num_heads,
                              score=score, scale=scale, learned_scale=learned_scale, hidden_dim=hidden_dim,
                              slots=slots, qk_dim=qk_dim)  # checks every argument
        initial = config.initial_scale
        if not (initial > 0 and math.isfinite(initial)):
            raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
        self.score = score
        self.num_heads = num_heads
        self.head_dim = config.head_dim
        self.value_dim = embed_dim // num_heads
        self.slot_stride = 2 if slots == "pairs" else 1
        self.embed = nn.Embedding(num_keys + num_values, embed_dim)
        self.q_proj = nn.Linear(embed_dim, num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(embed_dim, num_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.o_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.readout = nn.Linear(embed_dim, num_values)
        E = self.head_dim
        if score == "general":
            self.general_weight = nn.Parameter(torch.eye(E) + torch.randn(E, E) / E)  # W, (E, E)
        if score == "additive":
            self.additive_w_q = nn.Parameter(torch.randn(hidden_dim, E) / math.sqrt(E))  # (A, E)
            self.additive_w_k = nn.Parameter(torch.randn(hidden_dim, E) / math.sqrt(E))  # (A, E)
            self.additive_v = nn.Parameter(torch.randn(hidden_dim) / math.sqrt(hidden_dim))  # (A,)
        log_scale = torch.tensor(math.log(initial))
        if learned_scale:
            self.log_scale = nn.Parameter(log_scale)
        else:
            self.register_buffer("log_scale", log_scale)

    @classmethod
    def from_config(cls, config: RecallConfig) -> RecallAttention:
        """The model that :func:`train_recall` trains for ``config``."""
        return cls(config.num_keys, config.num_values, config.embed_dim, config.num_heads, score=config.score,
                   scale=config.scale, learned_scale=config.learned_scale, hidden_dim=config.hidden_dim,
                   slots=config.slots, qk_dim=config.qk_dim)

    @property
    def scale(self) -> float:
        """The current factor on the scores."""
        return self.log_scale.exp().item()

    def scores(self, query: Tensor, key: Tensor) -> Tensor:
        """The chosen score function, before the scale: ``(..., L, E), (..., S, E) -> (..., L, S)``."""
        if self.score == "dot":
            return dot_scores(query, key)
        if self.score == "cosine":
            return cosine_scores(query, key)
        if self.score == "neg_euclidean":
            return neg_euclidean_scores(query, key)
        if self.score == "general":
            return general_scores(query, key, self.general_weight)
        return additive_scores(query, key, self.additive_w_q, self.additive_w_k, self.additive_v)

    def scaled_scores(self, tokens: Tensor) -> Tensor:
        """The scores the softmax of :meth:`forward` sees, scale included: ``(B, 2P + 1) -> (B, H, 1, S)``.

        Used to watch the spread of the attention logits during training (chapter 3).
        """
        B, H, E = tokens.size(0), self.num_heads, self.head_dim
        x = self.embed(tokens)  # (B, T, D)
        q = self.q_proj(x[:, -1:]).view(B, 1, H, E).transpose(1, 2)  # (B, H, 1, E)
        k = self.k_proj(x[:, 0:-1:self.slot_stride]).view(B, -1, H, E).transpose(1, 2)  # (B, H, S, E)
        return self.scores(q, k) * self.log_scale.exp()  # (B, H, 1, S)

    def forward(self, tokens: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(logits, weights)``: the value paired with the query key, and where it looked."""
        B, H, E = tokens.size(0), self.num_heads, self.head_dim
        x = self.embed(tokens)  # (B, T, D)
        query = x[:, -1:]  # (B, 1, D): the query key, last
        key = x[:, 0:-1:self.slot_stride]  # (B, S, D): slot s is found by its own token ...
        value = x[:, 1::self.slot_stride]  # (B, S, D): ... and returns the token after it
        q = self.q_proj(query).view(B, 1, H, E).transpose(1, 2)  # (B, H, 1, E)
        k = self.k_proj(key).view(B, -1, H, E).transpose(1, 2)  # (B, H, S, E)
        v = self.v_proj(value).view(B, -1, H, self.value_dim).transpose(1, 2)  # (B, H, S, D / H)
        scores = self.scores(q, k) * self.log_scale.exp()  # (B, H, 1, S)
        weights = masked_softmax(scores)  # (B, H, 1, S), float32
        out = weights @ v  # (B, H, 1, S) x (B, H, S, D / H) -> (B, H, 1, D / H)
        out = out.transpose(1, 2).reshape(B, -1)  # (B, D): heads concatenated
        return self.readout(self.o_proj(out)), weights  # (B, V), (B, H, 1, S)


def steps_to_accuracy(history: TrainingHistory, target: float = 0.9, *, window: int = 20) -> int | None:
    """First step at which the batch accuracy, averaged over the last ``window`` steps, reaches ``target``.

    Args:
        history: What :func:`helpers.train.train` recorded.
        target: The accuracy to reach.
        window: Length of the moving average (batch accuracy is noisy).

    Returns:
        The step index, or ``None`` if the run never got there.
    """
    accuracy = history.accuracy
    running = 0.0
    for step, value in enumerate(accuracy):
        running += value
        if step >= window:
            running -= accuracy[step - window]
        if step >= window - 1 and running / window >= target:
            return step
    return None


def final_accuracy(history: TrainingHistory, *, last: int = 50) -> float:
    """Mean batch accuracy over the last ``last`` steps of a run."""
    tail = history.accuracy[-last:]
    return sum(tail) / len(tail)


@dataclass
class RecallRun:
    """One training run of :func:`train_recall`, and what was measured.

    Attributes:
        label: What the run is, for tables and legends (e.g. ``"scaled"``, ``"cosine"``).
        config: The settings it ran with.
        seed: Seed of the initialisation and of the training batches.
        history: What :func:`helpers.train.train` recorded: loss and batch accuracy per step,
            held-out accuracy at :attr:`eval_steps` (when ``config.num_test > 0``), wall time.
        num_parameters: Trainable parameters of the model.
        scale_trajectory: The factor on the scores after each step (only for learned scales).
        score_std_steps: Optimisation steps done when :attr:`score_std` was measured (only with
            ``record_score_std_every``; 0 is the initialisation).
        score_std: Standard deviation of the scaled scores within a softmax row (over the S
            slots), averaged over the rows of a fixed batch: the spread the softmax sees.
    """

    label: str
    config: RecallConfig
    seed: int
    history: TrainingHistory
    num_parameters: int
    scale_trajectory: list[float] = field(default_factory=list)
    score_std_steps: list[int] = field(default_factory=list)
    score_std: list[float] = field(default_factory=list)

    @property
    def d_k(self) -> int:
        """Head size."""
        return self.config.head_dim

    @property
    def num_heads(self) -> int:
        return self.config.num_heads

    @property
    def lr(self) -> float:
        return self.config.lr

    @property
    def scale(self) -> float:
        """Factor on the scores at the start (``1/sqrt(d_k)`` for the standard dot product)."""
        return self.config.initial_scale

    @property
    def target(self) -> float:
        """The accuracy of :attr:`steps_to_target`."""
        return self.config.target

    @property
    def steps_to_target(self) -> int | None:
        """:func:`steps_to_accuracy` of the batch accuracy at :attr:`target` (``None``: never reached)."""
        return steps_to_accuracy(self.history, self.config.target, window=self.config.window)

    @property
    def final_accuracy(self) -> float:
        """:func:`final_accuracy`: mean batch accuracy over the last 50 steps."""
        return final_accuracy(self.history)

    @property
    def eval_steps(self) -> list[int]:
        """Steps (0-based) at which the held-out accuracy was measured."""
        return list(self.history.eval_step)

    @property
    def test_accuracy(self) -> list[float]:
        """Held-out accuracy at :attr:`eval_steps`."""
        return self.history.eval_series("accuracy")

    @property
    def final_test_accuracy(self) -> float:
        """Held-out accuracy after the last step."""
        return self.test_accuracy[-1]

    def test_steps_to(self, accuracy: float) -> int | None:
        """Steps after which the held-out accuracy first reached ``accuracy`` (``None``: never)."""
        for step, acc in zip(self.eval_steps, self.test_accuracy):
            if acc >= accuracy:
                return step + 1
        return None

    @property
    def wall_time(self) -> float:
        """Seconds of training (evaluation excluded)."""
        return self.history.wall_time[-1]

    @property
    def step_time(self) -> float:
        """Seconds of the fastest training step (the step least disturbed by other processes)."""
        times = self.history.wall_time
        return min(b - a for a, b in zip([0.0, *times[:-1]], times))


def train_recall(
    config: RecallConfig = RecallConfig(),
    *,
    seed: int = 0,
    label: str | None = None,
    record_attention_entropy: bool = False,
    callback: Callable[[int, RecallAttention, TrainingHistory], bool | None] | None = None,
    record_score_std_every: int = 0,
) -> RecallRun:
    """Train one :class:`RecallAttention` on seeded associative recall and measure it.

    The model (:meth:`RecallAttention.from_config`, initialised after ``set_seed(seed)``) is
    trained by :func:`helpers.train.train` (AdamW, no warm-up, no clipping) on the batches of
    :meth:`RecallConfig.make_batch`, on one PyTorch thread (:func:`helpers.train.num_threads`:
    for tensors this small more threads only add synchronisation). When ``config.num_test > 0``
    the accuracy on that many held-out sequences is measured every ``config.eval_every`` steps.
    With ``config.stop_after_target = n`` training ends ``n`` steps after the moving-average
    batch accuracy first reaches ``config.target`` (so the last ``n`` steps show whether it stays
    there). With ``config.learned_scale`` and ``config.scale_lr_factor = c``, each step's change
    of ``log(scale)`` is multiplied by ``c``: for AdamW without weight decay that is exactly a
    learning rate ``c * lr`` for the temperature. ``config.qk_lr_factor = c`` does the same for the weights
    of ``q_proj`` and ``k_proj``: a learning rate ``c * lr`` for them alone. Explained in chapters 2 and 3.

    Args:
        config: Task, model, training and measurement settings.
        seed: Seed of the initialisation and of the training batches.
        label: Name of the run; ``config.score`` when ``None``.
        record_attention_entropy: Record the attention entropy per step.
        callback: Passed to :func:`helpers.train.train`, after the scale is recorded.
        record_score_std_every: Every this many steps (and at initialisation), record the
            within-row standard deviation of the scaled scores on the run's first batch
            (:attr:`RecallRun.score_std`); 0 records nothing.

    Returns:
        The :class:`RecallRun`.
    """
    check_int("record_score_std_every", record_score_std_every, 0)
    set_seed(seed)
    model = RecallAttention.from_config(config)
    trajectory: list[float] = []
    std_steps: list[int] = []
    std_values: list[float] = []
    probe = config.make_batch(0, seed)[0] if record_score_std_every else None
    previous_log_scale = model.log_scale.detach().clone()
    qk_weights = (model.q_proj.weight, model.k_proj.weight)
    previous_qk = [w.detach().clone() for w in qk_weights]
    reached: list[int] = []  # the step at which the moving-average accuracy reached the target

    def record_score_std(done: int) -> None:
        with torch.no_grad():
            std_values.append(model.scaled_scores(probe).std(dim=-1).mean().item())  # over the S slots
        std_steps.append(done)

    if record_score_std_every:
        record_score_std(0)

    def after_step(step: int, trained: nn.Module, history: TrainingHistory) -> bool | None:
        nonlocal previous_log_scale
        if config.learned_scale and config.scale_lr_factor != 1.0:
            with torch.no_grad():  # AdamW moved log_scale by about lr; move it scale_lr_factor times as far
                model.log_scale.add_((config.scale_lr_factor - 1.0) * (model.log_scale - previous_log_scale))
                previous_log_scale = model.log_scale.detach().clone()
        if config.qk_lr_factor != 1.0:
            with torch.no_grad():  # AdamW moved W_Q and W_K by about lr; move them qk_lr_factor times as far
                for weight, previous in zip(qk_weights, previous_qk):
                    weight.add_((config.qk_lr_factor - 1.0) * (weight - previous))
                    previous.copy_(weight)
        if config.learned_scale:
            trajectory.append(model.scale)
        if record_score_std_every and (step + 1) % record_score_std_every == 0:
            record_score_std(step + 1)
        stop = False
        if config.stop_after_target is not None:
            accuracy = history.accuracy
            window = config.window
            if not reached and step >= window - 1 and sum(accuracy[-window:]) / window >= config.target:
                reached.append(step)
            stop = bool(reached) and step >= reached[0] + config.stop_after_target
        stop_by_callback = None if callback is None else callback(step, model, history)
        return True if stop else stop_by_callback

    eval_fn = None
    if config.num_test:
        test_tokens, test_target = config.test_set()

        def eval_fn(trained: nn.Module) -> dict[str, float]:
            return {"accuracy": token_accuracy(trained(test_tokens)[0], test_target)}

    with num_threads(1):  # tiny operations: one thread is faster, and steadier on a busy machine
        history = train(
            model,
            lambda step: config.make_batch(step, seed),
            steps=config.steps,
            lr=config.lr,
            eval_fn=eval_fn,
            eval_every=config.eval_every,
            record_attention_entropy=record_attention_entropy,
            seed=seed,
            callback=after_step,
        )
    return RecallRun(
        label=config.score if label is None else label,
        config=config,
        seed=seed,
        history=history,
        num_parameters=sum(p.numel() for p in model.parameters() if p.requires_grad),
        scale_trajectory=trajectory,
        score_std_steps=std_steps,
        score_std=std_values,
    )
