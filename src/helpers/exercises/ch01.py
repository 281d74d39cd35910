"""Checkers for the exercises of chapter 1, "Why attention" (``notebooks/01-bottleneck-lab.ipynb``).

Each checker takes the reader's answer, never raises on a wrong one (exceptions from the
reader's code are caught and reported), and returns a :class:`~helpers.exercises.CheckResult`
whose message names the mistake: a missing ``tanh``, a transposed weight, a mask applied at the
wrong moment, the wrong curve read off a figure.

- :func:`check_additive_scores`: Bahdanau's score ``v^T tanh(W_q s + W_k h_j)``.
- :func:`check_masked_softmax`: attention weights over padded encoder states.
- :func:`check_breaking_length`: where the model without attention breaks, read off the sweep.
- :func:`mystery_alignments` and :func:`check_task_names`: name the task from its alignment.
- :func:`check_gradient_prediction`: a prediction, written before the run, of how the gradient
  of the last output falls with distance in a GRU and in attention.
- :func:`check_control_design`: a control experiment the reader designs: is attention's
  advantage only its extra parameters?

The two from-scratch exercises (1 and 2) run the reader's function with the package's own
implementation switched off (:func:`helpers.exercises.guard.package_disabled`): an answer that
just calls it is rejected, by name.

Every checker takes ``language`` (``"en"``, ``"zh"``; ``None``: :func:`helpers.exercises.get_language`)
and writes its verdict from ``MESSAGES``, this chapter's part of the checkers' catalogue
(``helpers.exercises.messages``), as :mod:`helpers.exercises.ch04` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Callable

import torch
from torch import Tensor

from helpers import attention as _attention
from helpers import scores as _scores
from helpers.attention import masked_softmax
from helpers.exercises import CheckResult
from helpers.exercises.guard import package_disabled
from helpers.exercises.messages import LANGUAGES, phrase, register, text
from helpers.exercises.reader import allclose, as_tensor, call_reader_function, reader_globals
from helpers.scores import AdditiveAttention, additive_scores

__all__ = [
    "check_additive_scores",
    "check_masked_softmax",
    "check_breaking_length",
    "MYSTERY_LABELS",
    "mystery_alignments",
    "check_task_names",
    "GRADIENT_SHAPES",
    "GRU_RATIO_BANDS",
    "check_gradient_prediction",
    "parameter_count",
    "check_control_design",
]

MESSAGES = {
    "ch01.what.scores": {"en": "scores (B, S)", "zh": "分数（形状 (B, S)）"},
    "ch01.what.weights": {"en": "weights (B, S)", "zh": "权重（形状 (B, S)）"},
    "ch01.additive.shape_hint": {
        "en": " (a shape mismatch: W_q is laid out like nn.Linear(E_q, A).weight, i.e. (A, E_q), so a query (B, E_q) "
              "is projected by query @ w_q.T)",
        "zh": "（形状不匹配：W_q 的布局与 nn.Linear(E_q, A).weight 相同，即 (A, E_q)，"
              "所以形状为 (B, E_q) 的查询要用 query @ w_q.T 投影）"},
    "ch01.additive.stopped_at_tanh": {
        "en": "your scores have shape {shape} = (B, S, A): you stopped at tanh(W_q s + W_k h_j); take the dot "
              "product with v to get one number per key",
        "zh": "你的分数形状是 {shape} = (B, S, A)：算到 tanh(W_q s + W_k h_j) 就停了；"
              "还要与 v 做点积，让每个键得到一个数"},
    "ch01.additive.reshape": {
        "en": "your scores have shape {shape}, expected (B, S) = {expected}: squeeze or reshape to one score per "
              "encoder state",
        "zh": "你的分数形状是 {shape}，应为 (B, S) = {expected}：用 squeeze 或 reshape 整理成每个编码器状态一个分数"},
    "ch01.additive.shape": {
        "en": "expected scores of shape (B, S) = {expected}, got {got}",
        "zh": "分数的形状应为 (B, S) = {expected}，得到的是 {got}"},
    "ch01.additive.not_finite": {"en": "your scores contain NaN or inf", "zh": "你的分数里有 NaN 或 inf"},
    "ch01.additive.passed": {
        "en": "v^T tanh(W_q s + W_k h_j) for every encoder state: the same scores as helpers.scores.additive_scores.",
        "zh": "对每个编码器状态算出 v^T tanh(W_q s + W_k h_j)：与 helpers.scores.additive_scores 的分数相同。"},
    "ch01.additive.softmax": {
        "en": "you returned attention weights (a softmax was applied): return the raw scores; the softmax comes next, "
              "after masking the padded positions",
        "zh": "你返回的是注意力权重（已经过了 softmax）：应返回原始分数；"
              "softmax 是下一步的事，要在遮住填充位置之后再做"},
    "ch01.additive.sign": {
        "en": "your scores have the wrong sign: it is +v^T tanh(...), and a flipped sign makes softmax favour the "
              "worst match",
        "zh": "分数的符号反了：应是 +v^T tanh(...)；符号一反，softmax 偏爱的就成了最不匹配的键"},
    "ch01.additive.no_tanh": {
        "en": "you left out the tanh: without it the score is v.W_q s + v.W_k h_j, and the query's term is the same "
              "for every key, so it cancels in the softmax: the decoder state could no longer change where the "
              "model looks",
        "zh": "你漏掉了 tanh：没有它，分数就是 v.W_q s + v.W_k h_j，其中查询那一项对每个键都一样，"
              "在 softmax 里会被抵消；这样一来，解码器状态就再也改变不了模型看向哪里"},
    "ch01.additive.separate_tanh": {
        "en": "you applied tanh to each projection separately: apply it to the sum W_q s + W_k h_j, so that the "
              "query and the key interact inside the nonlinearity",
        "zh": "你对两个投影分别做了 tanh：应对它们的和 W_q s + W_k h_j 做 tanh，让查询与键在非线性函数内部相互作用"},
    "ch01.additive.no_query": {
        "en": "your scores ignore the decoder state: add W_q s inside the tanh, otherwise every decoder step attends "
              "to the same places",
        "zh": "你的分数没有用到解码器状态：要在 tanh 里加上 W_q s，否则解码器每一步注意的位置都一样"},
    "ch01.additive.differs": {
        "en": "the shape is right but the values differ from v^T tanh(W_q s + W_k h_j) (largest difference "
              "{error:.3g}); check which weight multiplies the query and which the keys",
        "zh": "形状对了，数值却与 v^T tanh(W_q s + W_k h_j) 不同（最大差值 {error:.3g}）；"
              "请检查哪个权重乘查询、哪个权重乘键"},
    "ch01.masked.shape": {
        "en": "expected weights of the scores' shape (B, S) = {expected}, got {got}",
        "zh": "权重的形状应与分数相同，即 (B, S) = {expected}，得到的是 {got}"},
    "ch01.masked.nan": {"en": "your weights contain NaN", "zh": "你的权重里有 NaN"},
    "ch01.masked.unmasked": {
        "en": "the padded positions still get weight: set their scores to -inf before the softmax, so that exp() "
              "makes them exactly 0 (torch.finfo(dtype).min zeroes them too, but a sequence with no real token then "
              "gets uniform weights over its padding, where the book defines all-zero weights; see chapter 0)",
        "zh": "填充位置仍然分到了权重：应在 softmax 之前把它们的分数设为 -inf，让 exp() 把它们变成恰好为 0"
              "（torch.finfo(dtype).min 也能让它们为 0，但一个没有真实词元的序列就会在填充位置上得到均匀的权重，"
              "而本书规定这时权重全为零；见第 0 章）"},
    "ch01.masked.inverted": {
        "en": "your mask is inverted: the weights sit on the padding and the real tokens get 0; position j is real "
              "when j < lengths[b]",
        "zh": "你的掩码反了：权重落在填充位置上，真实词元反而得到 0；j < lengths[b] 时，位置 j 才是真实词元"},
    "ch01.masked.after_softmax": {
        "en": "you zeroed the padded weights after the softmax: the remaining weights no longer sum to 1; mask the "
              "scores before the softmax instead",
        "zh": "你在 softmax 之后才把填充位置的权重清零：剩下的权重之和不再是 1；应在 softmax 之前给分数加掩码"},
    "ch01.masked.batch_axis": {
        "en": "your softmax runs over the batch axis (dim 0): each sequence's weights must sum to 1 over its own "
              "source positions (dim -1)",
        "zh": "你的 softmax 是沿批这一维（dim 0）算的：每个序列的权重应在它自己的各个源位置上（dim -1）求和为 1"},
    "ch01.masked.off_by_one": {
        "en": "off by one: your mask keeps position lengths[b] too; the real tokens are positions 0 .. lengths[b] - 1 "
              "(use positions < lengths)",
        "zh": "差了一位：你的掩码把位置 lengths[b] 也留下了；真实词元是位置 0 .. lengths[b] - 1"
              "（应写 positions < lengths）"},
    "ch01.masked.padding_weight": {
        "en": "the padded positions get total weight {weight:.3g}; they must get exactly 0",
        "zh": "填充位置一共分到了 {weight:.3g} 的权重；它们应当恰好为 0"},
    "ch01.masked.wrong_softmax": {
        "en": "the padding is ignored, but the weights over the real positions are not their softmax; check the "
              "scores you pass to the softmax",
        "zh": "填充位置已被忽略，但真实位置上的权重不是它们的 softmax；请检查传给 softmax 的分数"},
    "ch01.masked.empty_failed": {
        "en": "right for non-empty sequences, but with a sequence of length 0: {failure}",
        "zh": "非空序列都对了，但遇到长度为 0 的序列时：{failure}"},
    "ch01.masked.empty_nan": {
        "en": "right for non-empty sequences, but a sequence of length 0 gives NaN: every score of that row is -inf "
              "and softmax computes 0/0; give such a row all-zero weights (e.g. torch.nan_to_num, or masked_fill "
              "after the softmax)",
        "zh": "非空序列都对了，但长度为 0 的序列得到了 NaN：这一行的分数全是 -inf，softmax 算的是 0/0；"
              "应让这样的行权重全为零（例如用 torch.nan_to_num，或在 softmax 之后用 masked_fill）"},
    "ch01.masked.empty_not_zero": {
        "en": "right for non-empty sequences, but a sequence of length 0 must get all-zero weights, as chapter 0 "
              "defines a row with nothing to attend to; your row sums to {total:.3g}",
        "zh": "非空序列都对了，但长度为 0 的序列应得到全零的权重，第 0 章对没有可注意之处的行就是这样规定的；"
              "你的这一行之和为 {total:.3g}"},
    "ch01.masked.empty_uniform": {
        "en": "right for non-empty sequences, but a sequence of length 0 must get all-zero weights, as chapter 0 "
              "defines a row with nothing to attend to; your row sums to {total:.3g} (uniform weights over the "
              "padding: a large negative score such as finfo.min instead of -inf)",
        "zh": "非空序列都对了，但长度为 0 的序列应得到全零的权重，第 0 章对没有可注意之处的行就是这样规定的；"
              "你的这一行之和为 {total:.3g}（填充位置上是均匀的权重：用的是 finfo.min 这类很大的负分数，"
              "而不是 -inf）"},
    "ch01.masked.passed": {
        "en": "softmax over the real tokens, exactly 0 on the padding, and an empty sequence gets zeros instead of "
              "NaN: the same as helpers.attention.masked_softmax.",
        "zh": "softmax 只在真实词元上计算，填充位置恰好为 0，空序列得到的是全零而不是 NaN："
              "与 helpers.attention.masked_softmax 相同。"},
    "ch01.breaking.unreadable": {
        "en": "could not read the sweep for hidden_dim={hidden_dim}: {error}",
        "zh": "读不出 hidden_dim={hidden_dim} 的扫描结果：{error}"},
    "ch01.breaking.ellipsis": {
        "en": "replace the ... with the length you read off the sweep (an int, or None)",
        "zh": "请把 ... 换成你从扫描结果中读出的长度（一个 int，或者 None）"},
    "ch01.breaking.not_a_length": {
        "en": "answer with a length, an int from {lengths} (or None), got {answer}",
        "zh": "请用一个长度作答，即 {lengths} 中的一个 int（或者 None），得到的是 {answer}"},
    "ch01.breaking.passed": {
        "en": "the GRU without attention (H = {hidden}) first falls below {threshold:.0%} at length {expected}: "
              "{values}.",
        "zh": "没有注意力的 GRU（H = {hidden}）在长度 {expected} 处首次降到 {threshold:.0%} 以下：{values}。"},
    "ch01.breaking.passed_never": {
        "en": "the GRU without attention (H = {hidden}) never falls below: {values}.",
        "zh": "没有注意力的 GRU（H = {hidden}）始终没有降到阈值以下：{values}。"},
    "ch01.breaking.not_evaluated": {
        "en": "{answer} is not one of the evaluated lengths {lengths}",
        "zh": "{answer} 不在评估过的长度 {lengths} 之中"},
    "ch01.breaking.with_attention": {
        "en": "that is where the model *with* attention falls below the threshold; the question is about the model "
              "without attention",
        "zh": "那是*有*注意力的模型降到阈值以下的位置；题目问的是没有注意力的模型"},
    "ch01.breaking.sequence": {
        "en": "that is where the whole-sequence accuracy falls below {threshold:.0%}; the question asks for the token "
              "accuracy (the fraction of tokens right)",
        "zh": "那是整句准确率降到 {threshold:.0%} 以下的位置；题目问的是词元准确率（答对的词元所占的比例）"},
    "ch01.breaking.last_working": {
        "en": "at length {answer} the accuracy is still {accuracy:.2f}: that is the last length that works; give the "
              "first one below the threshold",
        "zh": "在长度 {answer} 处，准确率还有 {accuracy:.2f}：这是还能用的最后一个长度；请给出第一个低于阈值的长度"},
    "ch01.breaking.other_hidden": {
        "en": "that is the breaking length for H = {other}; the question is about H = {hidden}",
        "zh": "那是 H = {other} 时的失效长度；题目问的是 H = {hidden}"},
    "ch01.breaking.not_quite": {
        "en": "not quite: read the curve of the model without attention for H = {hidden} and find the first length "
              "whose token accuracy is below {threshold:.0%}",
        "zh": "还差一点：请看 H = {hidden} 时没有注意力的模型的那条曲线，"
              "找出词元准确率第一次低于 {threshold:.0%} 的长度"},
    "ch01.tasks.not_a_dict": {
        "en": "answer with a dict {{'A': task, 'B': task, 'C': task}}, tasks among {tasks}; got {type}",
        "zh": "请用字典 {{'A': task, 'B': task, 'C': task}} 作答，task 取自 {tasks}；得到的是 {type}"},
    "ch01.tasks.ellipsis": {
        "en": "replace each ... with the name of a task, one of {tasks}",
        "zh": "请把每个 ... 换成一个任务名，取自 {tasks}"},
    "ch01.tasks.missing": {
        "en": "name every alignment: missing {missing}",
        "zh": "每个对齐都要命名：缺少 {missing}"},
    "ch01.tasks.unknown": {
        "en": "{unknown}: each task must be one of {tasks}",
        "zh": "{unknown}：每个任务都必须是 {tasks} 之一"},
    "ch01.tasks.passed": {
        "en": "copy reads the source in order (a diagonal), reverse reads it backwards (the anti-diagonal), and sort "
              "jumps to wherever the next-smallest token is: its alignment depends on the content, not on the "
              "position.",
        "zh": "copy（复制）按顺序读源序列（一条对角线），reverse（反转）倒着读（反对角线），"
              "sort（排序）则跳到下一个最小的词元所在之处：它的对齐取决于内容，而不是位置。"},
    "ch01.tasks.hint_sort": {
        "en": "{label} is not a straight line: an output reads from a place that depends on the tokens; follow the "
              "source tokens its rows point at, in order",
        "zh": "{label} 不是一条直线：每个输出从哪里读，取决于词元本身；按顺序看它的各行指向哪些源词元"},
    "ch01.tasks.hint_copy": {
        "en": "{label}: the first output reads the first source token: a line from top-left to bottom-right is "
              "copy, from top-right to bottom-left is reverse",
        "zh": "{label}：第一个输出读的是第一个源词元；从左上到右下的线是 copy，从右上到左下的线是 reverse"},
    "ch01.tasks.hint_reverse": {
        "en": "{label}: the first output reads the last source token: a line from top-left to bottom-right is "
              "copy, from top-right to bottom-left is reverse",
        "zh": "{label}：第一个输出读的是最后一个源词元；从左上到右下的线是 copy，从右上到左下的线是 reverse"},
    "ch01.tasks.hint_line": {
        "en": "{label} is a straight line: its outputs read the source positions in a fixed order, whatever the "
              "tokens are",
        "zh": "{label} 是一条直线：无论词元是什么，它的输出都按固定的顺序读取源位置"},
    "ch01.tasks.wrong": {"en": "{hints}", "zh": "{hints}"},
    "ch01.gradient.not_a_dict": {
        "en": "answer with a dict {{'gru': ..., 'attention': ..., 'gru_ratio': ...}}, got {type}",
        "zh": "请用字典 {{'gru': ..., 'attention': ..., 'gru_ratio': ...}} 作答，得到的是 {type}"},
    "ch01.gradient.missing": {"en": "the prediction lacks {missing}", "zh": "预测缺少 {missing}"},
    "ch01.gradient.ellipsis": {
        "en": "replace each ... with your prediction: 'gru' and 'attention' among {shapes}, 'gru_ratio' among {bands}",
        "zh": "请把每个 ... 换成你的预测：'gru' 和 'attention' 取自 {shapes}，'gru_ratio' 取自 {bands}"},
    "ch01.gradient.not_allowed": {
        "en": "{key} must be one of {allowed}, got {value}",
        "zh": "{key} 必须是 {allowed} 之一，得到的是 {value}"},
    "ch01.gradient.unreadable": {
        "en": "could not read the measurement (pass the result of gradient_by_distance): {error}",
        "zh": "读不出测量结果（请传入 gradient_by_distance 的返回值）：{error}"},
    "ch01.gradient.measured": {
        "en": "measured: the GRU's gradient changes by a factor {rate_rnn:.2f} per token, attention's by "
              "{rate_att:.2f}, and the GRU's is {ratio:,.3g} times smaller at distance {far} than at distance 1",
        "zh": "实测：每远一个词元，GRU 的梯度乘以 {rate_rnn:.2f}，注意力的梯度乘以 {rate_att:.2f}；"
              "GRU 在距离 1 处的梯度是距离 {far} 处的 {ratio:,.3g} 倍"},
    "ch01.gradient.passed": {
        "en": "your prediction matches the measurement ({measured}). The GRU multiplies one Jacobian per step; "
              "attention reaches every input in one step.",
        "zh": "你的预测与测量结果一致（{measured}）。GRU 每走一步就要乘一个雅可比矩阵；注意力一步就能到达每个输入。"},
    "ch01.gradient.reason_gru": {
        "en": "the GRU's input j reaches the last state through one Jacobian per step in between, and at "
              "initialisation those shrink vectors: the gradient falls geometrically with distance",
        "zh": "GRU 的输入 j 要经过中间每一步的雅可比矩阵才能到达最后的状态，而初始化时这些矩阵会把向量缩短："
              "梯度随距离按几何级数下降"},
    "ch01.gradient.reason_attention": {
        "en": "in attention every input is one weighted sum away from the output, whatever its distance",
        "zh": "在注意力中，无论距离多远，每个输入与输出之间都只隔一次加权求和"},
    "ch01.gradient.reason_gru_ratio": {
        "en": "a factor below 1 per token, repeated for every token of distance, compounds",
        "zh": "每个词元乘一个小于 1 的因子，距离有多少个词元就乘多少次，效果层层累积"},
    "ch01.gradient.wrong": {
        "en": "your prediction differs from the run on {wrong} ({measured}). {reasons}. Keep your prediction as it "
              "was and note what surprised you: that is the point of predicting first.",
        "zh": "你的预测在 {wrong} 上与运行结果不符（{measured}）。{reasons}。请保留原来的预测，"
              "并记下让你意外的地方：先预测的意义正在于此。"},
    "ch01.control.not_a_dict": {
        "en": "answer with a dict with the keys {keys}, got {type}",
        "zh": "请用含有键 {keys} 的字典作答，得到的是 {type}"},
    "ch01.control.missing": {"en": "the design lacks {missing}", "zh": "设计中缺少 {missing}"},
    "ch01.control.ellipsis": {
        "en": "replace each ... with a value of your design",
        "zh": "请把每个 ... 换成你设计的值"},
    "ch01.control.not_positive": {
        "en": "{key} must be a positive int, got {value}",
        "zh": "{key} 必须是正的 int，得到的是 {value}"},
    "ch01.control.not_lists": {
        "en": "'seeds' and 'lengths' must be lists (or ranges) of ints",
        "zh": "'seeds' 和 'lengths' 必须是由 int 组成的列表（或 range）"},
    "ch01.control.few_seeds": {
        "en": "{n} distinct seed(s): a single run can be lucky; train each model with at least 3 seeds and show "
              "the spread",
        "zh": "只有 {n} 个不同的种子：一次运行可能只是运气好；每个模型至少用 3 个种子训练，并给出结果的波动范围"},
    "ch01.control.few_lengths": {
        "en": "use at least 3 distinct positive source lengths: the claim is about how accuracy changes with "
              "length, which one length cannot show",
        "zh": "至少要用 3 个不同的正的源序列长度：要检验的是准确率怎样随长度变化，一个长度看不出来"},
    "ch01.control.counts": {
        "en": "the model with attention (H = {attention_hidden}) has {attention_params:,} parameters, the model "
              "without (H = {plain_hidden}) {plain_params:,}",
        "zh": "有注意力的模型（H = {attention_hidden}）有 {attention_params:,} 个参数，"
              "没有注意力的模型（H = {plain_hidden}）有 {plain_params:,} 个"},
    "ch01.control.same_hidden": {
        "en": "same hidden size: {counts}. That is the chapter's comparison, not the control; make the model "
              "without attention big enough to have at least as many parameters",
        "zh": "隐藏层大小相同：{counts}。这是正文里的那组比较，不是对照实验；应把没有注意力的模型加大，"
              "使它的参数至少一样多"},
    "ch01.control.fewer": {
        "en": "{counts}: the model without attention still has fewer parameters, so a win for attention could "
              "still be the parameters; make plain_hidden larger",
        "zh": "{counts}：没有注意力的模型参数仍然更少，注意力胜出仍可能只是参数多的功劳；请把 plain_hidden 调大"},
    "ch01.control.too_many": {
        "en": "{counts}: more than 1.5 times as many. That also answers a question, but not this one; pick the "
              "smallest plain_hidden with at least as many parameters",
        "zh": "{counts}：超过了 1.5 倍。这样的实验也能回答一个问题，但不是这一个；"
              "请选参数至少一样多的最小的 plain_hidden"},
    "ch01.control.passed": {
        "en": "a fair control: {counts}; {n_seeds} seeds each, the same {steps} steps and lengths {lengths} for "
              "both. If attention still wins at the longest length, the parameters do not explain it.",
        "zh": "这是一个公平的对照：{counts}；各用 {n_seeds} 个种子，两者的训练步数（{steps}）和长度 {lengths} 都相同。"
              "如果注意力在最长的长度上仍然胜出，就不能用参数多来解释。"},
}
"""This chapter's messages in the checkers' catalogue, ``{key: {language: template}}``."""
register(MESSAGES)

_SEPARATOR = {"en": "; ", "zh": "；"}
"""How the clauses of a message made of several hints are joined, per language."""


def _joined(parts: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, str]:
    """Several messages ``(key, fields)`` joined into one phrase, in every language."""
    return {language: _SEPARATOR[language].join(text(key, language, **fields) for key, fields in parts)
            for language in LANGUAGES}


# --------------------------------------------------------------------------------------------
# Exercise 1: the additive (Bahdanau) score
# --------------------------------------------------------------------------------------------


def _additive_inputs(seed: int = 0) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """A decoder state per sequence, encoder states and weights, with all sizes different."""
    gen = torch.Generator().manual_seed(seed)
    batch, length, e_q, e_k, hidden = 2, 5, 3, 4, 6
    query = torch.randn(batch, e_q, generator=gen, dtype=torch.float64)  # (B, E_q)
    keys = torch.randn(batch, length, e_k, generator=gen, dtype=torch.float64)  # (B, S, E_k)
    w_q = torch.randn(hidden, e_q, generator=gen, dtype=torch.float64)  # (A, E_q)
    w_k = torch.randn(hidden, e_k, generator=gen, dtype=torch.float64)  # (A, E_k)
    v = torch.randn(hidden, generator=gen, dtype=torch.float64)  # (A,)
    return query, keys, w_q, w_k, v


def check_additive_scores(fn: Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor], *,
                          language: str | None = None) -> CheckResult:
    """Check ``fn(query, keys, w_q, w_k, v)``: the additive scores ``v^T tanh(W_q s + W_k h_j)``.

    Args:
        fn: The reader's function. ``query`` is one decoder state per sequence ``(B, E_q)``,
            ``keys`` the encoder states ``(B, S, E_k)``, ``w_q`` ``(A, E_q)`` and ``w_k``
            ``(A, E_k)`` are laid out like ``nn.Linear`` weights, ``v`` is ``(A,)``; it must
            return the scores ``(B, S)`` (before any softmax).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`; compared with
        :func:`helpers.scores.additive_scores`.
    """
    query, keys, w_q, w_k, v = _additive_inputs()
    batch, length, hidden = keys.shape[0], keys.shape[1], v.shape[0]
    reference = additive_scores(query[:, None, :], keys, w_q, w_k, v)[:, 0, :]  # (B, 1, S) -> (B, S)
    # the exercise is to write the score: the package's own versions are switched off while it runs
    with package_disabled(_scores.additive_scores, AdditiveAttention.forward, namespaces=reader_globals(fn)):
        result, failure = call_reader_function(fn, query, keys, w_q, w_k, v,
                                               shape_hint=phrase("ch01.additive.shape_hint"), language=language)
    if failure is not None:
        return failure
    scores, failure = as_tensor(result, phrase("ch01.what.scores"), language)
    if failure is not None:
        return failure
    if scores.shape != (batch, length):
        if scores.shape == (batch, length, hidden):
            return CheckResult.of(False, "ch01.additive.stopped_at_tanh", language, shape=tuple(scores.shape))
        if scores.numel() == batch * length:
            return CheckResult.of(False, "ch01.additive.reshape", language, shape=tuple(scores.shape),
                                  expected=(batch, length))
        return CheckResult.of(False, "ch01.additive.shape", language, expected=(batch, length),
                              got=tuple(scores.shape))
    if not torch.isfinite(scores).all():
        return CheckResult.of(False, "ch01.additive.not_finite", language)
    if allclose(scores, reference):
        return CheckResult.of(True, "ch01.additive.passed", language)
    if allclose(scores, torch.softmax(reference, dim=-1)):
        return CheckResult.of(False, "ch01.additive.softmax", language)
    if allclose(scores, -reference):
        return CheckResult.of(False, "ch01.additive.sign", language)
    q_hidden = query @ w_q.T  # (B, A)
    k_hidden = keys @ w_k.T  # (B, S, A)
    if allclose(scores, (q_hidden[:, None, :] + k_hidden) @ v):
        return CheckResult.of(False, "ch01.additive.no_tanh", language)
    if allclose(scores, (torch.tanh(q_hidden)[:, None, :] + torch.tanh(k_hidden)) @ v):
        return CheckResult.of(False, "ch01.additive.separate_tanh", language)
    if allclose(scores, torch.tanh(k_hidden) @ v):
        return CheckResult.of(False, "ch01.additive.no_query", language)
    error = float((scores - reference).abs().max())
    return CheckResult.of(False, "ch01.additive.differs", language, error=error)


# --------------------------------------------------------------------------------------------
# Exercise 2: masked softmax over padded encoder states
# --------------------------------------------------------------------------------------------


def _padded_inputs(seed: int = 1) -> tuple[Tensor, Tensor]:
    gen = torch.Generator().manual_seed(seed)
    scores = torch.randn(4, 6, generator=gen, dtype=torch.float64) * 2  # (B, S)
    lengths = torch.tensor([6, 3, 1, 4])  # (B,): sequence b has lengths[b] real tokens, then padding
    return scores, lengths


def check_masked_softmax(fn: Callable[[Tensor, Tensor], Tensor], *, language: str | None = None) -> CheckResult:
    """Check ``fn(scores, lengths)``: attention weights that ignore the padded positions.

    Args:
        fn: The reader's function. ``scores`` are ``(B, S)``; sequence ``b`` has ``lengths[b]``
            real tokens (positions ``0 .. lengths[b] - 1``) followed by padding. It must return
            weights ``(B, S)``: a softmax over the real positions, exactly 0 on the padding; a
            sequence of length 0 gets all-zero weights (not NaN).
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`; compared with
        :func:`helpers.attention.masked_softmax`.
    """
    scores, lengths = _padded_inputs()
    positions = torch.arange(scores.shape[1])
    real = positions[None, :] < lengths[:, None]  # (B, S): True = a real token (may attend)
    reference = masked_softmax(scores, real).double()
    empty_lengths = torch.tensor([2, 0])
    empty_scores = scores[:2].clone()
    empty_real = positions[None, :] < empty_lengths[:, None]
    empty_reference = masked_softmax(empty_scores, empty_real).double()
    # the exercise is to write the masked softmax: the package's own one is switched off while it runs
    with package_disabled(_attention.masked_softmax, namespaces=reader_globals(fn)):
        result, failure = call_reader_function(fn, scores.clone(), lengths.clone(), language=language)
        empty_result, empty_failure = call_reader_function(fn, empty_scores.clone(), empty_lengths.clone(),
                                                           language=language)
    if failure is not None:
        return failure
    weights, failure = as_tensor(result, phrase("ch01.what.weights"), language)
    if failure is not None:
        return failure
    if weights.shape != scores.shape:
        return CheckResult.of(False, "ch01.masked.shape", language, expected=tuple(scores.shape),
                              got=tuple(weights.shape))
    weights = weights.double()
    if torch.isnan(weights).any():
        return CheckResult.of(False, "ch01.masked.nan", language)
    if allclose(weights, torch.softmax(scores, dim=-1)):
        return CheckResult.of(False, "ch01.masked.unmasked", language)
    if allclose(weights, masked_softmax(scores, ~real).double()):
        return CheckResult.of(False, "ch01.masked.inverted", language)
    if allclose(weights, torch.softmax(scores, dim=-1) * real):
        return CheckResult.of(False, "ch01.masked.after_softmax", language)
    if allclose(weights, torch.softmax(scores, dim=0)) or allclose(
        weights, masked_softmax(scores.T, real.T).double().T
    ):
        return CheckResult.of(False, "ch01.masked.batch_axis", language)
    one_more = positions[None, :] <= lengths[:, None]
    if allclose(weights, masked_softmax(scores, one_more).double()):
        return CheckResult.of(False, "ch01.masked.off_by_one", language)
    if not allclose(weights, reference):
        padded_weight = float(weights[~real].abs().sum())
        if padded_weight > 1e-6:
            return CheckResult.of(False, "ch01.masked.padding_weight", language, weight=padded_weight)
        return CheckResult.of(False, "ch01.masked.wrong_softmax", language)

    # Second test: an empty sequence (length 0) must give zeros, not 0/0 = NaN.
    if empty_failure is not None:
        failure_phrase = {other: empty_failure.in_language(other).message for other in LANGUAGES}
        return CheckResult.of(False, "ch01.masked.empty_failed", language, failure=failure_phrase)
    empty, failure = as_tensor(empty_result, phrase("ch01.what.weights"), language)
    if failure is not None:
        return failure
    if empty.shape != empty_scores.shape or not torch.isfinite(empty.double()).all():
        return CheckResult.of(False, "ch01.masked.empty_nan", language)
    if not allclose(empty.double(), empty_reference):
        uniform = allclose(empty[1].double(), torch.full_like(empty[1].double(), 1 / empty.shape[-1]))
        return CheckResult.of(False, "ch01.masked.empty_uniform" if uniform else "ch01.masked.empty_not_zero",
                              language, total=float(empty[1].sum()))
    return CheckResult.of(True, "ch01.masked.passed", language)


# --------------------------------------------------------------------------------------------
# Exercise 3: where the model without attention breaks
# --------------------------------------------------------------------------------------------


def _first_below(lengths: Sequence[int], accuracies: Sequence[float], threshold: float) -> int | None:
    return next((n for n, acc in zip(lengths, accuracies) if acc < threshold), None)


def check_breaking_length(answer: Any, result: Any, hidden_dim: int, *, threshold: float = 0.5,
                          language: str | None = None) -> CheckResult:
    """Check the length at which the model without attention breaks, read off a bottleneck sweep.

    The breaking length is the first evaluation length at which the *token* accuracy of the
    model *without* attention of hidden size ``hidden_dim`` falls below ``threshold``.

    Args:
        answer: The reader's length (an int), or ``None`` if it never breaks in the range.
        result: The :class:`~helpers.experiments.bottleneck.BottleneckResult` of the sweep.
        hidden_dim: The hidden size asked about.
        threshold: The accuracy that counts as broken.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`.
    """
    try:
        lengths = result.lengths
        plain = result.accuracy(False, hidden_dim)
    except Exception as error:  # a wrong `result` or hidden size: explain, never raise
        return CheckResult.of(False, "ch01.breaking.unreadable", language, hidden_dim=hidden_dim, error=str(error))
    expected = _first_below(lengths, plain, threshold)
    if answer is ...:
        return CheckResult.of(False, "ch01.breaking.ellipsis", language)
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        if isinstance(answer, float) and answer.is_integer():
            answer = int(answer)
        else:
            return CheckResult.of(False, "ch01.breaking.not_a_length", language, lengths=str(lengths),
                                  answer=repr(answer))
    if answer == expected:
        values = ", ".join(f"{n}: {a:.2f}" for n, a in zip(lengths, plain))
        if expected is None:
            return CheckResult.of(True, "ch01.breaking.passed_never", language, hidden=hidden_dim, values=values)
        return CheckResult.of(True, "ch01.breaking.passed", language, hidden=hidden_dim, threshold=threshold,
                              expected=expected, values=values)
    attention_break = _first_below(lengths, result.accuracy(True, hidden_dim), threshold)
    sequence_break = _first_below(lengths, result.accuracy(False, hidden_dim, "sequence_accuracy"), threshold)
    if answer not in lengths and answer is not None:
        return CheckResult.of(False, "ch01.breaking.not_evaluated", language, answer=str(answer),
                              lengths=str(lengths))
    if answer == attention_break and answer != expected:
        return CheckResult.of(False, "ch01.breaking.with_attention", language)
    if answer == sequence_break and answer != expected:
        return CheckResult.of(False, "ch01.breaking.sequence", language, threshold=threshold)
    if expected is not None and answer is not None and lengths.index(answer) == lengths.index(expected) - 1:
        return CheckResult.of(False, "ch01.breaking.last_working", language, answer=answer,
                              accuracy=float(plain[lengths.index(answer)]))
    for other in result.hidden_sizes:
        if other != hidden_dim and answer == _first_below(lengths, result.accuracy(False, other), threshold):
            return CheckResult.of(False, "ch01.breaking.other_hidden", language, other=other, hidden=hidden_dim)
    return CheckResult.of(False, "ch01.breaking.not_quite", language, hidden=hidden_dim, threshold=threshold)


# --------------------------------------------------------------------------------------------
# Exercise 4: name the task from its alignment
# --------------------------------------------------------------------------------------------

MYSTERY_LABELS: tuple[str, ...] = ("A", "B", "C")
"""The names of the three mystery alignments."""
_MYSTERY_TASKS: dict[str, str] = {"A": "sort", "B": "copy", "C": "reverse"}


def mystery_alignments(
    *, seq_len: int = 8, hidden_dim: int = 32, steps: int = 300, seed: int = 0
) -> dict[str, tuple[Tensor, Tensor]]:
    """Train three small attention models on three tasks; return their alignments, unnamed.

    The tasks are ``copy``, ``reverse`` and ``sort`` (:mod:`helpers.tasks`); which one is
    behind which label is what :func:`check_task_names` checks. Each model is a
    :class:`~helpers.rnn.Seq2SeqGRU` with attention trained for ``steps`` steps on sequences of
    length ``seq_len`` (about 3 s each on a laptop CPU). All three are then shown the same
    source, ``seq_len`` *distinct* symbols (so that the sorted order is unambiguous).

    Args:
        seq_len: Length of the sequences (at most 10, the number of content symbols).
        hidden_dim: Hidden size of the models.
        steps: Training steps per model.
        seed: Seed of the models, the training data and the shown example.

    Returns:
        A dict from each label to a pair ``(src, alignment)``, one source sequence ``(S,)`` and
        the model's alignment ``(T, S)`` on it (teacher-forced).
    """
    # imported here, not at the top: keep the import of this module light
    from helpers.experiments.seq2seq_training import train_seq2seq  # noqa: PLC0415
    from helpers.rnn import Seq2SeqGRU  # noqa: PLC0415
    from helpers.tasks import FIRST_CONTENT_TOKEN  # noqa: PLC0415
    from helpers.train import num_threads, set_seed  # noqa: PLC0415

    vocab_size = 12
    n_symbols = vocab_size - FIRST_CONTENT_TOKEN
    if not isinstance(seq_len, int) or not 2 <= seq_len <= n_symbols:
        raise ValueError(f"seq_len must be an int in [2, {n_symbols}], got {seq_len!r}")
    gen = torch.Generator().manual_seed(seed + 777)
    src = (torch.randperm(n_symbols, generator=gen)[:seq_len] + FIRST_CONTENT_TOKEN)[None]  # (1, S), distinct
    targets = {"copy": src, "reverse": src.flip(1), "sort": src.sort(dim=1).values}
    out: dict[str, tuple[Tensor, Tensor]] = {}
    with num_threads(1):
        for label in MYSTERY_LABELS:
            task = _MYSTERY_TASKS[label]
            set_seed(seed)
            model = Seq2SeqGRU(vocab_size, 16, hidden_dim, attention=True)
            train_seq2seq(model, task=task, lengths=[seq_len], steps=steps, batch_size=32, lr=1e-2, seed=seed)
            model.eval()
            with torch.no_grad():
                _, alignment = model(src, targets[task])  # (1, T, S)
            out[label] = (src[0], alignment[0])
    return out


def check_task_names(answer: Any, *, language: str | None = None) -> CheckResult:
    """Check the reader's names for the mystery alignments of :func:`mystery_alignments`.

    Args:
        answer: ``{"A": task, "B": task, "C": task}`` with tasks among ``"copy"``,
            ``"reverse"``, ``"sort"``.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult`.
    """
    tasks = sorted(set(_MYSTERY_TASKS.values()))
    if not isinstance(answer, Mapping):
        return CheckResult.of(False, "ch01.tasks.not_a_dict", language, tasks=str(tasks), type=type(answer).__name__)
    given = {str(k).strip().upper(): (v.strip().lower() if isinstance(v, str) else v) for k, v in answer.items()}
    missing = [label for label in MYSTERY_LABELS if label not in given]
    if not missing and any(given[label] is ... for label in MYSTERY_LABELS):
        return CheckResult.of(False, "ch01.tasks.ellipsis", language, tasks=str(tasks))
    if missing:
        return CheckResult.of(False, "ch01.tasks.missing", language, missing=str(missing))
    unknown = {label: task for label, task in given.items() if task not in tasks}
    if unknown:
        return CheckResult.of(False, "ch01.tasks.unknown", language, unknown=str(unknown), tasks=str(tasks))
    wrong = [label for label in MYSTERY_LABELS if given[label] != _MYSTERY_TASKS[label]]
    if not wrong:
        return CheckResult.of(True, "ch01.tasks.passed", language)
    hints = []
    for label in wrong:
        truth, guess = _MYSTERY_TASKS[label], given[label]
        if truth == "sort":
            hints.append(("ch01.tasks.hint_sort", {"label": label}))
        elif {truth, guess} == {"copy", "reverse"}:
            hints.append((f"ch01.tasks.hint_{truth}", {"label": label}))
        else:
            hints.append(("ch01.tasks.hint_line", {"label": label}))
    return CheckResult.of(False, "ch01.tasks.wrong", language, hints=_joined(hints))


# --------------------------------------------------------------------------------------------
# Exercise 5: predict, then measure, how the gradient falls with distance
# --------------------------------------------------------------------------------------------

GRADIENT_SHAPES: tuple[str, ...] = ("falls", "flat", "rises")
"""The answers for how a gradient changes with distance."""
GRU_RATIO_BANDS: tuple[str, ...] = ("<10", "10-1000", ">1000")
"""The answers for how many times smaller the GRU's gradient is at the farthest input than at distance 1."""


