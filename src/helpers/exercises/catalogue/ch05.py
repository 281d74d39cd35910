"""The messages of :mod:`helpers.exercises.ch05`'s checkers, in English and Chinese: its part of
the checkers' catalogue (:mod:`helpers.exercises.messages`), ``{key: {language: template}}``."""

from __future__ import annotations

from helpers.exercises.messages import register

MESSAGES = {
    "ch05.what.window_output": {"en": "attention output, shape (B, H, L, E)",
                                "zh": "注意力的输出（形状 (B, H, L, E)）"},
    "ch05.what.linear_output": {"en": "output, shape (B, H, L, Ev)", "zh": "输出（形状 (B, H, L, Ev)）"},
    "ch05.what.feature_map": {"en": "rescaled feature map, shape (B, C, H, W)",
                              "zh": "重新加权后的特征图（形状 (B, C, H, W)）"},
    "ch05.what.padded_output": {"en": "attention output, shape (B, H, S, E)",
                                "zh": "注意力的输出（形状 (B, H, S, E)）"},
    "ch05.what.causal_output": {"en": "attention output, shape (B, H, L, Ev)",
                                "zh": "注意力的输出（形状 (B, H, L, Ev)）"},
    "ch05.window.shape": {
        "en": "output shape {got}, expected {expected} (B, H, L, E)",
        "zh": "输出的形状是 {got}，应为 {expected}，即 (B, H, L, E)"},
    "ch05.window.off_by_one": {
        "en": "off by one: your window keeps |i - j| <= window; the convention (the package's and this exercise's) "
              "is |i - j| < window, so window=1 sees only itself",
        "zh": "差了一位：你的窗口保留的是 |i - j| <= window；本包和这道练习的约定是 |i - j| < window，"
              "所以 window=1 时每个位置只看得见自己"},
    "ch05.window.causal": {
        "en": "your window only looks back (j <= i): that is the causal window; here query i sees keys on both sides",
        "zh": "你的窗口只往回看（j <= i）：那是因果窗口；这里第 i 个查询要看见两侧的键"},
    "ch05.window.unscaled": {
        "en": "the window is right but the scores are not divided by sqrt(d)",
        "zh": "窗口对了，但分数没有除以 sqrt(d)"},
    "ch05.window.after_softmax": {
        "en": "you zeroed the weights outside the window *after* the softmax, so the kept weights no longer sum to "
              "1; mask the scores with -inf *before* the softmax",
        "zh": "你在 softmax *之后*才把窗口外的权重置零，留下的权重加起来就不再是 1；"
              "应在 softmax *之前*用 -inf 遮住分数"},
    "ch05.window.full": {
        "en": "this is full attention: the window mask was not applied",
        "zh": "这是完整的注意力：窗口掩码没有起作用"},
    "ch05.window.finite_fill": {
        "en": "the keys outside the window still get weight: their scores were set to a finite number (such as -10 "
              "or -30) instead of -inf, and where the real scores are lower (the checker tries scores of about -100) "
              "those keys take the weight. Fill them with float('-inf') (or torch.finfo(scores.dtype).min), which no "
              "score is below",
        "zh": "窗口外的键仍然分到了权重：它们的分数被设成了一个有限的数（比如 -10 或 -30），而不是 -inf；"
              "真实的分数更低时（检查器试了约为 -100 的分数），这些键就拿走了权重。"
              "应填成 float('-inf')（或 torch.finfo(scores.dtype).min），没有哪个分数比它更低"},
    "ch05.window.differs": {
        "en": "the output differs from softmax attention restricted to |i - j| < window",
        "zh": "输出与限制在 |i - j| < window 之内的 softmax 注意力不同"},
    "ch05.window.passed": {
        "en": "your sliding-window attention matches dense attention with the window mask.",
        "zh": "你的滑动窗口注意力与加了窗口掩码的稠密注意力结果一致。"},
    "ch05.linear.shape": {
        "en": "output shape {got}, expected {expected} (B, H, L, Ev)",
        "zh": "输出的形状是 {got}，应为 {expected}，即 (B, H, L, Ev)"},
    "ch05.linear.no_normaliser": {
        "en": "the normaliser is missing: divide by phi(q_i) . sum_j phi(k_j) so that each query's weights sum to 1",
        "zh": "少了归一化项：应除以 phi(q_i) . sum_j phi(k_j)，让每个查询的权重加起来等于 1"},
    "ch05.linear.elu": {
        "en": "phi is elu without the +1: elu can be negative, and weights must be positive",
        "zh": "phi 用的是没有 +1 的 elu：elu 可能为负，而权重必须为正"},
    "ch05.linear.softmax": {
        "en": "this is softmax attention; linear attention replaces exp(q.k) by phi(q).phi(k)",
        "zh": "这是 softmax 注意力；线性注意力把 exp(q.k) 换成了 phi(q).phi(k)"},
    "ch05.linear.differs": {
        "en": "the output differs from the kernel form (phi(Q) phi(K)^T / row sums) V",
        "zh": "输出与核形式 (phi(Q) phi(K)^T / row sums) V 的结果不同"},
    "ch05.linear.quadratic": {
        "en": "right numbers, but a tensor of shape {shape} was created: that is the L x S matrix, computed in the "
              "(phi(Q) phi(K)^T) V order; compute phi(K)^T V (E x Ev) first, then multiply by phi(Q)",
        "zh": "数值对了，但中间生成了一个形状为 {shape} 的张量：这就是 L x S 矩阵，是按 (phi(Q) phi(K)^T) V 的顺序"
              "算出来的；应先算 phi(K)^T V（E x Ev），再乘以 phi(Q)"},
    "ch05.linear.grows_quadratically": {
        "en": "right numbers and no L x S tensor, but the work grows like n^2: your operations produced {small:,} "
              "elements at n = {n} and {large:,} at n = {n4}, {growth:.1f} times as many for 4 times the length. A "
              "loop over the queries that computes every phi(q_i) . phi(k_j) "
              "is still the L x S matrix, one row at a time; "
              "compute phi(K)^T V (E x Ev) once, then multiply by phi(Q)",
        "zh": "数值对了，也没有 L x S 的张量，但计算量按 n^2 增长：n = {n} 时你的运算产生了 {small:,} 个元素，"
              "n = {n4} 时产生了 {large:,} 个，长度变为 4 倍，元素变为 {growth:.1f} 倍。逐个查询循环、"
              "算出每个 phi(q_i) . phi(k_j)，仍然是在一行一行地算 L x S 矩阵；应先算一次 phi(K)^T V（E x Ev），"
              "再乘以 phi(Q)"},
    "ch05.linear.passed": {
        "en": "same output as the kernel form, the largest tensor was {shape} (no L x S matrix), and the work grew "
              "{growth:.1f} times from n = {n} to n = {n4}: linear in the length.",
        "zh": "输出与核形式相同，最大的张量只有 {shape}（没有生成 L x S 矩阵），而且从 n = {n} 到 n = {n4}，"
              "计算量增长了 {growth:.1f} 倍：与长度成线性关系。"},
    "ch05.se.passed": {
        "en": "squeeze, excite and scale match the package's SE block.",
        "zh": "压缩、激励和缩放三步都与本包的 SE 模块一致。"},
    "ch05.se.weights_only": {
        "en": "you returned the channel weights; the block returns x scaled by them (x * weights[:, :, None, None])",
        "zh": "你返回的是通道权重；这个模块要返回的是用它们缩放后的 x（x * weights[:, :, None, None]）"},
    "ch05.se.shape": {
        "en": "output shape {got}, expected {expected}: the block keeps the feature map's shape (did you squeeze "
              "over the channels instead of H and W?)",
        "zh": "输出的形状是 {got}，应为 {expected}：这个模块不改变特征图的形状"
              "（你是不是沿通道、而不是沿 H 和 W 做了压缩？）"},
    "ch05.se.max": {
        "en": "you squeezed with the max; SE squeezes with the spatial mean (CBAM uses both)",
        "zh": "你用最大值做了压缩；SE 用的是空间上的均值（CBAM 两者都用）"},
    "ch05.se.sum": {
        "en": "you squeezed with the sum over H and W; SE squeezes with the spatial mean (the sum grows with the "
              "image size)",
        "zh": "你用 H 和 W 上的求和做了压缩；SE 用的是空间上的均值（求和会随图像尺寸变大）"},
    "ch05.se.no_relu": {
        "en": "the ReLU between fc1 and fc2 is missing: with pre-activations of both signs, as here, the negative "
              "ones must become 0 before fc2",
        "zh": "fc1 和 fc2 之间少了 ReLU：这里的预激活值有正有负，负的那些在进入 fc2 之前必须变成 0"},
    "ch05.se.softmax": {
        "en": "softmax over channels makes them compete for a total of 1; SE uses a sigmoid, one independent weight "
              "in (0, 1) per channel",
        "zh": "在通道上做 softmax，会让各通道争抢总和为 1 的权重；SE 用的是 sigmoid，"
              "每个通道各有一个 (0, 1) 之间的独立权重"},
    "ch05.se.no_sigmoid": {
        "en": "the sigmoid is missing: the weights must lie in (0, 1)",
        "zh": "少了 sigmoid：权重必须落在 (0, 1) 之间"},
    "ch05.se.differs": {
        "en": "the output differs from x * sigmoid(fc2(relu(fc1(mean over H, W of x))))",
        "zh": "输出与 x * sigmoid(fc2(relu(fc1(mean over H, W of x)))) 不同"},
    "ch05.padding.shape": {
        "en": "output shape {got}, expected {expected}",
        "zh": "输出的形状是 {got}，应为 {expected}"},
    "ch05.padding.nan": {
        "en": "real tokens' outputs contain NaN: a real query must keep at least its real keys",
        "zh": "真实词元的输出里有 NaN：一个真实的查询至少要保留它的那些真实的键"},
    "ch05.padding.passed": {
        "en": "the real tokens now attend only to real keys: the mask has shape (B, 1, 1, S).",
        "zh": "真实词元现在只注意真实的键：掩码的形状是 (B, 1, 1, S)。"},
    "ch05.padding.still_the_bug": {
        "en": "still the bug: the mask (B, 1, S, 1) hides padded *queries*, and the real queries still see the padded "
              "keys; mask the key axis, shape (B, 1, 1, S)",
        "zh": "还是原来的错误：形状为 (B, 1, S, 1) 的掩码遮住的是填充的*查询*，真实的查询仍然看得见填充的键；"
              "应遮住键所在的维度，形状为 (B, 1, 1, S)"},
    "ch05.padding.no_mask": {
        "en": "no mask at all: the real queries still attend to the padded keys (and the padded queries too); build "
              "the key mask (B, 1, 1, S) from lengths and fill the scores it hides with -inf",
        "zh": "根本没有掩码：真实的查询仍然注意填充的键（填充的查询也一样）；应根据 lengths 构造键的掩码 "
              "(B, 1, 1, S)，把它遮住的分数填成 -inf"},
    "ch05.padding.inverted": {
        "en": "the mask is inverted: the real queries attend only to the padded keys. In the package's and PyTorch's "
              "convention True = may attend, so fill where the mask is False (~mask) with -inf",
        "zh": "掩码反了：真实的查询只注意填充的键。按本包和 PyTorch 的约定，True 表示可以注意，"
              "所以应把掩码为 False（~mask）的位置填成 -inf"},
    "ch05.padding.off_by_one": {
        "en": "off by one: your mask keeps positions j <= lengths[b], one padded key too many; a sequence of length "
              "l has real tokens 0 … l - 1 (j < lengths[b])",
        "zh": "差了一位：你的掩码保留了 j <= lengths[b] 的位置，多放进了一个填充的键；长度为 l 的序列，"
              "真实词元是 0 … l - 1（j < lengths[b]）"},
    "ch05.padding.after_softmax": {
        "en": "you zeroed the padded keys' weights *after* the softmax, so the real keys' weights no longer sum to 1; "
              "fill the scores with -inf *before* the softmax",
        "zh": "你在 softmax *之后*才把填充的键的权重置零，真实的键的权重加起来就不再是 1；"
              "应在 softmax *之前*把分数填成 -inf"},
    "ch05.padding.unscaled": {
        "en": "the keys are masked right, but the scores are not divided by sqrt(E), as in the buggy version",
        "zh": "键的掩码对了，但分数没有像原来的版本那样除以 sqrt(E)"},
    "ch05.padding.finite_fill": {
        "en": "the padded keys still get weight: their scores were set to a finite number (such as -10 or -30) "
              "instead of -inf, and where the real scores are lower (the checker tries a batch whose real scores are "
              "about -100) the padded keys take the weight. Fill them with float('-inf') (or "
              "torch.finfo(scores.dtype).min), which no score is below",
        "zh": "填充的键仍然分到了权重：它们的分数被设成了一个有限的数（比如 -10 或 -30），而不是 -inf；"
              "真实的分数更低时（检查器试了一个真实分数约为 -100 的批次），填充的键就拿走了权重。"
              "应填成 float('-inf')（或 torch.finfo(scores.dtype).min），没有哪个分数比它更低"},
    "ch05.padding.differs": {
        "en": "the real tokens' outputs differ from attention over the real keys only",
        "zh": "真实词元的输出与只在真实的键上做注意力的结果不同"},
    "ch05.crossover.no_prediction": {
        "en": "first record your prediction: predict(\"{key}\", predicted_n) before this check (the result is "
              "shown only after a prediction is recorded)",
        "zh": "先记录你的预测：在这次检查之前运行 predict(\"{key}\", predicted_n)（记下预测之后才会显示结果）"},
    "ch05.crossover.bad_prediction": {
        "en": "your prediction must be a positive number of tokens, got {got}",
        "zh": "你的预测应是一个正数（词元个数），得到的是 {got}"},
    "ch05.crossover.not_two_times": {
        "en": "time_both({n}) must return two positive numbers of seconds, got {got}",
        "zh": "time_both({n}) 应返回两个以秒为单位的正数，得到的是 {got}"},
    "ch05.crossover.no_dense": {
        "en": "time_both({n}) did not compute dense attention at length {n}: no {n} x {n} score matrix was created. "
              "Build q, k, v of length n inside time_both and time the calls themselves; return the times you measured",
        "zh": "time_both({n}) 没有在长度 {n} 上计算稠密注意力：没有生成 {n} x {n} 的分数矩阵。"
              "请在 time_both 里构造长度为 n 的 q、k、v，对调用本身计时，并返回你测到的时间"},
    "ch05.crossover.dense": {"en": "dense attention", "zh": "稠密注意力"},
    "ch05.crossover.window": {"en": "the window", "zh": "窗口注意力"},
    "ch05.crossover.not_measured": {
        "en": "your times for {what} are {off:.2g} times what the checker measures for the same calls (at n = {n}: "
              "{theirs:.3g} ms yours, {cpu:.3g} ms of CPU time and {wall:.3g} ms of wall time measured here): return "
              "the times you measured, in seconds, the best of a few calls of the attention alone",
        "zh": "你给出的{what}耗时是检查器对同样调用实测值的 {off:.2g} 倍（n = {n} 时：你的是 {theirs:.3g} 毫秒，"
              "这里实测的 CPU 时间是 {cpu:.3g} 毫秒、墙钟时间是 {wall:.3g} 毫秒）：请返回你实际测到的时间，以秒为单位，"
              "只计时注意力本身，取几次调用中最快的一次"},
    "ch05.crossover.not_faster": {
        "en": "your dense time grows like n^{k_dense:.2f} and the window's like n^{k_window:.2f}: dense should grow "
              "clearly faster. Time the attention itself (not tensor creation), take the best of a few calls, and "
              "check the window really restricts the keys",
        "zh": "你测得的稠密注意力耗时按 n^{k_dense:.2f} 增长，窗口注意力按 n^{k_window:.2f} 增长：稠密注意力应当"
              "增长得明显更快。请只计时注意力本身（不含创建张量），每种取几次调用中最快的一次，并检查窗口确实限制了键"},
    "ch05.crossover.below": {"en": "below the smallest size measured, {n}", "zh": "小于所测的最小长度 {n}"},
    "ch05.crossover.beyond": {"en": "beyond the largest size measured, {n}", "zh": "超出了所测的最大长度 {n}"},
    "ch05.crossover.how.measured": {"en": "measured", "zh": "实测"},
    "ch05.crossover.how.extrapolated": {"en": "extrapolated", "zh": "外推"},
    "ch05.crossover.about": {"en": "about {n:,.0f} ({how})", "zh": "约为 {n:,.0f}（{how}）"},
    "ch05.crossover.right": {
        "en": "Your prediction, {predicted:,.0f}, was right (within a factor of 2).",
        "zh": "你的预测 {predicted:,.0f} 是对的（误差在 2 倍以内）。"},
    "ch05.crossover.wrong": {
        "en": "Your prediction, {predicted:,.0f}, was wrong (off by more than a factor of 2): what makes the dense "
              "product faster than its FLOPs say?",
        "zh": "你的预测 {predicted:,.0f} 不对（相差 2 倍以上）：是什么让稠密的矩阵乘法比它的 FLOPs 数所说的更快？"},
    "ch05.crossover.late": {
        "en": "Your prediction, {predicted:,.0f}, was recorded after the result had been shown, so it is not judged.",
        "zh": "你的预测 {predicted:,.0f} 是在结果显示之后才记录的，所以不作评判。"},
    "ch05.crossover.passed": {
        "en": "your timings agree with the checker's own measurement of the same calls: dense time ∝ n^{k_dense:.2f}, "
              "window ∝ n^{k_window:.2f}; the window becomes faster at {measured}. {judged}",
        "zh": "你的计时与检查器对同样调用的实测一致：稠密注意力耗时 ∝ n^{k_dense:.2f}，窗口注意力 ∝ n^{k_window:.2f}；"
              "窗口注意力开始更快的长度{measured}。{judged}"},
    "ch05.causal.shape": {
        "en": "output shape {got}, expected {expected}, (B, H, L, Ev) with L = {L} queries and S = {S} keys",
        "zh": "输出的形状是 {got}，应为 {expected}，即 (B, H, L, Ev)，其中查询 L = {L} 个，键 S = {S} 个"},
    "ch05.causal.dtype": {
        "en": "the output is {got} for {expected} inputs: compute in float32 if you like, but return the input's dtype "
              "(.to(q.dtype))",
        "zh": "输入是 {expected}，输出却是 {got}：中间可以用 float32 计算，但要返回输入的 dtype（.to(q.dtype)）"},
    "ch05.causal.top_left": {
        "en": "top-left alignment: with L = {L} queries and S = {S} keys your query i sees keys j <= i, as if the "
              "queries were the first L positions. Here they are the last L (new tokens after S - L earlier ones), so "
              "query i is position i + S - L and sees j <= i + (S - L): the bottom-right mask",
        "zh": "左上对齐：L = {L} 个查询、S = {S} 个键时，你的第 i 个查询看得见 j <= i 的键，好像查询是前 L 个位置。"
              "这里它们是最后 L 个（排在 S - L 个已有词元之后的新词元），所以第 i 个查询在位置 i + S - L，"
              "看得见 j <= i + (S - L) 的键：右下对齐的掩码"},
    "ch05.causal.diagonal": {
        "en": "off by one: a query does not see its own position (the diagonal is masked, j < i); causal attention "
              "keeps j <= i (L = {L}, S = {S}): torch.tril keeps the diagonal, triu(…, 1) is what to hide",
        "zh": "差了一位：查询看不见自己的位置（对角线被遮住了，j < i）；因果注意力保留 j <= i（L = {L}，S = {S}）："
              "torch.tril 保留对角线，要遮住的是 triu(…, 1)"},
    "ch05.causal.one_ahead": {
        "en": "off by one: each query also sees the next position (j <= i + 1), one token of the future (L = {L}, "
              "S = {S}); hide every key after the query's own position",
        "zh": "差了一位：每个查询还看得见下一个位置（j <= i + 1），也就是未来的一个词元（L = {L}，S = {S}）；"
              "应遮住查询自身位置之后的所有键"},
    "ch05.causal.inverted": {
        "en": "the mask is inverted: your queries see the future and not the past. True = may attend (the package's "
              "and PyTorch's convention): fill the scores where the mask is False (~mask) with -inf",
        "zh": "掩码反了：你的查询看得见未来、看不见过去。True 表示可以注意（本包和 PyTorch 的约定）："
              "应把掩码为 False（~mask）的位置的分数填成 -inf"},
    "ch05.causal.no_mask": {
        "en": "no mask at all: every query sees every key, the future included (L = {L}, S = {S})",
        "zh": "根本没有掩码：每个查询都看得见所有的键，包括未来的（L = {L}，S = {S}）"},
    "ch05.causal.after_softmax": {
        "en": "you zeroed the future's weights *after* the softmax, so the kept weights no longer sum to 1; fill the "
              "scores with -inf *before* the softmax",
        "zh": "你在 softmax *之后*才把未来的权重置零，留下的权重加起来就不再是 1；应在 softmax *之前*把分数填成 -inf"},
    "ch05.causal.unscaled": {
        "en": "the mask is right but the scores are not divided by sqrt(E)",
        "zh": "掩码对了，但分数没有除以 sqrt(E)"},
    "ch05.causal.finite_fill": {
        "en": "right on ordinary scores, wrong on a {dtype} case whose every score is about -2e4: your masked scores "
              "are replaced by a finite number (such as -1e4) that is *higher* than the real scores, so the future "
              "keys take the weight. "
              "Fill with float('-inf') (or torch.finfo(scores.dtype).min): then a masked key's weight "
              "is an exact 0 whatever the scores",
        "zh": "普通的分数上是对的，但在一个所有分数都约为 -2e4 的 {dtype} 例子上错了：你把被遮住的分数换成了一个"
              "有限的数（比如 -1e4），它比真实的分数还*大*，于是未来的键拿走了权重。应填 float('-inf')"
              "（或 torch.finfo(scores.dtype).min）：这样无论分数是多少，被遮住的键的权重都恰好是 0"},
    "ch05.causal.fill_overflows": {
        "en": "your fill value does not fit in float16 (its largest magnitude is 65,504: -1e9 cannot be stored, "
              "masked_fill refuses it); fill with float('-inf') or torch.finfo(scores.dtype).min",
        "zh": "你的填充值超出了 float16 的范围（它能表示的最大绝对值是 65,504，存不下 -1e9，masked_fill 会拒绝）；"
              "应填 float('-inf') 或 torch.finfo(scores.dtype).min"},
    "ch05.causal.nan": {
        "en": "the output contains NaN ({dtype}, L = {L}, S = {S}): every query keeps at least its own position, so no "
              "row should be fully masked; does a product overflow, or a row have no key?",
        "zh": "输出里有 NaN（{dtype}，L = {L}，S = {S}）：每个查询至少保留它自己的位置，不应有哪一行被整行遮住；"
              "是乘积溢出了，还是有一行一个键也没有？"},
    "ch05.causal.differs": {
        "en": "the output differs from causal attention where query i (position i + S - L) sees keys j <= i + S - L "
              "(L = {L}, S = {S}, {dtype})",
        "zh": "输出与因果注意力不同：第 i 个查询（位置 i + S - L）应看得见 j <= i + S - L 的键"
              "（L = {L}，S = {S}，{dtype}）"},
    "ch05.causal.passed": {
        "en": "causal attention right for L = S, L < S (bottom-right aligned), a single query, float16, and scores of "
              "-2e4 where only -inf (or finfo.min) gives the future an exact zero.",
        "zh": "因果注意力在 L = S、L < S（右下对齐）、单个查询、float16 以及分数为 -2e4 的情形下都对了："
              "在最后这种情形下，只有 -inf（或 finfo.min）能让未来的权重恰好为 0。"},
    "ch05.what.masked_scores": {"en": "masked scores, the shape of the scores (B, H, L, S)",
                                "zh": "加了掩码的分数（形状与分数相同，(B, H, L, S)）"},
    "ch05.mask_dtype.passed": {
        "en": "safe in every dtype: the softmax of your scores is right in float32, float16 and bfloat16, with one "
              "mask and with two (your function applied twice), on rows that keep a key and, uniform, on fully "
              "masked rows of negative, one-positive and mixed scores.",
        "zh": "在每种 dtype 下都安全：你的分数在 float32、float16 和 bfloat16 下做 softmax 都是对的，一个掩码和两个"
              "掩码（你的函数调用两次）都对；保留了键的行对，整行被遮住的行（负分数、只有一个正分数、正负混合）"
              "也是均匀的。"},
    "ch05.mask_dtype.added_min": {
        "en": "you *added* torch.finfo(dtype).min to the masked scores ({dtype}, {masks} mask(s)). In float16 "
              "finfo.min is -65,504 and any score of -16 or below, added to it, overflows to -inf: a fully masked "
              "row of negative scores becomes NaN, and one with a single positive score becomes one-hot, all the "
              "weight on a key it was told not to see; two added masks give finfo.min + finfo.min = -inf in every "
              "dtype. *Write* the fill instead: scores.masked_fill(~mask, torch.finfo(scores.dtype).min) or "
              "torch.where(mask, scores, finfo.min)",
        "zh": "你把 torch.finfo(dtype).min *加*到了被遮住的分数上（{dtype}，{masks} 个掩码）。在 float16 里 finfo.min "
              "是 -65,504，任何不超过 -16 的分数加上它都会溢出成 -inf：一整行被遮住的负分数变成 NaN，只有一个正分数"
              "的那一行变成独热（one-hot），全部权重落在一个本不该看见的键上；两个相加的掩码则在每种 dtype 下都得到 "
              "finfo.min + finfo.min = -inf。应该*写入*填充值：scores.masked_fill(~mask, torch.finfo(scores.dtype).min)"
              " 或 torch.where(mask, scores, finfo.min)"},
    "ch05.mask_dtype.added_twice": {
        "en": "NaN with two masks ({dtype}, your function applied twice): you *added* torch.finfo(dtype).min, so a "
              "key hidden by both masks gets finfo.min + finfo.min = -inf, in every dtype, and a fully masked row "
              "becomes 0/0 (in float16 even one added mask overflows, for scores of -16 or below). *Write* the fill "
              "(scores.masked_fill(~mask, torch.finfo(scores.dtype).min)): written twice, it is still finfo.min",
        "zh": "两个掩码时出现 NaN（{dtype}，你的函数调用了两次）：你把 torch.finfo(dtype).min *加*了上去，于是被两个"
              "掩码都遮住的键得到 finfo.min + finfo.min = -inf，每种 dtype 都是如此，整行被遮住的行就成了 0/0"
              "（在 float16 里，分数不超过 -16 时，加一个掩码就已经溢出）。应该*写入*填充值"
              "（scores.masked_fill(~mask, torch.finfo(scores.dtype).min)）：写两次，仍然是 finfo.min"},
    "ch05.mask_dtype.minus_1e9": {
        "en": "you used -1e9, the seed's \"very large negative number\": it fits float32 and bfloat16, but "
              "float16's largest magnitude is 65,504, so -1e9 becomes -inf there and a fully masked row becomes NaN "
              "({dtype}); added to the scores rather than written, it also rounds them, in float32, to steps of 64. "
              "Write the fill of the scores' own dtype: scores.masked_fill(~mask, torch.finfo(scores.dtype).min)",
        "zh": "你用了 -1e9（原文所说的“很大的负数”）：float32 和 bfloat16 存得下，但 float16 能表示的最大绝对值"
              "是 65,504，-1e9 在那里变成 -inf，整行被遮住的行就成了 NaN（{dtype}）；如果是加到分数上而不是写入，"
              "它在 float32 里还会把分数舍入到以 64 为步长的值。应写入分数自己的 dtype 的填充值："
              "scores.masked_fill(~mask, torch.finfo(scores.dtype).min)"},
    "ch05.mask_dtype.minus_inf": {
        "en": "you filled with -inf: right on every row that keeps a key, but a fully masked row is "
              "exp(-inf) / sum exp(-inf) = 0/0 = NaN ({dtype}), and one NaN row spreads through the next layer. "
              "Fill with torch.finfo(scores.dtype).min: finite, so such a row is uniform instead",
        "zh": "你用 -inf 做填充：保留了键的行都对，但整行被遮住的行是 exp(-inf) / sum exp(-inf) = 0/0 = NaN"
              "（{dtype}），而一行 NaN 会通过下一层扩散开。应填 torch.finfo(scores.dtype).min：它是有限的，"
              "这样的行就变成均匀的"},
    "ch05.mask_dtype.fill_overflows": {
        "en": "your fill value does not fit in {dtype} (masked_fill refuses it): -1e9 exceeds float16's largest "
              "magnitude, 65,504, and float32's finfo.min exceeds bfloat16's. Take the fill from the scores' own "
              "dtype: torch.finfo(scores.dtype).min",
        "zh": "你的填充值超出了 {dtype} 的范围（masked_fill 拒绝了它）：-1e9 超过了 float16 能表示的最大绝对值 "
              "65,504，float32 的 finfo.min 也超过了 bfloat16 的。填充值应取自分数自己的 dtype："
              "torch.finfo(scores.dtype).min"},
    "ch05.mask_dtype.inverted": {
        "en": "the mask is inverted: you hid the keys where it is True. In PyTorch's and the package's convention "
              "True = may attend, so fill where the mask is False (~mask)",
        "zh": "掩码反了：你遮住了掩码为 True 的键。按 PyTorch 和本包的约定，True 表示可以注意，"
              "所以应填掩码为 False（~mask）的位置"},
    "ch05.mask_dtype.multiplied": {
        "en": "you multiplied the scores by the mask: a masked score becomes 0, not a very low number, so the masked "
              "keys still get weight (e^0 = 1 against the others). Fill them with torch.finfo(scores.dtype).min",
        "zh": "你把分数乘上了掩码：被遮住的分数变成 0，而不是一个很小的数，于是被遮住的键仍然分到权重"
              "（e^0 = 1，与其他键相比并不小）。应把它们填成 torch.finfo(scores.dtype).min"},
    "ch05.mask_dtype.broadcast": {
        "en": "your function raised on a mask of shape {mask_shape} for scores of shape {shape} ({error}): a mask "
              "broadcasts, e.g. (B, 1, L, S) over the heads or (L, S) over the batch. masked_fill and torch.where "
              "broadcast it for you; boolean indexing (scores[~mask]) and .view do not",
        "zh": "掩码形状为 {mask_shape}、分数形状为 {shape} 时，你的函数报错了（{error}）：掩码是要广播的，"
              "比如 (B, 1, L, S) 在头的维度上广播，(L, S) 在批次的维度上广播。masked_fill 和 torch.where "
              "会替你广播；布尔索引（scores[~mask]）和 .view 不会"},
    "ch05.mask_dtype.shape": {
        "en": "your result has shape {got}, the scores {shape} (mask {mask_shape}): return the scores' shape, the "
              "mask broadcast over it, not the other way round",
        "zh": "你的结果形状是 {got}，分数的形状是 {shape}（掩码 {mask_shape}）：应返回分数的形状，"
              "让掩码在分数上广播，而不是反过来"},
    "ch05.mask_dtype.dtype": {
        "en": "your result is {got} for {dtype} scores: return the scores' dtype, with the fill of that dtype "
              "(torch.finfo(scores.dtype).min); the softmax then runs in it, as a hand-written attention does",
        "zh": "分数是 {dtype}，你的结果却是 {got}：应返回分数的 dtype，并使用这个 dtype 的填充值"
              "（torch.finfo(scores.dtype).min）；softmax 也就在这个 dtype 下计算，就像手写的注意力那样"},
    "ch05.mask_dtype.nan": {
        "en": "the softmax of your scores contains NaN ({dtype}, {masks} mask(s), mask {mask_shape}): a fill of -inf, "
              "or one that overflows to -inf, turns a fully masked row into 0/0",
        "zh": "你的分数做 softmax 后出现了 NaN（{dtype}，{masks} 个掩码，掩码形状 {mask_shape}）：-inf 的填充值，"
              "或溢出成 -inf 的填充值，会把整行被遮住的行变成 0/0"},
    "ch05.mask_dtype.differs": {
        "en": "the softmax of your scores differs from the masked softmax ({dtype}, {masks} mask(s), mask "
              "{mask_shape}): on a row that keeps a key, the masked keys must get 0 and the others their softmax; "
              "on a fully masked row, every key the same weight",
        "zh": "你的分数做 softmax 后与带掩码的 softmax 不同（{dtype}，{masks} 个掩码，掩码形状 {mask_shape}）："
              "保留了键的行里，被遮住的键权重应为 0，其余的键按 softmax 分配；整行被遮住的行里，每个键的权重相同"},
}

register(MESSAGES)
