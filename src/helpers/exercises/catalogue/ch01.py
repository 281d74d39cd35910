"""The messages of :mod:`helpers.exercises.ch01`'s checkers, in English and Chinese: its part of
the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

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
    "ch01.additive.constant": {
        "en": "your function returned the same scores for two different sets of inputs: it must compute them from "
              "its arguments (the checker draws new ones at every call)",
        "zh": "对两组不同的输入，你的函数返回了相同的分数：分数必须由参数算出来（检查器每次调用都会重新抽取输入）"},
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
    "ch01.masked.finite_fill": {
        "en": "the padded positions get weight {weight:.1e} in all: tiny, but not 0. A finite fill value such as -30 "
              "leaves exp(-30) > 0, and a real score below it (-1000, say) would get less weight than the padding; "
              "fill with -inf (or torch.finfo(dtype).min)",
        "zh": "填充位置一共分到了 {weight:.1e} 的权重：很小，但不是 0。-30 这样的有限填充值会留下 exp(-30) > 0，"
              "而比它更低的真实分数（比如 -1000）得到的权重反而比填充还少；应填 -inf（或 torch.finfo(dtype).min）"},
    "ch01.masked.overflow": {
        "en": "right for ordinary scores, but wrong (NaN, or what nan_to_num made of it) in the rows where a real "
              "score is {score:g} (exp({score:g}) overflows to inf, and inf / inf is NaN) or every real score is "
              "-{score:g} (exp underflows to 0, and 0 / 0 is NaN). Subtract each row's largest real score before exp, "
              "which changes no weight; torch.softmax does it for you",
        "zh": "普通的分数都对了，但在有真实分数为 {score:g} 的行（exp({score:g}) 溢出成 inf，inf / inf 是 NaN），"
              "或真实分数全是 -{score:g} 的行（exp 下溢为 0，0 / 0 是 NaN）里错了"
              "（是 NaN，或 nan_to_num 由它变成的值）。"
              "应在 exp 之前减去每行真实位置上最大的分数，这不会改变任何权重；torch.softmax 会替你这样做"},
    "ch01.masked.underflow": {
        "en": "right for ordinary scores, but wrong (NaN, or what nan_to_num made of it) in the rows where a padded "
              "position holds the largest score ({score:g}): the softmax gave it all the weight before the padding "
              "was removed, the real weights underflowed to 0, and 0 / 0 is NaN. Mask the scores before the softmax "
              "(and before taking a maximum)",
        "zh": "普通的分数都对了，但在填充位置持有最大分数（{score:g}）的那些行错了"
              "（是 NaN，或 nan_to_num 由它变成的值）：去掉填充之前，softmax 已把全部权重给了它，"
              "真实位置的权重下溢为 0，而 0 / 0 是 NaN。"
              "应在 softmax 之前（也在取最大值之前）给分数加掩码"},
    "ch01.masked.large_nan": {
        "en": "right for ordinary scores, but scores of +-{score:g} give NaN or inf: compute the softmax stably "
              "(subtract the row's largest real score, or use torch.softmax on the masked scores)",
        "zh": "普通的分数都对了，但 +-{score:g} 这样的分数得到了 NaN 或 inf：softmax 要算得数值稳定"
              "（减去该行最大的真实分数，或对加过掩码的分数用 torch.softmax）"},
    "ch01.masked.large_padding": {
        "en": "right for ordinary scores, but with scores of +-{score:g} the padded positions get weight {weight:.3g}: "
              "a finite fill value is not low enough for every score; fill with -inf",
        "zh": "普通的分数都对了，但分数为 +-{score:g} 时，填充位置分到了 {weight:.3g} 的权重："
              "有限的填充值不可能比所有分数都低；应填 -inf"},
    "ch01.masked.large_differs": {
        "en": "right for ordinary scores, but not for scores of +-{score:g}: the weights over the real positions are "
              "not their softmax there (a clamp, or a float16 step, loses them?)",
        "zh": "普通的分数都对了，但分数为 +-{score:g} 时不对：真实位置上的权重不是它们的 softmax"
              "（是截断了分数，还是某一步用了 float16？）"},
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
        "en": "softmax over the real tokens, exactly 0 on the padding, stable with scores of +-1000, and an empty "
              "sequence gets zeros instead of NaN: the same as helpers.attention.masked_softmax.",
        "zh": "softmax 只在真实词元上计算，填充位置恰好为 0，分数为 +-1000 时依然稳定，空序列得到的是全零而不是 NaN："
              "与 helpers.attention.masked_softmax 相同。"},
    "ch01.breaking.unreadable": {
        "en": "could not read the sweep for hidden_size={hidden_size}: {error}",
        "zh": "读不出 hidden_size={hidden_size} 的扫描结果：{error}"},
    "ch01.breaking.ellipsis": {
        "en": "replace the ... with the length you read off the sweep (an int, or None)",
        "zh": "请把 ... 换成你从扫描结果中读出的长度（一个 int，或者 None）"},
    "ch01.breaking.not_a_length": {
        "en": "answer with a length, an int from {lengths} (or None), got {answer}",
        "zh": "请用一个长度作答，即 {lengths} 中的一个 int（或者 None），得到的是 {answer}"},
    "ch01.breaking.passed": {
        "en": "the GRU without attention (H = {hidden}) first falls below {threshold:.0%} at length {expected}: "
              "{values}. {prediction}",
        "zh": "没有注意力的 GRU（H = {hidden}）在长度 {expected} 处首次降到 {threshold:.0%} 以下：{values}。"
              "{prediction}"},
    "ch01.breaking.passed_never": {
        "en": "the GRU without attention (H = {hidden}) never falls below: {values}. {prediction}",
        "zh": "没有注意力的 GRU（H = {hidden}）始终没有降到阈值以下：{values}。{prediction}"},
    "ch01.breaking.read": {
        "en": "that is the length read off the sweep",
        "zh": "这正是从扫描结果中读出的长度"},
    "ch01.breaking.no_prediction": {
        "en": "no prediction recorded: run the prediction cell before the sweep of section 2, "
              "predict({key!r}, n) with your guess (an int, or \"never\"); the checker compares it once your reading "
              "is right",
        "zh": "还没有记录预测：请运行第 2 节扫描之前的预测单元格，即 predict({key!r}, n)，填入你的猜测"
              "（一个 int，或者 \"never\"）；你的读数正确之后，检查器会拿它来比较"},
    "ch01.breaking.prediction_ellipsis": {
        "en": "your prediction is still ...: replace it with your guess in predict({key!r}, ...) before the sweep of "
              "section 2 (an int, or \"never\")",
        "zh": "你的预测还是 ...：请在第 2 节扫描之前的 predict({key!r}, ...) 中把它换成你的猜测"
              "（一个 int，或者 \"never\"）"},
    "ch01.breaking.prediction_not_a_length": {
        "en": "the prediction must be a length (a positive int) or \"never\", got {value}",
        "zh": "预测必须是一个长度（正的 int）或者 \"never\"，得到的是 {value}"},
    "ch01.breaking.prediction_right": {
        "en": "Your prediction ({predicted}) agrees with the sweep.",
        "zh": "你的预测（{predicted}）与扫描结果一致。"},
    "ch01.breaking.prediction_early": {
        "en": "Your prediction ({predicted}) was too early: the model held out longer than you expected; what did the "
              "bit count of the chapter leave out?",
        "zh": "你的预测（{predicted}）偏早了：模型撑得比你预想的更久；正文里的比特计数漏掉了什么？"},
    "ch01.breaking.prediction_late": {
        "en": "Your prediction ({predicted}) was too late: the model broke at {expected}, sooner than you expected; "
              "2H numbers hold far fewer symbols than their bits allow once gradient descent must learn to write them",
        "zh": "你的预测（{predicted}）偏晚了：模型在 {expected} 处就失效了，比你预想的更早；"
              "一旦要靠梯度下降学会把符号写进去，2H 个数能装下的符号远少于它们的比特数所允许的"},
    "ch01.breaking.prediction_never": {
        "en": "Your prediction (never) was wrong: the model broke at {expected}.",
        "zh": "你的预测（never，不会失效）错了：模型在 {expected} 处失效了。"},
    "ch01.breaking.prediction_broke_never": {
        "en": "Your prediction ({predicted}) was wrong: in the range of the sweep the model never broke.",
        "zh": "你的预测（{predicted}）错了：在扫描的范围内，模型始终没有失效。"},
    "ch01.breaking.late": {
        "en": "the reading is right, but your prediction ({key!r}) was recorded after this checker had shown the "
              "result: a prediction counts only before; keep the one you made, and compare it with the sweep",
        "zh": "读数是对的，但你的预测（{key!r}）是在检查器显示结果之后才记录的：预测只有在结果之前做才算数；"
              "请保留你原来的预测，拿它与扫描结果比较"},
    "ch01.breaking.no_models": {
        "en": "this result holds no trained model without attention of H = {hidden} for seed {seed}: the checker tests "
              "the sweep's models again, so pass the result of bn.bottleneck_sweep as it came",
        "zh": "这个结果里没有种子 {seed}、H = {hidden} 的训练过的无注意力模型：检查器会重新测试扫描中的模型，"
              "所以请原样传入 bn.bottleneck_sweep 的返回值"},
    "ch01.breaking.untrained": {
        "en": "the model without attention of H = {hidden}, seed {seed}, in this result was never trained (its weights "
              "are those it was initialised with): training did not produce this result",
        "zh": "这个结果里种子 {seed}、H = {hidden} 的无注意力模型从未训练过（权重还是初始化时的样子）："
              "这个结果不是训练得来的"},
    "ch01.breaking.not_reproduced": {
        "en": "the result records a token accuracy of {recorded:.2f} at length {length} for the model without "
              "attention (H = {hidden}, mean over the seeds), but its own models, tested again on fresh sequences of "
              "the task {task!r} (seed {seed}), get {again:.2f}: pass the sweep's result unchanged, and task= the task "
              "it trained on",
        "zh": "这个结果记录的无注意力模型（H = {hidden}，各种子的平均）在长度 {length} 处的词元准确率是 "
              "{recorded:.2f}，"
              "但用任务 {task!r} 的新序列（种子 {seed}）重新测试它自己的模型，得到的是 {again:.2f}："
              "请原样传入扫描的结果，并用 task= 写明它训练的任务"},
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
    "ch01.tasks.not_run": {
        "en": "run the cell that trains the three mystery models first (ch01.mystery_alignments()): which task hides "
              "behind A, B and C is drawn afresh each time, and the checker compares with this time's",
        "zh": "请先运行训练三个谜题模型的单元格（ch01.mystery_alignments()）：A、B、C 背后各是哪个任务，"
              "每次都重新抽取，检查器对照的是这一次的"},
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
    "ch01.gradient.takes_nothing": {
        "en": "call the checker with no argument: it runs the measurement itself, and reads your prediction from "
              "predict({key!r}, {{...}}), recorded before",
        "zh": "调用检查器时不要传参数：它自己运行测量，并读取你事先用 predict({key!r}, {{...}}) 记录的预测"},
    "ch01.gradient.not_recorded": {
        "en": "no prediction recorded: fill in the cell above and run it, predict({key!r}, {{...}}), before this "
              "checker runs the measurement",
        "zh": "还没有记录预测：请先填好上面的单元格并运行它，即 predict({key!r}, {{...}})，然后再让检查器运行测量"},
    "ch01.gradient.late": {
        "en": "your prediction was recorded after the result had been shown ({measured}): a prediction counts only "
              "before the run; keep the one you made first, and note what surprised you",
        "zh": "你的预测是在结果显示之后才记录的（{measured}）：预测只有在运行之前做才算数；"
              "请保留你最初的预测，并记下让你意外的地方"},
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
    "ch01.control.per_model": {
        "en": "{key} must be one value, used for both models: a control changes nothing but attention (and the "
              "size that matches the parameters), so both train on the same seeds, lengths and steps",
        "zh": "{key} 必须只有一个值，两个模型共用：对照实验除了注意力（以及为对齐参数量而调的大小）之外什么都不改，"
              "所以两个模型用相同的种子、长度和步数训练"},
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
    "ch01.control.too_short": {
        "en": "your longest length is {longest}: the model without attention of this size still works there, so the "
              "two models cannot differ; reach past the bottleneck, to at least {minimum} symbols",
        "zh": "你最长的长度是 {longest}：这个大小的无注意力模型在那里还能工作，两个模型就不可能有差别；"
              "长度要越过瓶颈，至少到 {minimum} 个符号"},
    "ch01.control.no_short": {
        "en": "your shortest length is {shortest}: include a length both models handle (at most {maximum}), so that "
              "a difference at the long end is a trend, not two models that never learned",
        "zh": "你最短的长度是 {shortest}：要包括一个两个模型都能处理的长度（至多 {maximum}），"
              "这样长端的差别才是一种趋势，而不是两个根本没学会的模型"},
    "ch01.control.few_steps": {
        "en": "{steps} training steps: too few for either model to learn the task, and a comparison of two untrained "
              "models shows nothing; train for at least {minimum} steps (the chapter's budget)",
        "zh": "{steps} 个训练步数：太少，两个模型都学不会这个任务，比较两个没训练好的模型什么也说明不了；"
              "至少训练 {minimum} 步（正文用的步数）"},
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

register(MESSAGES)
