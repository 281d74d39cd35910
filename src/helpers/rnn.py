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
    R: hidden (recurrent state) size ``hidden_size`` of each GRU direction and of the decoder
    (chapter 1's prose calls it H; everywhere else in the package H is a number of heads)
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
        hidden_size: Hidden size R of each encoder direction and of the decoder (the name of
            ``torch.nn.GRU``'s argument); without attention the source reaches the decoder
            through ``2 * R`` numbers.
        attention: Use additive attention over all encoder states.
        attention_dim: Hidden size of the additive scoring network (default ``R``).

    Shape:
        source ``(B, S)``, target ``(B, T)`` -> logits ``(B, T, V)``, alignment ``(B, T, S)`` (or None).
    """

    def __init__(
        self, vocab_size: int, embed_dim: int, hidden_size: int, *, attention: bool, attention_dim: int | None = None
    ) -> None:
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("embed_dim", embed_dim), ("hidden_size", hidden_size)):
            check_positive_int(name, value)
        if attention_dim is not None:
            check_positive_int("attention_dim", attention_dim)
        if not isinstance(attention, bool):
            raise TypeError(f"attention must be a bool, got {type(attention).__name__}")
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.use_attention = attention
        context_dim = 2 * hidden_size
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.encoder = nn.GRU(embed_dim, hidden_size, batch_first=True, bidirectional=True)
        self.init_proj = nn.Linear(context_dim, hidden_size)  # W_init
        self.decoder = nn.GRUCell(embed_dim + context_dim, hidden_size)
        self.attention: AdditiveAttention | None = None
        if attention:
            self.attention = AdditiveAttention(hidden_size, context_dim, attention_dim or hidden_size)
        self.out_proj = nn.Linear(hidden_size + context_dim, vocab_size)  # W_out

    def encode(self, source: Tensor) -> tuple[Tensor, Tensor]:
        """Encoder states and the fixed summary ``[h_fwd_{S-1}; h_bwd_0]``.

        Shape:
            source ``(B, S)`` -> states ``(B, S, 2R)``, summary ``(B, 2R)``.
        """
        states, final = self.encoder(self.embedding(source))  # (B, S, 2R), (2, B, R)
        summary = torch.cat([final[0], final[1]], dim=-1)  # (B, R) + (B, R) -> (B, 2R)
        return states, summary

    def forward(
        self, source: Tensor, target: Tensor | None = None, *, max_new_tokens: int | None = None
    ) -> tuple[Tensor, Tensor | None]:
        """Teacher-forced logits when ``target`` is given, else greedy decoding of ``max_new_tokens`` tokens.

        The names are those of :class:`helpers.models.TinyEncoderDecoder` (``source``,
        ``target``, ``max_new_tokens``).

        Args:
            source: Source tokens.
            target: Target tokens (teacher forcing: step ``i`` reads ``target[:, i - 1]``, step 0
                reads ``BOS_TOKEN``), or None to decode greedily.
            max_new_tokens: Number of tokens to decode greedily (default S); only without
                ``target``.

        Returns:
            ``(logits, alignment)``; ``alignment[b, i]`` is the attention of output step ``i`` over
            the source (rows sum to 1), or None without attention.

        Shape:
            source ``(B, S)``, target ``(B, T)`` -> logits ``(B, T, V)``, alignment ``(B, T, S)``.
        """
        self._check_tokens("source", source)
        if target is not None:
            self._check_tokens("target", target)
            if target.shape[0] != source.shape[0]:
                raise ValueError(
                    f"source and target must have the same batch size, got {tuple(source.shape)} and "
                    f"{tuple(target.shape)}"
                )
            if max_new_tokens is not None:
                raise ValueError("max_new_tokens is for greedy decoding; with target the output has target's length")
        if target is not None:
            steps = target.shape[1]
        else:
            steps = max_new_tokens if max_new_tokens is not None else source.shape[1]
        if not isinstance(steps, int) or steps < 1:
            raise ValueError(f"max_new_tokens must be a positive int, got {max_new_tokens!r}")

        states, summary = self.encode(source)  # (B, S, 2R), (B, 2R)
        hidden = torch.tanh(self.init_proj(summary))  # s_0: (B, R)
        if self.attention is not None:
            keys = self.attention.key_proj(states)  # W_k h_j, once for all steps: (B, S, 2R) -> (B, S, A)
        bos = torch.full_like(source[:, :1], BOS_TOKEN)  # (B, 1)
        if target is not None:  # teacher forcing: every decoder input is known in advance
            embedded = self.embedding(torch.cat([bos, target[:, :-1]], dim=1))  # (B, T, E)
        outputs, contexts, logits, alignment = [], [], [], []
        previous = bos[:, 0]  # (B,)
        for i in range(steps):
            if self.attention is None:
                context = summary  # (B, 2R)
            else:
                context, weights = self._attend(hidden, keys, states)  # (B, 2R), (B, S)
                alignment.append(weights)
            step_embedding = embedded[:, i] if target is not None else self.embedding(previous)  # (B, E)
            hidden = self.decoder(torch.cat([step_embedding, context], dim=-1), hidden)  # (B, E + 2R) -> (B, R)
            if target is not None:
                outputs.append(hidden)
                contexts.append(context)
            else:
                step_logits = self.out_proj(torch.cat([hidden, context], dim=-1))  # (B, R + 2R) -> (B, V)
                logits.append(step_logits)
                previous = step_logits.argmax(-1)  # (B,)
        if target is not None:  # one output projection for all steps
            features = torch.cat([torch.stack(outputs, 1), torch.stack(contexts, 1)], dim=-1)  # (B, T, R + 2R)
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
            query ``(B, R)`` (the state ``s_{i-1}``), keys ``(B, S, A)``, states ``(B, S, 2R)``
            -> context ``(B, 2R)``, weights ``(B, S)``.
        """
        if self.attention is None:
            raise RuntimeError("_attend is only for models built with attention=True")
        projected = self.attention.query_proj(query)  # W_q s_{i-1}: (B, R) -> (B, A)
        features = torch.tanh(projected.unsqueeze(1) + keys)  # (B, 1, A) + (B, S, A) -> (B, S, A)
        scores = features @ self.attention.score_vector  # (B, S, A) x (A,) -> (B, S)
        weights = torch.softmax(scores.float(), dim=-1).to(states.dtype)  # (B, S)
        context = (weights.unsqueeze(1) @ states).squeeze(1)  # (B, 1, S) x (B, S, 2R) -> (B, 2R)
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
    def generate(self, source: Tensor, max_new_tokens: int | None = None) -> Tensor:
        """Greedy decoding: the predicted target tokens.

        Shape:
            source ``(B, S)`` -> ``(B, max_new_tokens)`` (``max_new_tokens`` defaults to S).
        """
        logits, _ = self(source, max_new_tokens=max_new_tokens)
        return logits.argmax(-1)  # (B, T)
