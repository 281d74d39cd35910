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
  W_k h_j))`` with attention ("RNNsearch", :class:`~helpers.scores.AdditiveAttention`).

Token conventions are those of :mod:`helpers.tasks` (``BOS_TOKEN`` starts decoding). This
module holds the model only; training it and scoring it on a task are in
:mod:`helpers.experiments.seq2seq_training`, and the chapter's measurements in the other
chapter-1 modules of :mod:`helpers.experiments`.

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

import torch
from torch import Tensor, nn

from .checks import check_positive_int
from .scores import AdditiveAttention
from .tasks import BOS_TOKEN

__all__ = ["Seq2SeqGRU"]


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
            check_positive_int(name, value)
        if attention_dim is not None:
            check_positive_int("attention_dim", attention_dim)
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

    def forward(
        self, src: Tensor, tgt: Tensor | None = None, *, max_len: int | None = None
    ) -> tuple[Tensor, Tensor | None]:
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
                raise ValueError(
                    f"src and tgt must have the same batch size, got {tuple(src.shape)} and {tuple(tgt.shape)}"
                )
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

        The formula and the parameters of :class:`~helpers.scores.AdditiveAttention`
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
            got = getattr(tokens, "dtype", type(tokens))
            raise TypeError(f"{name} must be an int64 tensor of token ids, got {got}")
        if tokens.dim() != 2 or tokens.shape[1] < 1:
            raise ValueError(f"{name} must be (B, length) with length >= 1, got shape {tuple(tokens.shape)}")
        if tokens.numel() and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise ValueError(
                f"{name} holds token ids outside [0, {self.vocab_size}): "
                f"min {tokens.min().item()}, max {tokens.max().item()}"
            )

    @torch.no_grad()
    def generate(self, src: Tensor, max_len: int | None = None) -> Tensor:
        """Greedy decoding: the predicted target tokens.

        Shape:
            src ``(B, S)`` -> ``(B, max_len)`` (``max_len`` defaults to S).
        """
        logits, _ = self(src, max_len=max_len)
        return logits.argmax(-1)  # (B, T)
