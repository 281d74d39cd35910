"""The Chinese of the claims of chapter 4's pages and lab (see :mod:`helpers.claim_text`)."""

STATEMENTS_ZH: dict[str, str] = {
    # book/04-multihead/index.md
    "with 64 heads the readable path takes over five times as long as with one":
        "64 个头时，可读实现的用时是一个头时的五倍以上",
    "with 64 heads even the fused kernel takes over twice as long as with one":
        "64 个头时，即使是融合内核，用时也是一个头时的两倍以上",
    "the trained heads are position-only (their content part changes R² by under 0.01)":
        "训练出的头只看位置（其内容部分对 R² 的影响小于 0.01）",
    "with fewer heads than offsets no seed passes its ceiling, and none fits (R² under 0.95)":
        "头比偏移少时，没有哪个种子超过其上限，也没有一个拟合（R² 低于 0.95）",
    "with one head per offset every seed fits (R² over 0.97)":
        "每个偏移一个头时，每个种子都拟合了（R² 高于 0.97）",
    "the single head puts most of its weight on the task's offsets (over 0.7)":
        "单个头把大部分权重放在任务的偏移上（超过 0.7）",
    "the heads of H = 3 do not take one offset each (on average the favourite holds under 0.8)":
        "H = 3 的头并不是一个头管一个偏移（最偏爱的偏移平均占不到 0.8）",
    "the maps alone account for the scores for H = 1 and H = 3 (within 0.03 of R²)":
        "对 H = 1 和 H = 3，仅注意力图就能解释得分（R² 相差不到 0.03）",
    "one head fits the same rule at every offset (R² over 0.95) but not different rules":
        "一个头能拟合所有偏移都相同的规则（R² 高于 0.95），却拟合不了不同的规则",
    "the weight left off the offsets accounts for the shortfall (over 0.05 off, within 0.005 of R²)":
        "落在偏移之外的权重解释了不足的部分（超过 0.05，R² 相差不到 0.005）",
    "the filter needs several heads: size-1 heads average under 0.9 and four heads exceed it in every seed":
        "滤波任务需要多个头：大小为 1 的头平均低于 0.9，四个头在每个种子上都超过它",
    "the lookup needs head size: one wide head exceeds 0.95 in every seed and 16 size-1 heads fall over 0.1 below it":
        "查找任务需要头的维度：一个宽头在每个种子上都高于 0.95，16 个大小为 1 的头比它低 0.1 以上",
    "heads of size 2 still read the right value (over 0.9 in every seed)":
        "大小为 2 的头仍能读出正确的值（每个种子都高于 0.9）",
    "the heads of the run shown mix the offsets (their favourite holds under 0.8 on average)":
        "所示运行中的头混合了多个偏移（最偏爱的偏移平均占不到 0.8）",
    "the heads look at the three offsets (over half their weight; uniform would be a quarter)":
        "这些头看向三个偏移（超过一半的权重；均匀时只有四分之一）",
    "no head keeps to one offset on average (purity under 0.8)":
        "平均而言没有哪个头只看一个偏移（纯度低于 0.8）",
    "every head adds the same background (its second singular value under 5 % of the first)":
        "每个头都加上同一个背景（第二奇异值不到第一奇异值的 5%）",
    "no head is free and at least one is essential (every removal costs over 0.05, one over 0.3)":
        "没有哪个头可以白白去掉，且至少有一个是必不可少的（每次移除损失超过 0.05，其中一个超过 0.3）",
    "removing a head costs over 50 times what its gradient slope predicts":
        "移除一个头的代价是其梯度斜率所预测的 50 倍以上",
    "the slopes order the heads much as the removals do (mean rank correlation over 0.5)":
        "梯度斜率给各头的排序与移除的结果大体一致（平均秩相关高于 0.5）",
    "no set of two heads can be removed for free, whatever the order":
        "无论按什么顺序，都没有哪两个头可以白白去掉",
    "with no head left nothing is explained (R² under 0.05)":
        "一个头都不剩时，什么都解释不了（R² 低于 0.05）",
    "after one removal the gradient score keeps most of the oracle's advantage over a random order (over half)":
        "移除一个头后，梯度分数保住了先知相对随机顺序的大部分优势（超过一半）",
    "over the whole pruning the gradient score falls behind the oracle (by over 0.05 of R² on average)":
        "在整个剪枝过程中，梯度分数落后于先知（R² 平均落后 0.05 以上）",
    "for the first two removals the gradient score beats a random order":
        "前两次移除时，梯度分数胜过随机顺序",
    "the eight heads share the work as the four of section 5 do: each mixes the offsets over a shared background":
        "八个头像第 5 节的四个头一样分担工作：每个头都在一个共有的背景上混合多个偏移",
    "every head count solves the task (R² over 0.97 in every seed)":
        "每种头数都解决了任务（每个种子的 R² 都高于 0.97）",
    "the bad head does not heal onto the task's offset (under 0.2 of its weight there) and the other heads "
    "carry the task (over 0.95 without it)":
        "坏头没有自愈到任务的偏移上（那里的权重不到 0.2），其他头承担了任务（去掉它后仍高于 0.95）",
    "with one head the bad head is the layer: in most seeds R² stays under 0.1":
        "只有一个头时，坏头就是整层：大多数种子的 R² 保持在 0.1 以下",
    "with four or eight heads the model trains around the bad head (R² over 0.98)":
        "有四个或八个头时，模型绕开坏头完成训练（R² 高于 0.98）",
    "with one head, breaking it leaves nothing (R² under 0.1)":
        "只有一个头时，破坏它就什么都不剩（R² 低于 0.1）",
    "with eight heads a broken head costs little on average (R² over 0.65)":
        "有八个头时，破坏一个头平均损失不大（R² 高于 0.65）",
    "with eight heads not every head is harmless to break (some R² under 0.8)":
        "有八个头时，并非每个头都能无害地破坏（有的 R² 低于 0.8）",
    "with four or eight heads the worst broken head costs far more than the average one (over 1.5 times)":
        "有四个或八个头时，最坏的被破坏头的代价远高于平均（超过 1.5 倍）",
    "50 steps of fine-tuning repair the worst break with four or eight heads (R² over 0.95)":
        "对四个或八个头，50 步微调就能修复最严重的破坏（R² 高于 0.95）",
    "50 steps do not repair a broken single head (R² under 0.9), no better than 50 steps train a fresh one "
    "(within 0.1)":
        "50 步微调修复不了被破坏的单个头（R² 低于 0.9），并不比从零训练一个新头 50 步更好（相差不到 0.1）",
    "all-MiniLM-L6-v2 has previous-token heads (over 0.8 on the previous token)":
        "all-MiniLM-L6-v2 中有前一词元头（超过 0.8 的权重在前一个词元上）",
    "at least a quarter of the heads of all-MiniLM-L6-v2 park on [CLS] (over half their weight)":
        "all-MiniLM-L6-v2 至少四分之一的头停靠在 [CLS] 上（超过一半的权重）",
    "no head of all-MiniLM-L6-v2 puts 30 % of its weight on [SEP] in these sentences":
        "在这些句子中，all-MiniLM-L6-v2 没有哪个头把 30% 的权重放在 [SEP] 上",
    "the heads range from sharp to nearly uniform (normalised entropy spread over 0.5)":
        "各个头从尖锐到近乎均匀（归一化熵的范围超过 0.5）",
    "every paraphrase is its sentence's nearest, in every fold":
        "在每一折中，每个释义都是其原句的最近邻",
    "no single head costs a tenth of the margin":
        "没有哪个头的代价达到间隔的十分之一",
    "no removal costs a single paraphrase its place":
        "没有哪次移除使任何一个释义失去其最近邻的位置",
    "more heads lower the margin in all three folds than coin flips would":
        "在所有三折中都降低间隔的头比抛硬币预期的多",
    "the habits of the map barely predict a head's effect (rank correlations under 0.25)":
        "注意力图的习惯几乎预测不了一个头的作用（秩相关低于 0.25）",
    "a [CLS]-parking head is among the five costliest":
        "最昂贵的五个头中有一个停靠在 [CLS] 上",
    "a previous-token head is among the five costliest":
        "最昂贵的五个头中有一个前一词元头",
    "some removals raise the margin":
        "有些移除反而提高了间隔",
}