def _shape_of(rate: float) -> str:
    return "falls" if rate < 0.9 else "rises" if rate > 1.1 else "flat"


def _ratio_band(ratio: float) -> str:
    return "<10" if ratio < 10 else "10-1000" if ratio <= 1000 else ">1000"


def check_gradient_prediction(prediction: Any, grads: Any, *, language: str | None = None) -> CheckResult:
    """Check a prediction, written before the run, against the measured gradient by distance.

    The prediction says how ``||d y_last / d x_j||`` changes with the distance of ``x_j`` from
    the last position, for a freshly initialised GRU and for one self-attention layer, and by how
    much the GRU's gradient shrinks between distance 1 and the farthest input. The shapes are
    read off the measurement by :func:`~helpers.experiments.gradient_paths.geometric_decay_rate`
    (below 0.9 per token: falls; above 1.1: rises; else flat; attention without distance 0,
    which is also the query).

    Args:
        prediction: ``{"gru": shape, "attention": shape, "gru_ratio": band}`` with shapes among
            :data:`GRADIENT_SHAPES` and the band among :data:`GRU_RATIO_BANDS`.
        grads: The :class:`~helpers.experiments.gradient_paths.GradientByDistance` measured.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult` that says which part of the prediction the
        measurement contradicts, with the measured numbers.
    """
    from helpers.experiments.gradient_paths import geometric_decay_rate  # noqa: PLC0415

    if not isinstance(prediction, Mapping):
        return CheckResult.of(False, "ch01.gradient.not_a_dict", language, type=type(prediction).__name__)
    keys = ("gru", "attention", "gru_ratio")
    missing = [k for k in keys if k not in prediction]
    if missing:
        return CheckResult.of(False, "ch01.gradient.missing", language, missing=str(missing))
    if any(prediction[k] is ... for k in keys):
        return CheckResult.of(False, "ch01.gradient.ellipsis", language, shapes=str(list(GRADIENT_SHAPES)),
                              bands=str(list(GRU_RATIO_BANDS)))
    given = {k: str(prediction[k]).strip().lower().replace(" ", "") for k in keys}
    for k, allowed in (("gru", GRADIENT_SHAPES), ("attention", GRADIENT_SHAPES), ("gru_ratio", GRU_RATIO_BANDS)):
        if given[k] not in allowed:
            return CheckResult.of(False, "ch01.gradient.not_allowed", language, key=repr(k), allowed=str(list(allowed)),
                                  value=repr(prediction[k]))
    try:
        distance = [int(d) for d in grads.distance]
        rnn, att = grads.rnn, grads.attention
        rate_rnn = geometric_decay_rate(rnn, grads.distance)
        rate_att = geometric_decay_rate(att[1:], grads.distance[1:])
        ratio = float(rnn[distance.index(1)] / rnn[-1])
    except Exception as error:  # a wrong `grads`: explain, never raise
        return CheckResult.of(False, "ch01.gradient.unreadable", language, error=str(error))
    truth = {"gru": _shape_of(rate_rnn), "attention": _shape_of(rate_att), "gru_ratio": _ratio_band(ratio)}
    measured = phrase("ch01.gradient.measured", rate_rnn=float(rate_rnn), rate_att=float(rate_att), ratio=ratio,
                       far=distance[-1])
    wrong = [k for k in keys if given[k] != truth[k]]
    if not wrong:
        return CheckResult.of(True, "ch01.gradient.passed", language, measured=measured)
    reasons = _joined([(f"ch01.gradient.reason_{k}", {}) for k in wrong])
    listed = {"en": ", ".join(wrong), "zh": "、".join(wrong)}
    return CheckResult.of(False, "ch01.gradient.wrong", language, wrong=listed, measured=measured, reasons=reasons)


