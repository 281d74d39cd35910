"""The Chinese of the claims of chapter 2's pages and lab (see :mod:`helpers.claim_text`)."""

STATEMENTS_ZH: dict[str, str] = {
    # book/02-dot-product/index.md
    "a longer query makes the dot product, the general form and the negative distance put over 0.1 more weight on the best key":
        "查询变长时，点积、一般形式和负距离放在最佳键上的权重增加超过 0.1",
    "every score built on one or two matrix products costs under ten times the dot product at the largest size":
        "在最大的尺寸上，基于一两次矩阵乘法的分数函数开销都不到点积的十倍",
    "additive scoring costs over four times as much time, relative to the dot product, as its operation count predicts":
        "相对点积，加性打分花费的时间超过其运算次数所预测的四倍",
    "additive scoring and the Python loops are over 20 times slower than the dot product":
        "加性打分和 Python 循环比点积慢 20 倍以上",
    "even the loop over queries is slower than one matrix product at the largest size (over 1.2 times)":
        "在最大的尺寸上，即使按查询循环也比一次矩阵乘法慢（超过 1.2 倍）",
    "the two projections take under 1 % of additive scoring's time":
        "两次投影占加性打分用时的不到 1%",
    "the three passes over the (L, S, A) tensor take over 90 % of additive scoring's time":
        "对 (L, S, A) 张量的三遍计算占加性打分用时的 90% 以上",
    "the broadcast sum, one addition per entry, takes over a tenth of additive scoring's time":
        "每个元素只做一次加法的广播相加，一项就占加性打分用时的十分之一以上",
    "the steps timed apart add up to about the whole call (0.6-1.6 times)":
        "分开计时的各步加起来约等于整个调用的用时（0.6-1.6 倍）",
    "the model's query vectors start with lengths between 1 and 5":
        "模型的查询向量初始长度在 1 到 5 之间",
    "only the cosine's gradient grows over a hundredfold as the vectors shrink":
        "只有余弦的梯度会随向量变短而增长一百倍以上",
    "the plain cosine starts at about the dot product's spread (0.5-1.5 times)":
        "普通余弦的初始离散程度约等于点积的（0.5-1.5 倍）",
    "additive scoring reaches the threshold over 20 steps later than the dot product on average (a seed that never does counts as one step past the run)":
        "平均而言，加性打分达到阈值比点积晚 20 步以上（达不到的种子按比训练多一步计）",
    "additive scoring learns the lookup too: over 0.8 in every seed":
        "加性打分也学会了查找：每个种子都高于 0.8",
    "the plain cosine never reaches the threshold and stays under 0.6 in every seed":
        "普通余弦在每个种子中都达不到阈值，且停留在 0.6 以下",
    "the plain cosine still learns something: over twice chance in every seed":
        "普通余弦仍学到了一些东西：每个种子都超过随机水平的两倍",
    "the learned scale grows to over 1.5 in every seed":
        "在每个种子中，学到的缩放因子都增长到 1.5 以上",
    "the dot product, negative distance, general form and the cosine with a learned scale reach the threshold in every seed (over 0.95)":
        "点积、负距离、一般形式和带可学习缩放的余弦在每个种子中都达到阈值（高于 0.95）",
    "with the learning rate divided by each factor, additive scoring needs over 40 more steps than the others in every seed":
        "学习率除以各自的因子后，在每个种子中，加性打分达到阈值所需的步数都比其他几种多 40 步以上",
    "with the learning rate divided by each factor, the dot product, the general form and the negative distance learn faster than matched at the common rate":
        "学习率除以各自的因子后，点积、一般形式和负距离都比在共同学习率下匹配时学得更快",
    "with ten times the learning rate for its scale, the cosine with a learned scale reaches the threshold over 40 steps sooner":
        "缩放因子的学习率加到十倍后，带可学习缩放的余弦达到阈值的步数提前 40 步以上",
    "with ten times the learning rate for its scale, the cosine with a learned scale reaches the threshold within 30 steps of the dot product":
        "缩放因子的学习率加到十倍后，带可学习缩放的余弦达到阈值的步数与点积相差不到 30 步",
    "the negative distance and the general form reach the threshold within 30 steps of the dot product, on average":
        "负距离和一般形式达到阈值的平均步数与点积相差不到 30 步",
    "the ceiling search's starts agree on the best geometry (within 0.005)":
        "上限搜索的各个起点得到的最佳几何一致（相差不到 0.005）",
    "the best geometry puts about half the bound on the match (0.4-0.6 of it)":
        "最佳几何放在匹配项上的权重约为上界的一半（0.4-0.6 倍）",
    "no trained cosine beats the best geometry found":
        "没有哪个训练过的余弦模型超过找到的最佳几何",
    "the trained cosines come within 20 % of the best geometry":
        "训练过的余弦模型达到最佳几何的 80% 以上",
    "a larger learning rate helps the plain cosine a little, never past 0.75":
        "更大的学习率对普通余弦稍有帮助，但从未超过 0.75",
    "a fixed scale factor lets the cosine learn the task (over 0.95 in every seed)":
        "固定的缩放因子让余弦学会了任务（每个种子都高于 0.95）",
    "the scaled cosine at the small learning rate beats the plain cosine at the large one by over 0.15: the bound, not the step size":
        "小学习率下缩放过的余弦比大学习率下的普通余弦高出 0.15 以上：是上界的问题，不是步长的问题",
    "the cosine with a learned scale, from the plain cosine's start, learns the task (over 0.95 in every seed)":
        "从普通余弦的起点出发、带可学习缩放的余弦学会了任务（每个种子都高于 0.95）",
    "at large d_k additive scoring beats the unscaled dot product in every seed":
        "在 d_k 很大时，加性打分在每个种子上都胜过不缩放的点积",
    "at large d_k the unscaled dot product reaches the threshold in no seed":
        "在 d_k 很大时，不缩放的点积在任何种子上都达不到阈值",
    "at large d_k the scaled dot product and additive scoring both exceed 0.9 in every seed":
        "在 d_k 很大时，缩放的点积和加性打分在每个种子上都超过 0.9",
    "the unscaled dot product starts with over five times the spread of additive scoring and the scaled dot product":
        "不缩放的点积起始时的分数离散程度是加性打分和缩放的点积的五倍以上",
}
