"""The Chinese of the claims of chapter 3's pages and lab (see :mod:`helpers.claim_text`)."""

STATEMENTS_ZH: dict[str, str] = {
    # book/03-scaling/index.md
    "Var(q·k)/d_k is within 12 % of 1 for every distribution tried, from d_k = 16 on: the distribution does not matter":
        "从 d_k = 16 起，对所试的每种分布 Var(q·k)/d_k 都在 1 的 12% 以内：分布无关紧要",
    "with shifted inputs the variance is 2 d_k within a row and 3 d_k across pairs, within 10 %":
        "输入有偏移时，行内方差为 2 d_k，跨行所有对的方差为 3 d_k，误差在 10% 以内",
    "with aligned vectors the mean of q·k overtakes its spread as d_k grows (over twice it at the largest d_k)":
        "向量对齐时，随着 d_k 增大，q·k 的均值超过其离散程度（在最大的 d_k 上超过两倍）",
    "at d_k = 1024 the unscaled row puts over 0.99 on one key and the scaled row does not":
        "在 d_k = 1024 时，不缩放的行把超过 0.99 的权重放在一个键上，而缩放后的行不会",
    "without the scale the largest weight climbs with d_k":
        "不缩放时，最大权重随 d_k 上升",
    "with the scale the largest weight stays within 0.05 across d_k":
        "缩放后，最大权重在各个 d_k 之间的变化不到 0.05",
    "at a spread of 32 the median row's Jacobian norm is under 0.01, far below the mean's":
        "在离散程度为 32 时，中位数行的雅可比范数低于 0.01，远低于均值",
    "at d_k = 16 to 128 the median unscaled row passes more gradient than the median scaled row":
        "在 d_k = 16 到 128 时，不缩放的中位数行传回的梯度比缩放后的中位数行多",
    "at d_k = 256 the median unscaled and scaled rows pass about the same gradient (within 20 %)":
        "在 d_k = 256 时，不缩放与缩放的中位数行传回的梯度大致相同（相差不到 20%）",
    "at PyTorch's default initialisation the scaled scores start with a spread under 0.5 at every d_k":
        "在 PyTorch 的默认初始化下，缩放后的分数在每个 d_k 上的起始离散程度都低于 0.5",
    "at d_k = 128 and 1024 the unscaled gradient at W_Q is over 1.3 √d_k times the scaled one":
        "在 d_k = 128 和 1024 时，不缩放时 W_Q 处的梯度是缩放时的 1.3 √d_k 倍以上",
    "at d_k = 128 and 1024 an unsaturated unscaled row lets more gradient through than a scaled row (over 1.2 times)":
        "在 d_k = 128 和 1024 时，未饱和的不缩放行放过的梯度比缩放行多（超过 1.2 倍）",
    "at the largest d_k the unscaled rows' median Jacobian is over three times smaller than the scaled rows'":
        "在最大的 d_k 上，不缩放的行的雅可比中位数比缩放后的小三倍以上",
    "at the largest d_k the unscaled gradient at W_Q is over three times the scaled one":
        "在最大的 d_k 上，不缩放时 W_Q 处的梯度是缩放时的三倍以上",
    "at the largest d_k over 20 % of the unscaled rows are saturated, and over 90 % of the gradient comes from the unsaturated ones":
        "在最大的 d_k 上，超过 20% 的不缩放行已饱和，而超过 90% 的梯度来自未饱和的行",
    "at d_k = 16 the scale makes no difference: the unscaled head's mean steps are within 15 % of the scaled head's":
        "在 d_k = 16 时，缩放没有影响：不缩放的头的平均步数与缩放的头相差不到 15%",
    "at d_k = 64 the unscaled head needs over 1.2 times the scaled head's steps on average":
        "在 d_k = 64 时，不缩放的头平均需要缩放的头 1.2 倍以上的步数",
    "at d_k = 128 the unscaled head needs over 1.5 times the scaled head's steps on average":
        "在 d_k = 128 时，不缩放的头平均需要缩放的头 1.5 倍以上的步数",
    "with the scale the mean steps change by less than a factor 1.5 from d_k = 16 to 128":
        "有缩放时，从 d_k = 16 到 128，平均步数的变化不到 1.5 倍",
    "the unscaled scores start with a spread under 2 at d_k = 16, the scaled ones under 0.5 at every d_k":
        "在 d_k = 16 时不缩放的分数起始离散程度低于 2，缩放后的分数在每个 d_k 上都低于 0.5",
    "at d_k = 128 the unscaled seeds' steps spread over a range more than three times as wide as the scaled seeds'":
        "在 d_k = 128 时，不缩放的各种子所需步数的分布范围是缩放的各种子的三倍以上",
    "the scaled head reaches 90 % in every seed at every learning rate of the grid":
        "缩放的头在网格中每个学习率、每个种子上都达到了 90%",
    "the scaled head gets faster as the learning rate grows, over the whole grid":
        "在整个网格上，学习率越大，缩放的头学得越快",
    "at every learning rate of the grid the unscaled head needs over 1.3 times the scaled head's steps on average":
        "在网格中的每个学习率上，不缩放的头平均需要缩放的头 1.3 倍以上的步数",
    "at the smallest learning rate the scaled head given the unscaled head's steps reaches 90 % in every seed, faster than either head":
        "在最小的学习率上，换用不缩放的头的步长的缩放头在每个种子上都达到 90%，比两个头都快",
    "at the smallest learning rate the unscaled head is the slowest of the three":
        "在最小的学习率上，不缩放的头是三者中最慢的",
    "at the largest learning rate the scaled head given the unscaled head's steps breaks: over three times the scaled head's steps on average, and at least half of the seeds never reach 90 %":
        "在最大的学习率上，换用不缩放的头的步长的缩放头训练失败：平均步数是缩放的头的三倍以上，且至少一半的种子始终达不到 90%",
    "at the largest learning rate the scores of the scaled head given the unscaled head's steps end over ten times as spread out as the scaled head's":
        "在最大的学习率上，换用不缩放的头的步长的缩放头，其分数最终的离散程度是缩放的头的十倍以上",
    "at d_k = 128 under 20 % of the recall head's unscaled rows start saturated, and its median row passes over three quarters of the scaled row's gradient":
        "在 d_k = 128 时，回忆任务的头中起始即饱和的不缩放行不到 20%，其中位数行传回的梯度超过缩放行的四分之三",
    "at d_k = 128 the recall head's unscaled rows start with a largest weight over 0.5 on average, the scaled ones under 0.3":
        "在 d_k = 128 时，回忆任务的头中不缩放行的起始最大权重平均超过 0.5，缩放行的低于 0.3",
    "with the scale, the logits' spread still drifts to over three times its start at lr 1e-3":
        "即使缩放，在学习率 1e-3 下 logits 的离散程度仍漂移到起点的三倍以上",
    "at lr 3e-3 the unscaled logits run away to over five times the scaled ones' spread":
        "在学习率 3e-3 下，不缩放的 logits 离散程度失控，达到缩放时的五倍以上",
    "with Adam a temperature started at 1 moves by about the learning rate a step (within 1.2 times)":
        "使用 Adam 时，从 1 出发的温度每步大约移动一个学习率（不超过 1.2 倍）",
    "started at 1, the fast temperature ends below 0.7 and the slow one above 0.8":
        "从 1 出发时，快速学习的温度最终低于 0.7，慢速的则高于 0.8",
    "with the fast temperature every seed reaches the target":
        "使用快速学习的温度时，每个种子都达到了目标",
    "the fast temperature moves towards the prior from 1 without reaching it":
        "快速学习的温度从 1 向先验值移动，但没有到达",
    "a temperature started at the prior barely moves (under 0.15 in log)":
        "从先验值出发的温度几乎不动（对数变化小于 0.15）",
    "with the fast learning rate a temperature started at the prior rises to over 1.5 times the prior":
        "使用较大的学习率时，从先验值出发的温度上升到先验值的 1.5 倍以上",
    "a temperature started at the prior learns as fast as the fixed scale (within 10 steps)":
        "从先验值出发的温度学得和固定缩放一样快（相差不超过 10 步）",
    "scaling by √d_model instead of √d_head is slower on every seed":
        "用 √d_model 代替 √d_head 做缩放，在每个种子上都更慢",
    "with the right scale the start is over three times further from uniform than with the bug":
        "使用正确的缩放时，起点离均匀分布的距离是有错误时的三倍以上",
    "at initialisation even the right scale attends almost uniformly (within 5 % of the maximum entropy)":
        "初始化时，即使缩放正确，注意力也几乎是均匀的（与最大熵相差不到 5%）",
}
