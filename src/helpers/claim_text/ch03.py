"""The Chinese of the claims of chapter 3's pages and lab (see :mod:`helpers.claim_text`)."""

STATEMENTS_ZH: dict[str, str] = {
    # book/03-scaling/index.md
    "Var(q·k)/d_k is within 10 % of 1 for every distribution tried, from d_k = 16 on: the distribution does not matter":
        "从 d_k = 16 起，对所试的每种分布 Var(q·k)/d_k 都在 1 的 10% 以内：分布无关紧要",
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
    "at the largest d_k the unscaled rows' median Jacobian is over three times smaller than the scaled rows'":
        "在最大的 d_k 上，不缩放的行的雅可比中位数比缩放后的小三倍以上",
    "at the largest d_k the unscaled gradient at W_Q is over three times the scaled one":
        "在最大的 d_k 上，不缩放时 W_Q 处的梯度是缩放时的三倍以上",
    "at the largest d_k over 20 % of the unscaled rows are saturated, and over 90 % of the gradient comes from the unsaturated ones":
        "在最大的 d_k 上，超过 20% 的不缩放行已饱和，而超过 90% 的梯度来自未饱和的行",
    "at d_k = 16 the scale buys nothing: the unscaled head is no slower on average":
        "在 d_k = 16 时，缩放没有带来好处：不缩放的头平均并不更慢",
    "at d_k = 64 the scale helps a little, far less than at the training head's size":
        "在 d_k = 64 时，缩放略有帮助，远小于在训练用的头大小上的帮助",
    "at d_k = 64 the gap between the mean steps is within the seeds' spread":
        "在 d_k = 64 时，平均步数的差距在种子间的离散范围之内",
    "at the training head's size the unscaled head needs over twice the steps on average":
        "在训练用的头大小上，不缩放的头平均需要两倍以上的步数",
    "one unscaled seed can look as good as the scaled ones (within 1.5 times their slowest)":
        "某个不缩放的种子可能看起来和缩放的一样好（在其最慢者的 1.5 倍以内）",
    "the unscaled seeds spread: the slowest needs over twice the slowest scaled seed's steps":
        "不缩放的种子分散很大：最慢的需要最慢的缩放种子两倍以上的步数",
    "the unscaled head does not settle: its mean final accuracy is below the scaled head's":
        "不缩放的头没有稳定下来：其平均最终准确率低于缩放的头",
    "at d_k = 16 the unscaled scores start with a spread under 2":
        "在 d_k = 16 时，不缩放的分数起始离散程度低于 2",
    "the scaled head trains at every learning rate of the grid":
        "缩放的头在网格中的每个学习率上都能训练",
    "the unscaled head's usable learning rates are a strict subset of the scaled head's":
        "不缩放的头可用的学习率是缩放的头的真子集",
    "the largest learning rate breaks the unscaled head and not the scaled one":
        "最大的学习率会使不缩放的头失败，而缩放的头不会",
    "the smallest learning rate also leaves the unscaled head unusable and not the scaled one":
        "最小的学习率同样使不缩放的头不可用，而缩放的头可用",
    "at the smallest learning rate the unscaled head learns more slowly on average":
        "在最小的学习率上，不缩放的头平均学得更慢",
    "at the smallest learning rate every scaled seed reaches the target":
        "在最小的学习率上，每个缩放的种子都达到了目标",
    "at the smallest learning rate only some unscaled seeds reach the target":
        "在最小的学习率上，只有部分不缩放的种子达到目标",
    "at the training head's size under 10 % of the unscaled rows start saturated":
        "在训练用的头大小上，起始时饱和的不缩放行不到 10%",
    "at the training head's size the unscaled rows' gradient is not smaller than the scaled rows'":
        "在训练用的头大小上，不缩放行的梯度并不比缩放行的小",
    "the recall head's starting spread is about that layer's (0.5-2 times)":
        "回忆任务的头的起始离散程度与那一层相当（0.5-2 倍）",
    "with the scale, the logits' spread still drifts to over three times its start at lr 1e-3":
        "即使缩放，在学习率 1e-3 下 logits 的离散程度仍漂移到起点的三倍以上",
    "at lr 3e-3 the unscaled logits run away to over ten times the scaled ones' spread":
        "在学习率 3e-3 下，不缩放的 logits 离散程度失控，达到缩放时的十倍以上",
    "with Adam a temperature started at 1 moves by about the learning rate a step (within 1.2 times)":
        "使用 Adam 时，从 1 出发的温度每步大约移动一个学习率（不超过 1.2 倍）",
    "a temperature learned from 1 needs over twice the fixed scale's steps":
        "从 1 开始学习的温度需要的步数是固定缩放的两倍以上",
    "the fast temperature travels over five times further than the slow one":
        "快速学习的温度移动的距离是慢速的五倍以上",
    "with the fast temperature every seed reaches the target":
        "使用快速学习的温度时，每个种子都达到了目标",
    "the fast temperature moves towards the prior from 1 without reaching it":
        "快速学习的温度从 1 向先验值移动，但没有到达",
    "a temperature started at the prior learns as fast as the fixed scale (within 10 steps)":
        "从先验值出发的温度学得和固定缩放一样快（相差不超过 10 步）",
    "the fast temperature is slower than starting at the prior":
        "快速学习的温度比从先验值出发要慢",
    "a temperature started at the prior barely moves (under 0.15 in log)":
        "从先验值出发的温度几乎不动（对数变化小于 0.15）",
    "scaling by √d_model instead of √d_head is slower on every seed":
        "用 √d_model 代替 √d_head 做缩放，在每个种子上都更慢",
    "with the right scale the start is over three times further from uniform than with the bug":
        "使用正确的缩放时，起点离均匀分布的距离是有错误时的三倍以上",
    "at initialisation even the right scale attends almost uniformly (within 5 % of the maximum entropy)":
        "初始化时，即使缩放正确，注意力也几乎是均匀的（与最大熵相差不到 5%）",
}
