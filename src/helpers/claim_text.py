"""The Chinese of every claim the book makes (:func:`helpers.claims.claim`), keyed by its English sentence.

A claim's English sentence sits in the page's code, where it guards the prose; its Chinese sits here, so the
code cells of both editions stay the same. ``tests/test_claims.py`` checks that every claim of the English
pages and labs has an entry and that no entry is left without its claim. Each Chinese sentence follows
"本书构建时发现" and ends without a full stop, as its English follows "The book found that".
"""

from __future__ import annotations

__all__ = ["STATEMENTS_ZH"]

STATEMENTS_ZH: dict[str, str] = {
    # book/01-bottleneck/index.md
    "without attention both state sizes fall below the breaking accuracy within the lengths tried":
        "没有注意力时，两种状态大小都会在所试的长度内跌破断裂准确率",
    "a bigger state breaks at a longer source":
        "更大的状态在更长的源序列上才断裂",
    "with attention and the big state every seed stays above 90 % at the longest length":
        "有注意力且状态较大时，每个种子在最长长度上都保持在 90% 以上",
    "without attention every seed is far below half at the longest length (under 0.35)":
        "没有注意力时，每个种子在最长长度上都远低于一半（低于 0.35）",
    "attention beats no attention at the longest length on every seed":
        "在最长长度上，有注意力的模型在每个种子上都胜过没有注意力的",
    "without attention the accuracy falls at every step in length":
        "没有注意力时，准确率随长度每一步都在下降",
    "4x training without attention stays below attention at the longest length, on every seed":
        "没有注意力时训练 4 倍步数，在最长长度上仍在每个种子上低于有注意力的模型",
    "with 4x training the curve without attention still falls with length":
        "训练 4 倍步数后，没有注意力的曲线仍随长度下降",
    "with 4x training the model without attention is still far below half at the longest length":
        "训练 4 倍步数后，没有注意力的模型在最长长度上仍远低于一半",
    "4x training helps less at the longest length than at length 10":
        "训练 4 倍步数在最长长度上的帮助小于在长度 10 上的",
    "4x training moves the fall-off to longer sources":
        "训练 4 倍步数把准确率下跌的位置推向更长的源序列",
    "most of the alignment's weight sits on a neighbour of the anti-diagonal":
        "对齐的大部分权重落在反对角线的相邻位置上",
    "over 80 % of the weight sits within one position of the symbol the decoder writes":
        "超过 80% 的权重落在解码器所写符号的一个位置之内",
    "a neighbouring encoder state still carries symbol j (probe accuracy over 0.5)":
        "相邻的编码器状态仍然携带符号 j（探针准确率高于 0.5）",
    "an older symbol is harder to read out of a state":
        "越早的符号越难从状态中读出",
    "the focus forms during training (under 0.4 at the start, over 0.4 at the end)":
        "聚焦是在训练中形成的（开始时低于 0.4，结束时高于 0.4）",
    "with the small state the focus drifts off the anti-diagonal at long lengths (by over 0.15)":
        "状态较小时，在长序列上聚焦偏离反对角线（超过 0.15）",
    "with the big state the focus holds better at the longest length (by over 0.15)":
        "状态较大时，在最长长度上聚焦保持得更好（高出 0.15 以上）",
    "the GRU's gradient falls geometrically with distance while attention's stays flat":
        "GRU 的梯度随距离按几何级数下降，而注意力的保持平稳",
    "the GRU's time grows over tenfold from the shortest to the longest sequence":
        "从最短到最长的序列，GRU 的用时增长十倍以上",
    "from 64 tokens on, attention's time grows faster with n than the GRU's":
        "从 64 个词元起，注意力的用时随 n 增长得比 GRU 快",
    "the GRU's time grows about in proportion to n (log-log slope 0.6-1.4)":
        "GRU 的用时大约与 n 成正比（对数坐标下斜率 0.6-1.4）",
    "every output depends on the symbol it copies (occluding it changes the output by over 0.5)":
        "每个输出都依赖它所复制的符号（遮挡该符号使输出变化超过 0.5）",
    "most of the weight sits elsewhere than on the copied symbol (under half on average)":
        "大部分权重并不落在被复制的符号上（平均不到一半）",
    "under teacher forcing large effects appear without weight, all on symbols already written":
        "在强制教学下，没有权重也会出现大的影响，且全部在已经写出的符号上",
    "free-running, the outputs barely depend on the symbols already written (over five times less than under teacher forcing)":
        "自由生成时，输出几乎不依赖已经写出的符号（比强制教学时小五倍以上）",
    "teacher forcing on a consistent prefix removes those effects too":
        "在一致的前缀上做强制教学，这些影响也消失了",
    "teacher forcing on a consistent prefix leaves fewer hidden effects than on the model's own outputs":
        "在一致的前缀上做强制教学，隐藏的影响比在模型自己的输出上少",
    # book/02-dot-product/index.md
    "a longer query makes the dot product, the general form and the negative distance put over 0.1 more weight on the best key":
        "查询变长时，点积、一般形式和负距离放在最佳键上的权重增加超过 0.1",
    "every score built on one or two matrix products costs under four times the dot product at the largest size":
        "在最大的尺寸上，基于一两次矩阵乘法的分数函数开销都不到点积的四倍",
    "additive scoring costs over four times as much time, relative to the dot product, as its operation count predicts":
        "相对点积，加性打分花费的时间超过其运算次数所预测的四倍",
    "additive scoring and the Python loops are over 20 times slower than the dot product":
        "加性打分和 Python 循环比点积慢 20 倍以上",
    "even the loop over queries is over twice as slow as one matrix product at the largest size":
        "在最大的尺寸上，即使按查询循环也比一次矩阵乘法慢两倍以上",
    "the two projections take under 1 % of additive scoring's time":
        "两次投影占加性打分用时的不到 1%",
    "the three passes over the (L, S, A) tensor take over 90 % of additive scoring's time":
        "对 (L, S, A) 张量的三遍计算占加性打分用时的 90% 以上",
    "the steps timed apart add up to about the whole call (0.6-1.6 times)":
        "分开计时的各步加起来约等于整个调用的用时（0.6-1.6 倍）",
    "the model's query vectors start with lengths between 1 and 5":
        "模型的查询向量初始长度在 1 到 5 之间",
    "only the cosine's gradient grows over a hundredfold as the vectors shrink":
        "只有余弦的梯度会随向量变短而增长一百倍以上",
    "the plain cosine starts at about the dot product's spread (0.5-1.5 times)":
        "普通余弦的初始离散程度约等于点积的（0.5-1.5 倍）",
    "additive scoring needs over 30 more steps than the dot product to reach the threshold":
        "加性打分达到阈值所需的步数比点积多 30 步以上",
    "the plain cosine never reaches the threshold and stays under 0.6 in every seed":
        "普通余弦在每个种子中都达不到阈值，且停留在 0.6 以下",
    "the plain cosine still learns something: over twice chance in every seed":
        "普通余弦仍学到了一些东西：每个种子都超过随机水平的两倍",
    "the learned temperature grows to over 1.5 in every seed":
        "在每个种子中，学到的温度都增长到 1.5 以上",
    "the dot product, negative distance, general form, additive scoring and the cosine with a learned scale reach the threshold in every seed (over 0.95)":
        "点积、负距离、一般形式、加性打分和带可学习缩放的余弦在每个种子中都达到阈值（高于 0.95）",
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
    "the unscaled dot product starts over five times hotter than additive scoring and the scaled dot product":
        "不缩放的点积起始时比加性打分和缩放的点积热五倍以上",
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
    # book/04-multihead/index.md
    "with 64 heads the readable path takes over five times as long as with one":
        "64 个头时，可读实现的用时是一个头时的五倍以上",
    "with 64 heads even the fused kernel takes over twice as long as with one":
        "64 个头时，即使是融合内核，用时也是一个头时的两倍以上",
    "with one head one seed reaches its ceiling and another ends over 0.05 below it":
        "只有一个头时，有的种子达到了上限，有的比上限低 0.05 以上",
    "the trained heads are position-only (their content part changes R² by under 0.005)":
        "训练出的头只看位置（其内容部分对 R² 的影响小于 0.005）",
    "with fewer heads than offsets no seed passes its ceiling, and none fits (R² under 0.9)":
        "头比偏移少时，没有哪个种子超过其上限，也没有一个拟合（R² 低于 0.9）",
    "with one head per offset every seed fits (R² over 0.97)":
        "每个偏移一个头时，每个种子都拟合了（R² 高于 0.97）",
    "in every seed the single head splits its weight, with at least 10 % on a second offset":
        "在每个种子中，单个头都把权重分开，至少 10% 落在第二个偏移上",
    "no head of H = 3 keeps to one offset (its favourite under 0.8)":
        "H = 3 时没有哪个头只看一个偏移（最偏爱的偏移低于 0.8）",
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
    "every head of the run shown mixes the offsets (none over 0.8 on one)":
        "所示运行中的每个头都混合了多个偏移（没有一个在某个偏移上超过 0.8）",
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
    "the slopes order the heads much as the removals do (rank correlation over 0.6)":
        "梯度斜率给各头的排序与移除的结果大体一致（秩相关高于 0.6）",
    "no set of two heads can be removed for free, whatever the order":
        "无论按什么顺序，都没有哪两个头可以白白去掉",
    "with no head left nothing is explained (R² under 0.05)":
        "一个头都不剩时，什么都解释不了（R² 低于 0.05）",
    "for the first two removals the gradient score follows the oracle within 0.05":
        "前两次移除时，梯度分数与预言者相差不到 0.05",
    "after four removals the gradient score falls over 0.1 behind the oracle":
        "移除四个头之后，梯度分数比预言者落后 0.1 以上",
    "for the first two removals the gradient score beats a random order by over 0.1":
        "前两次移除时，梯度分数比随机顺序高出 0.1 以上",
    "every head count solves the task (R² over 0.97 in every seed)":
        "每种头数都解决了任务（每个种子的 R² 都高于 0.97）",
    "the bad head stays saturated (over 0.5) and the other heads carry the task (over 0.95 without it)":
        "坏头保持饱和（超过 0.5），其他头承担了任务（去掉它后仍高于 0.95）",
    "with one head the bad head is the layer: R² stays under 0.1":
        "只有一个头时，坏头就是整层：R² 保持在 0.1 以下",
    "with four or eight heads the model trains around the bad head (R² over 0.99)":
        "有四个或八个头时，模型绕开坏头完成训练（R² 高于 0.99）",
    "with one head, breaking it leaves nothing (R² under 0.1)":
        "只有一个头时，破坏它就什么都不剩（R² 低于 0.1）",
    "with eight heads a broken head costs little on average (R² over 0.7)":
        "有八个头时，破坏一个头平均损失不大（R² 高于 0.7）",
    "with eight heads not every head is harmless to break (some R² under 0.8)":
        "有八个头时，并非每个头都能无害地破坏（有的 R² 低于 0.8）",
    "with four or eight heads the worst broken head costs far more than the average one (by over 0.5)":
        "有四个或八个头时，最坏的被破坏头的代价远高于平均（高出 0.5 以上）",
    "50 steps of fine-tuning repair the worst break with four or eight heads (R² over 0.95)":
        "对四个或八个头，50 步微调就能修复最严重的破坏（R² 高于 0.95）",
    "50 steps do not repair a broken single head (R² under 0.9)":
        "50 步微调修复不了被破坏的单个头（R² 低于 0.9）",
    "all-MiniLM-L6-v2 has previous-token heads (over 0.8 on the previous token)":
        "all-MiniLM-L6-v2 中有前一词元头（超过 0.8 的权重在前一个词元上）",
    "some heads of all-MiniLM-L6-v2 park on [CLS] (over half their weight)":
        "all-MiniLM-L6-v2 的一些头停靠在 [CLS] 上（超过一半的权重）",
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
    # book/05-variants/01-self-cross.md
    "every seed learns to reverse whole sequences (over 95 %)":
        "每个种子都学会了反转整个序列（准确率高于 95%）",
    "in every seed some cross-attention head puts over three times the uniform weight on the aligned position":
        "每个种子都有一个交叉注意力头在对齐位置上的权重超过均匀权重的三倍",
    "in some seed no single head follows the alignment cleanly (its best head below 0.9)":
        "至少有一个种子里没有哪个头干净地跟随对齐（最好的头低于 0.9）",
    "no encoder self-attention head is as aligned as the best cross-attention head":
        "没有哪个编码器自注意力头像最好的交叉注意力头那样对齐",
    # book/05-variants/02-masks.md
    "with the causal mask a change to the future moves no past output at all, and without it past outputs move by over 1":
        "有因果掩码时，改动未来不会改变任何过去的输出；没有掩码时，过去的输出变化超过 1",
    "without the mask every seed's training loss falls below half of what a model that cannot peek can reach":
        "没有掩码时，每个种子的训练损失都低于不能偷看的模型所能达到的下限的一半",
    "with the causal mask every seed's loss stays at the floor a model that cannot peek can reach (over 0.9 of it)":
        "有因果掩码时，每个种子的损失都停在不能偷看的模型所能达到的下限（不低于其 0.9 倍）",
    "generation works with the causal mask (over 0.9 in every seed) and fails without it (under 0.2)":
        "有因果掩码时生成有效（每个种子都高于 0.9），没有掩码时失败（低于 0.2）",
    "with the padding bug the padded queries change the real outputs (by over 0.1) and the loss":
        "有填充错误时，填充的查询会改变真实输出（超过 0.1）和损失",
    # book/05-variants/03-efficient.md
    "the KV-cache step grows with n: over five times slower at the last position than at the first":
        "KV 缓存的每一步随 n 增长：最后一个位置比第一个慢五倍以上",
    "the recurrent step of linear attention does not grow with n (under three times the first position's time)":
        "线性注意力的循环步不随 n 增长（不到第一个位置用时的三倍）",
    "at the last position the KV-cache step is over five times slower than the recurrent step":
        "在最后一个位置，KV 缓存的一步比循环的一步慢五倍以上",
    "dense attention's memory and time grow quadratically (exponents over 1.8 and 1.7)":
        "稠密注意力的内存和时间按二次增长（指数分别超过 1.8 和 1.7）",
    "the hierarchical attention's memory exponent lies between the window's and dense attention's (0.2 from each)":
        "层次注意力的内存指数介于滑动窗口和稠密注意力之间（与两者各相差 0.2 以上）",
    "the exact chunked attention's memory grows about linearly (exponent under 1.3) while its time stays near quadratic (over 1.5)":
        "精确的分块注意力内存近似线性增长（指数低于 1.3），时间仍接近二次（高于 1.5）",
    "at 4096 tokens the sliding window is over twice as fast as dense attention":
        "在 4096 个词元时，滑动窗口比稠密注意力快两倍以上",
    "at 4096 tokens the exact chunked loop beats the written-out dense product":
        "在 4096 个词元时，精确的分块循环比完整写出的稠密乘积快",
    "the window, BigBird, linear attention, Performer and Linformer grow about linearly in memory (under 1.3) and far below dense in time (0.4 less)":
        "滑动窗口、BigBird、线性注意力、Performer 和 Linformer 的内存近似线性增长（低于 1.3），时间指数比稠密注意力低 0.4 以上",
    "the measured time of the window crosses dense attention's much later than the FLOP count does (past three times n = 63)":
        "滑动窗口的实测时间与稠密注意力的交叉点比按 FLOP 计数的晚得多（超过 n = 63 的三倍）",
    "on random inputs the window and the hierarchical attention are worse than the plain average (error over 1)":
        "在随机输入上，滑动窗口和层次注意力比简单平均还差（误差超过 1）",
    "on this near-uniform attention linear attention's error is below Performer's":
        "在这种近乎均匀的注意力上，线性注意力的误差低于 Performer",
    "the exact output spreads its weight over 100-300 keys, far from one":
        "精确输出的权重分散在 100-300 个键上，远不止一个",
    "Performer's kernel entries average to exp(q·k): no bias beyond 1.2 standard errors":
        "Performer 的核元素平均等于 exp(q·k)：偏差不超过 1.2 个标准误",
    "Performer's normalised output is biased (over 10 standard errors)":
        "Performer 归一化后的输出是有偏的（超过 10 个标准误）",
    "Lemma 2 tracks each pair's error far better than |q|^2 + |k|^2 does (under 0.6 of its spread)":
        "引理 2 对每一对误差的刻画远好于 |q|^2 + |k|^2（离散程度不到后者的 0.6）",
    "Lemma 2's variance matches the measured one (ratio 0.7-1.3)":
        "引理 2 给出的方差与实测一致（比值 0.7-1.3）",
    "with small scores Performer's error falls roughly like F^-1/2 (slope under -0.3, under 0.7 at the most features)":
        "分数较小时，Performer 的误差大致按 F^-1/2 下降（斜率低于 -0.3，特征最多时低于 0.7）",
    "with unit-variance scores Performer is no better than averaging even at F = 1024":
        "分数方差为 1 时，即使 F = 1024，Performer 也不比简单平均好",
    "with unit-variance scores more features stop helping Performer (the last point above the best)":
        "分数方差为 1 时，更多特征不再帮助 Performer（最后一点高于最好的一点）",
    "with unit-variance scores more features improve Performer by under a factor of 2":
        "分数方差为 1 时，更多特征对 Performer 的改进不到 2 倍",
    "most of Linformer's k < n error is the inflated scale (the unit-length rows over 1.5 times better)":
        "Linformer 在 k < n 时的误差大部分来自被放大的尺度（单位长度的行好 1.5 倍以上）",
    "no random projection beats the plain average (error over 1)":
        "没有哪个随机投影比简单平均好（误差超过 1）",
    "independent E and F behave like a shared projection (within 20 %)":
        "独立的 E 和 F 表现得和共享投影一样（相差不到 20%）",
    "on the near lookup the window is as good as dense attention (over 0.95 in every seed)":
        "在近距离查找上，滑动窗口和稠密注意力一样好（每个种子都高于 0.95）",
    "linear attention does the near lookup well (mean over 0.7) and better than the far one by over 0.2":
        "线性注意力在近距离查找上表现不错（平均高于 0.7），比远距离查找高 0.2 以上",
    "on the far lookup the window fails (mean under 0.5) while window + global and dense attention succeed (over 0.95 in every seed)":
        "在远距离查找上，滑动窗口失败（平均低于 0.5），而窗口加全局词元和稠密注意力成功（每个种子都高于 0.95）",
    "on the far lookup the window does no better than answering only the queries in its view":
        "在远距离查找上，滑动窗口并不比只答对视野内的查询更好",
    "on the far lookup linear attention and Performer fall behind dense attention (by over 0.2 and 0.1)":
        "在远距离查找上，线性注意力和 Performer 落后于稠密注意力（分别超过 0.2 和 0.1）",
    "trained, Performer beats linear attention on the far lookup in every seed":
        "训练后，Performer 在远距离查找上每个种子都胜过线性注意力",
    "two window layers and one layer with a global token stay near chance on the relay task":
        "在接力任务上，两层窗口和一层带全局词元的注意力都接近随机水平",
    "two layers with a global token solve the relay task (over 0.9 in every seed)":
        "两层带全局词元的注意力解决了接力任务（每个种子都高于 0.9）",
    # book/05-variants/04-vision.md
    "in every seed SE's gate opens the informative channels over 0.1 more than the decoys":
        "每个种子里，SE 的门控对有信息的通道的开度都比诱饵通道高出 0.1 以上",
    "the plain CNN's first layer also weights the informative channels over 1.5 times the decoys, in every seed":
        "在每个种子里，普通 CNN 的第一层同样给有信息的通道超过诱饵通道 1.5 倍的权重",
    "SE's gates barely move between images (their spread is under a third of the informative-decoy gap)":
        "SE 的门控在不同图像之间几乎不变（其离散程度不到有信息通道与诱饵通道差距的三分之一）",
    "SE and the plain CNN reach the same mean accuracy within 0.02":
        "SE 与普通 CNN 的平均准确率相差不到 0.02",
    "the SE model and the plain CNN have the same number of parameters within 5 %":
        "SE 模型与普通 CNN 的参数量相差不到 5%",
    "one wide (11 x 11) convolution also solves the marked-object task, over 90 % in every seed":
        "一个宽的（11 x 11）卷积同样能解决带标记物体的任务，每个种子的准确率都高于 90%",
    "the wide convolution needs over twice CBAM's parameters":
        "宽卷积所需的参数是 CBAM 的两倍以上",
    "without a spatial map the marked-object task stays near chance (mean under 0.6)":
        "没有空间注意力图时，带标记物体的任务接近随机水平（平均低于 0.6）",
    "with CBAM's spatial map the marked-object task is solved, over 90 % in every seed":
        "有了 CBAM 的空间注意力图，带标记物体的任务被解决，每个种子都高于 90%",
    "the single-object task is solvable without locating anything (mean over 0.7)":
        "单物体任务无需定位也能解决（平均高于 0.7）",
    "CBAM raises the mean accuracy on the single-object task":
        "CBAM 提高了单物体任务的平均准确率",
    "the spatial map after the first convolution stays flat (range under 0.1)":
        "第一个卷积之后的空间注意力图保持平坦（范围小于 0.1）",
    "every seed's input map tells the marked object from the equally bright other one (over 70 % of images)":
        "每个种子的输入注意力图都能把带标记的物体和同样亮的另一个物体区分开（超过 70% 的图像）",
    "the seeds' input maps do not all favour the same object":
        "各个种子的输入注意力图并不都偏向同一个物体",
    # book/06-pitfalls/01-reading-maps.md
    "all-MiniLM-L6-v2 pools its sentence vector by the mean of the tokens, not by [CLS]":
        "all-MiniLM-L6-v2 用各词元的平均值汇聚句向量，而不是用 [CLS]",
    "in the untrained model every layer gives [CLS] and [SEP] about the uniform share 1/L (within 0.02)":
        "在未训练的模型中，每一层给 [CLS] 和 [SEP] 的权重都约等于均匀份额 1/L（相差不超过 0.02）",
    "from layer 1 on, the trained model gives [CLS] over four times the untrained model's largest share":
        "从第 1 层起，训练过的模型给 [CLS] 的权重超过未训练模型最大份额的四倍",
    "in layers 1-5 the trained model gives [SEP] less than the untrained baseline":
        "在第 1-5 层，训练过的模型给 [SEP] 的权重低于未训练的基线",
    "no layer makes [SEP] a sink (its share stays under 1.5 times the uniform share)":
        "没有哪一层把 [SEP] 变成汇点（它的份额始终低于均匀份额的 1.5 倍）",
    "only layer 0 gives [SEP] more than its untrained baseline":
        "只有第 0 层给 [SEP] 的权重高于未训练的基线",
    "in layers 1-5 [CLS]'s share by norm is less than half its share by weight":
        "在第 1-5 层，按范数计 [CLS] 的份额不到按权重计的一半",
    "every classifier solves the trigger task (over 98 % held-out accuracy)":
        "每个分类器都解决了触发词任务（留出集准确率高于 98%）",
    "raw attention misses the deciding token in most examples, in every seed":
        "在每个种子中，原始注意力在大多数样本里都没有指向决定性的词元",
    "rollout names the deciding token at least 0.3 more often than raw attention, on average over seeds":
        "按种子平均，注意力展开指出决定性词元的比例比原始注意力至少高 0.3",
    "occlusion names the deciding token at least 0.3 more often than raw attention, on average over seeds":
        "按种子平均，遮挡法指出决定性词元的比例比原始注意力至少高 0.3",
    "in a one-layer model the raw attention map names the trigger in over 90 % of examples, every seed":
        "在单层模型中，原始注意力图在超过 90% 的样本里指出触发词，每个种子都如此",
    "the one-layer model's map names the trigger at least 0.3 more often than the two-layer model's last map, every seed":
        "单层模型的注意力图指出触发词的比例比两层模型最后一层的图至少高 0.3，每个种子都如此",
    # book/06-pitfalls/02-training.md
    "at lr 0.003 every run of every setting trains":
        "学习率为 0.003 时，每种设置的每次运行都能训练",
    "at lr 0.01 at most a quarter of the runs fail":
        "学习率为 0.01 时，失败的运行不超过四分之一",
    "at lr 0.03 Post-LN fails in at least 10 of 12 seeds, with or without warm-up":
        "学习率为 0.03 时，无论加不加预热，Post-LN 在 12 个种子中至少有 10 个失败",
    "at lr 0.03 Pre-LN with warm-up trains in at least 8 of 12 seeds":
        "学习率为 0.03 时，加预热的 Pre-LN 在 12 个种子中至少有 8 个能训练",
    "at lr 0.03 Pre-LN without warm-up fails more often than with it and less often than Post-LN":
        "学习率为 0.03 时，不加预热的 Pre-LN 比加预热时失败得多，又比 Post-LN 失败得少",
    "Pre-LN with warm-up ends at 0.03 over three times above its loss at 0.01 (medians over seeds)":
        "加预热的 Pre-LN 在 0.03 下的最终损失是它在 0.01 下的三倍以上（按种子取中位数）",
    "at initialisation Post-LN's block gradients are over three times more uneven than Pre-LN's":
        "初始化时，Post-LN 各块梯度的不均匀程度是 Pre-LN 的三倍以上",
    "clipping does not rescue Post-LN at lr 0.03: every clipped seed still fails":
        "裁剪救不了学习率 0.03 下的 Post-LN：每个裁剪过的种子仍然失败",
    "every injected spike is over 50 times the clipping threshold":
        "每个注入的尖峰都超过裁剪阈值的 50 倍",
    "without clipping the spikes wreck every seed":
        "不裁剪时，尖峰毁掉了每个种子",
    "with clipping every spiked seed trains":
        "裁剪后，每个有尖峰的种子都能训练",
    "the low-entropy alarm fires in no healthy run":
        "低熵警报在任何一次健康的运行中都不响",
    "the low-entropy alarm fires in all collapsing runs but at most one":
        "低熵警报在坍缩的运行中至多漏掉一次",
    "the high-entropy alarm fires in every uniform run and in no other":
        "高熵警报在每个均匀注意力的运行中都响起，在其他运行中都不响",
    "entropy collapse leaves the loss above 1 and QK-norm at the same learning rate trains it below 0.3":
        "熵坍缩使损失停在 1 以上，而同样学习率下的 QK-norm 把它训练到 0.3 以下",
    "uniform attention leaves the loss high (over 0.5) while the baseline trains (under 0.1)":
        "均匀注意力使损失居高不下（超过 0.5），而基线能训练（低于 0.1）",
    "at lr 0.1 σReparam prevents the collapse in every seed and trains in some":
        "学习率为 0.1 时，σReparam 在每个种子上都防止了坍缩，并在部分种子上能训练",
    "at lr 0.01 σReparam trains (loss under 0.1 in every seed)":
        "学习率为 0.01 时，σReparam 能训练（每个种子的损失都低于 0.1）",
    # book/06-pitfalls/03-memory.md
    "doubling n multiplies the layer's forward peak by about four (3.6-4.4): quadratic":
        "n 加倍时，这一层前向计算的峰值内存约变为四倍（3.6-4.4）：二次增长",
    "the forward peak holds a fixed number of n x n matrices (the ratio changes by under 10 % in the last doubling)":
        "前向峰值内存里 n x n 矩阵的个数是固定的（最后一次加倍时比值变化不到 10%）",
    "the forward peak is between two and five n x n score matrices":
        "前向峰值内存相当于两到五个 n x n 的分数矩阵",
    "gradient checkpointing needs over two times less memory":
        "梯度检查点所需内存不到原来的一半",
    "gradient checkpointing costs more time, but less than double":
        "梯度检查点要多花时间，但不到两倍",
    "the materialised attention's memory grows as n^2 (3.6-4.4 a doubling) and the chunked one's as n (1.8-2.2)":
        "完整写出的注意力内存按 n^2 增长（每次加倍 3.6-4.4 倍），分块的按 n 增长（1.8-2.2 倍）",
    "at the largest n the chunked attention needs over eight times less memory":
        "在最大的 n 上，分块注意力所需内存不到完整写出的八分之一",
    "PyTorch's fused kernel is over five times faster than the materialised readable version":
        "PyTorch 的融合内核比完整写出的可读版本快五倍以上",
    "with gradients, the materialised attention's memory grows as n^2 (exponent 1.9-2.1)":
        "计算梯度时，完整写出的注意力内存按 n^2 增长（指数 1.9-2.1）",
    "autograd through the online softmax's loop is quadratic again (exponent 1.7-2.1)":
        "对在线 softmax 的循环做自动求导，内存又回到二次增长（指数 1.7-2.1）",
    "autograd through the online softmax nearly quadruples its memory in the last doubling":
        "对在线 softmax 做自动求导时，最后一次加倍内存几乎变为四倍",
    "the recomputing backward's memory grows as n (exponent 0.9-1.1)":
        "重新计算的反向传播内存按 n 增长（指数 0.9-1.1）",
    "the recomputing backward needs less than half of one n x n matrix at the largest n":
        "在最大的 n 上，重新计算的反向传播所需内存不到一个 n x n 矩阵的一半",
    "autograd through the online softmax needs as much as the materialised attention (over 0.7 of it, and over one n x n matrix)":
        "对在线 softmax 做自动求导所需内存与完整写出的注意力相当（超过其 0.7 倍，也超过一个 n x n 矩阵）",
    "the materialised attention with gradients needs more than one n x n matrix":
        "计算梯度时，完整写出的注意力需要的内存超过一个 n x n 矩阵",
    "under bfloat16 autocast the peak memory stays above 0.9 of float32's":
        "在 bfloat16 自动混合精度下，峰值内存仍高于 float32 的 0.9 倍",
    "bfloat16 attention stays within 0.05 of float32's output":
        "bfloat16 注意力的输出与 float32 相差不到 0.05",
    # book/06-pitfalls/04-decoding.md
    "with and without the cache greedy decoding gives the same tokens":
        "用缓存和不用缓存，贪心解码给出相同的词元",
    "recomputing the prefix grows over ten times faster with its length than a cached step does":
        "重新计算前缀的用时随长度增长的速度是缓存一步的十倍以上",
    "at the last position the cached step is over five times cheaper than recomputing":
        "在最后一个位置，缓存的一步比重新计算便宜五倍以上",
    "MQA's decoding step is over three times faster than MHA's":
        "MQA 的解码一步比 MHA 快三倍以上",
    "copying the key/value heads with repeat_kv is over three times slower than grouping them":
        "用 repeat_kv 复制键/值头比分组计算慢三倍以上",
    "PyTorch's kernel with enable_gqa takes under half the time of copying the heads":
        "PyTorch 启用 enable_gqa 的内核用时不到复制各头的一半",
    "trained from scratch, MHA, GQA-2 and MQA all solve the task (over 0.95 in every seed)":
        "从头训练时，MHA、GQA-2 和 MQA 都解决了任务（每个种子都高于 0.95）",
    "pooling the heads costs accuracy, more for MQA than for GQA-2":
        "合并各头会损失准确率，MQA 比 GQA-2 损失更多",
    "merging all heads into one costs every seed accuracy (under 0.9)":
        "把所有头合并成一个会使每个种子都损失准确率（低于 0.9）",
    "before uptraining, mean-pooling beats the first head, which beats random key/value heads":
        "在继续训练之前，平均合并胜过保留第一个头，后者又胜过随机的键/值头",
    "random key/value heads leave the model near chance (under 0.2)":
        "随机的键/值头使模型接近随机水平（低于 0.2）",
    "10 steps of uptraining restore what the conversion kept, not what it threw away (by over 0.05)":
        "继续训练 10 步能恢复转换保留下来的，而恢复不了被丢掉的（差距超过 0.05）",
    # book/06-pitfalls/05-position.md
    "learned positions and a causal mask each break permutation equivariance (output changes over 0.1)":
        "可学习的位置编码和因果掩码都会破坏置换等变性（输出变化超过 0.1）",
    "with learned positions the order task is solved in every seed (over 0.95) and without positions it stays far off (under 0.6)":
        "有可学习的位置编码时，顺序任务在每个种子上都被解决（高于 0.95），没有位置编码时远远不够（低于 0.6）",
    "inside the training length every encoding solves the task (over 0.85 on average)":
        "在训练长度内，每种位置编码都解决了任务（平均高于 0.85）",
    "without positions the model does worse inside the training length than with learned positions":
        "没有位置编码时，模型在训练长度之内的表现不如有可学习位置编码的",
    "past the training length the absolute encodings collapse (sinusoidal under 0.5, learned under 0.75)":
        "超出训练长度后，绝对位置编码崩溃（正弦低于 0.5，可学习的低于 0.75）",
    "past the training length ALiBi and T5's bias keep over 90 % of their accuracy":
        "超出训练长度后，ALiBi 和 T5 的偏置保持了 90% 以上的准确率",
    "RoPE degrades gradually past the training length":
        "超出训练长度后，RoPE 逐渐退化",
    "just past the training length RoPE is above both absolute encodings in every seed":
        "刚超出训练长度时，RoPE 在每个种子上都高于两种绝对位置编码",
    "far past the training length the seeds rank T5 above ALiBi above {none, learned, RoPE} above sinusoidal":
        "远超训练长度时，各种子的排序为 T5 高于 ALiBi，高于 {无、可学习、RoPE}，高于正弦",
    "far past the training length the seeds do not separate none, learned and RoPE":
        "远超训练长度时，各种子无法区分无位置编码、可学习编码和 RoPE",
    "RoPE recovers when it predicts from the last TRAIN_LEN - 1 tokens only (over 95 % of its inside accuracy, above every far seed)":
        "只用最后 TRAIN_LEN - 1 个词元预测时，RoPE 恢复了（达到训练长度内准确率的 95% 以上，高于所有远距离种子）",
    "in every seed the learned positions encode position mod 3, the rule's lag (cosine over 0.7 at lag 3, below 0 at lag 1)":
        "在每个种子中，学到的位置编码都编码了位置模 3，即规则的间隔（间隔 3 处余弦高于 0.7，间隔 1 处低于 0）",
    "the position rows never trained are unrelated to the trained ones and shorter":
        "从未训练过的位置行与训练过的无关，而且更短",
    # book/06-pitfalls/06-long-context.md
    "with no fine-tuning plain RoPE decays past the training length (over 0.3 below its accuracy inside)":
        "不做微调时，普通 RoPE 超出训练长度后准确率下降（比训练长度内低 0.3 以上）",
    "squeezing the fast pair (PI, the Llama 3.1 rule) breaks the task even inside the training length":
        "压缩最快的一对频率（PI、Llama 3.1 规则）即使在训练长度内也会破坏任务",
    "the NTK base and YaRN keep the task inside the training length (over 0.95 in every seed)":
        "NTK 基数和 YaRN 在训练长度内保持任务不受影响（每个种子都高于 0.95）",
    "with no fine-tuning neither the NTK base nor YaRN repairs the far positions (mean under 0.75)":
        "不做微调时，NTK 基数和 YaRN 都修复不了远处的位置（平均低于 0.75）",
    "with no fine-tuning the NTK base and YaRN score within plain RoPE's seed range far away":
        "不做微调时，NTK 基数和 YaRN 在远处的得分落在普通 RoPE 的种子范围之内",
    "after 50 steps at the long length every rule that keeps the fast pair holds to position 63 (over 0.95 in every seed)":
        "在长序列上微调 50 步后，每个保留最快频率对的规则都能撑到位置 63（每个种子都高于 0.95）",
    "after 50 steps the rules that squeeze the fast pair stay far below plain RoPE":
        "微调 50 步后，压缩最快频率对的规则仍远低于普通 RoPE",
    "from three layers on, the farthest input reached counts orders of magnitude less than the last (under 1 %)":
        "从三层起，所能到达的最远输入的影响比最后一个小几个数量级（不到 1%）",
    "in every seed layer 0 puts over four times the uniform weight on the first token":
        "在每个种子中，第 0 层放在第一个词元上的权重超过均匀权重的四倍",
    "in every seed the full cache fails past the training length (under 0.5) while a window copies (over 0.99)":
        "在每个种子中，完整缓存在超出训练长度后失败（低于 0.5），而窗口能复制（高于 0.99）",
    "in every seed a window with sinks has a lower loss than the window alone":
        "在每个种子中，带汇点的窗口损失都低于只有窗口的",
    "with any number of sinks the copy accuracy stays over 0.99":
        "无论有几个汇点，复制准确率都保持在 0.99 以上",
    "one sink is enough: the losses with 1 to 4 sinks differ by under 0.01":
        "一个汇点就够了：1 到 4 个汇点的损失相差不到 0.01",
    "the first column draws over four times any other key's weight, and one head puts over half its weight there":
        "第一列得到的权重是其他任何键的四倍以上，而且有一个头把一半以上的权重放在那里",
}
"""English sentence -> Chinese sentence."""
