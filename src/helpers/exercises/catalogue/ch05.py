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
    "ch05.window.differs": {
        "en": "the output differs from softmax attention restricted to |i - j| < window",
        "zh": "输出与限制在 |i - j| < window 之内的 softmax 注意力不同"},
    "ch05.window.passed": {
        "en": "your sliding-window attention matches dense attention with the window mask.",
        "zh": "你的局部窗口注意力与加了窗口掩码的稠密注意力结果一致。"},
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
    "ch05.linear.passed": {
        "en": "same output as the kernel form, and the largest tensor was {shape}: no L x S matrix.",
        "zh": "输出与核形式相同，而且最大的张量只有 {shape}：没有生成 L x S 矩阵。"},
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
    "ch05.padding.differs": {
        "en": "the real tokens' outputs differ from attention over the real keys only",
        "zh": "真实词元的输出与只在真实的键上做注意力的结果不同"},
    "ch05.crossover.no_prediction": {
        "en": "first write your prediction: predicted_n must be a positive number, got {got}",
        "zh": "先写下你的预测：predicted_n 应是一个正数，得到的是 {got}"},
    "ch05.crossover.not_two_times": {
        "en": "time_both({n}) must return two positive numbers of seconds, got {got}",
        "zh": "time_both({n}) 应返回两个以秒为单位的正数，得到的是 {got}"},
    "ch05.crossover.not_faster": {
        "en": "your dense time grows like n^{k_dense:.2f} and the window's like n^{k_window:.2f}: dense should grow "
              "clearly faster. Time the attention itself (not tensor creation), take the best of a few calls, and "
              "check the window really restricts the keys",
        "zh": "你测得的稠密注意力耗时按 n^{k_dense:.2f} 增长，窗口注意力按 n^{k_window:.2f} 增长：稠密注意力应当"
              "增长得明显更快。请只计时注意力本身（不含创建张量），每种取几次调用中最快的一次，并检查窗口确实限制了键"},
    "ch05.crossover.below": {"en": "below the smallest size", "zh": "小于所测的最小长度"},
    "ch05.crossover.beyond": {"en": "beyond the measured sizes", "zh": "超出了所测的范围"},
    "ch05.crossover.how.measured": {"en": "measured", "zh": "实测"},
    "ch05.crossover.how.extrapolated": {"en": "extrapolated", "zh": "外推"},
    "ch05.crossover.about": {"en": "about {n:,.0f} ({how})", "zh": "约为 {n:,.0f}（{how}）"},
    "ch05.crossover.ratio": {
        "en": "; your prediction was {ratio:.1f}× the measured value",
        "zh": "；你的预测是实测值的 {ratio:.1f} 倍"},
    "ch05.crossover.passed": {
        "en": "dense time ∝ n^{k_dense:.2f}, window ∝ n^{k_window:.2f}; the window becomes faster at {measured}, you "
              "predicted {predicted:,.0f}{ratio}.",
        "zh": "稠密注意力耗时 ∝ n^{k_dense:.2f}，窗口注意力 ∝ n^{k_window:.2f}；窗口注意力开始更快的长度"
              "{measured}，你预测的是 {predicted:,.0f}{ratio}。"},
}

register(MESSAGES)