# --------------------------------------------------------------------------------------------
# Exercise 6: design a control experiment
# --------------------------------------------------------------------------------------------


def parameter_count(hidden_dim: int, *, attention: bool, vocab_size: int = 12, embed_dim: int = 16) -> int:
    """Number of parameters of the chapter's :class:`~helpers.rnn.Seq2SeqGRU` (the lab's sizes by default)."""
    from helpers.rnn import Seq2SeqGRU  # noqa: PLC0415

    return sum(p.numel() for p in Seq2SeqGRU(vocab_size, embed_dim, hidden_dim, attention=attention).parameters())


def check_control_design(design: Any, *, language: str | None = None) -> CheckResult:
    """Check the design of a control experiment: is attention's advantage only its extra parameters?

    The model with attention has more parameters than the model without at the same hidden
    size (the scoring network, and a decoder that reads a context at every step). A fair control
    gives the model *without* attention at least as many parameters, and changes nothing else.
    The design must say:

    - ``attention_hidden``: the hidden size of the model with attention;
    - ``plain_hidden``: the hidden size of the model without, chosen so that it has at least as
      many parameters, and at most 1.5 times as many (:func:`parameter_count` counts them);
    - ``seeds``: at least 3 distinct seeds, the same for both models;
    - ``lengths``: at least 3 distinct source lengths, to train and test on (a trend, not a point);
    - ``steps``: the same number of training steps for both (one positive int).

    Args:
        design: The reader's dict.
        language: The verdict's language (``"en"``, ``"zh"``); ``None``: the default.

    Returns:
        A :class:`~helpers.exercises.CheckResult` that names what makes the design unfair or weak.
    """
    keys = ("attention_hidden", "plain_hidden", "seeds", "lengths", "steps")
    if not isinstance(design, Mapping):
        return CheckResult.of(False, "ch01.control.not_a_dict", language, keys=str(list(keys)),
                              type=type(design).__name__)
    missing = [k for k in keys if k not in design]
    if missing:
        return CheckResult.of(False, "ch01.control.missing", language, missing=str(missing))
    if any(design[k] is ... for k in keys):
        return CheckResult.of(False, "ch01.control.ellipsis", language)
    for k in ("attention_hidden", "plain_hidden", "steps"):
        value = design[k]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return CheckResult.of(False, "ch01.control.not_positive", language, key=repr(k), value=repr(value))
    try:
        seeds = [int(s) for s in design["seeds"]]
        lengths = [int(n) for n in design["lengths"]]
    except Exception:  # not a sequence of ints
        return CheckResult.of(False, "ch01.control.not_lists", language)
    if len(set(seeds)) < 3:
        return CheckResult.of(False, "ch01.control.few_seeds", language, n=len(set(seeds)))
    if len(set(lengths)) < 3 or min(lengths) < 1:
        return CheckResult.of(False, "ch01.control.few_lengths", language)
    attention_params = parameter_count(design["attention_hidden"], attention=True)
    plain_params = parameter_count(design["plain_hidden"], attention=False)
    counts = phrase("ch01.control.counts", attention_hidden=design["attention_hidden"],
                     attention_params=attention_params, plain_hidden=design["plain_hidden"], plain_params=plain_params)
    if design["plain_hidden"] == design["attention_hidden"]:
        return CheckResult.of(False, "ch01.control.same_hidden", language, counts=counts)
    if plain_params < attention_params:
        return CheckResult.of(False, "ch01.control.fewer", language, counts=counts)
    if plain_params > 1.5 * attention_params:
        return CheckResult.of(False, "ch01.control.too_many", language, counts=counts)
    return CheckResult.of(True, "ch01.control.passed", language, counts=counts, n_seeds=len(set(seeds)),
                          steps=design["steps"], lengths=str(sorted(set(lengths))))
