"""The Chinese of the claims of chapter 5's pages and lab (see :mod:`helpers.claim_text`)."""

STATEMENTS_ZH: dict[str, str] = {
    # book/05-variants/01-self-cross.md
    "every seed learns to reverse whole sequences (over 95 %)":
        "每个种子都学会了反转整个序列（准确率高于 95%）",
    "in every seed some cross-attention head puts over three times the uniform weight on the aligned position":
        "每个种子都有一个交叉注意力头在对齐位置上的权重超过均匀权重的三倍",
    "no encoder self-attention head is as aligned as the best cross-attention head":
        "没有哪个编码器自注意力头像最好的交叉注意力头那样对齐",
    # book/05-variants/02-masks.md
    "on held-out sequences the masked model's loss is at the floor (over 0.98 of it) and the unmasked one's far below it":
        "在留出序列上，带掩码模型的损失停在下限上（不低于其 0.98 倍），不带掩码模型的损失则远低于下限",
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
    "the recurrent step of linear attention does not grow with n (under three times the first position's time)":
        "线性注意力的循环步不随 n 增长（不到第一个位置用时的三倍）",
    "at the last position the KV-cache step is over five times slower than the recurrent step":
        "在最后一个位置，键值缓存的一步比循环的一步慢五倍以上",
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
    "two window layers and one layer with a global token stay near chance on the relay task":
        "在接力任务上，两层窗口和一层带全局词元的注意力都接近随机水平",
    "two layers with a global token solve the relay task (over 0.9 in every seed)":
        "两层带全局词元的注意力解决了接力任务（每个种子都高于 0.9）",
    # book/05-variants/03b-efficient-loss.md (the claims of 5.3 that moved with it stay above)
    "on average over the seeds, Performer learns the far lookup better than linear attention":
        "对各种子取平均，Performer 学远处查找学得比线性注意力好",
    "with unit-variance scores more features lower Performer's mean error, but by under a factor of 2 from m = 16 to 1024":
        "分数方差为 1 时，更多的特征会降低 Performer 的平均误差，但从 m = 16 到 1024 降低不到一半",
    "with unit-variance scores Performer is no better than averaging even at m = 1024":
        "分数方差为 1 时，即使 m = 1024，Performer 也不比简单平均好",
    "with small scores Performer's error falls roughly like m^-1/2 (slope under -0.3, under 0.7 at the most features)":
        "分数较小时，Performer 的误差大致按 m^-1/2 下降（斜率低于 -0.3，特征最多时低于 0.7）",
    # book/05-variants/04-vision.md
    "every CBAM run on the marked task either solves it (over 75 %) or never leaves chance":
        "在带标记的任务上，每一次 CBAM 运行要么解决了任务（超过 75%），要么始终停在随机水平",
    "every CBAM run that solved the marked task has an input map that tells the marked object from the other one (over 65 % of images)":
        "每一次解决了带标记任务的 CBAM 运行，其输入注意力图都能把带标记的物体和另一个物体区分开（超过 65% 的图像）",
    "at initialisation the two CBAM modules together pass under a fifth of the signal's spread":
        "初始化时，两个 CBAM 模块合起来传下去的信号离散度不到五分之一",
    "every plain network trains on the tasks it can solve (the one-object task; the marked one with the wide convolution)":
        "每个普通网络在它能解决的任务上都训练得起来（单物体任务；以及带宽卷积时的带标记任务）",
    "SE's gates barely move between images (spread under 0.06, and below the informative-decoy gap in every seed)":
        "SE 的门控在不同图像之间几乎不变（离散度低于 0.06，并且在每个种子里都小于有信息通道与诱饵通道之间的差距）",
    "in every seed SE's gate opens the informative channels wider than the decoys (by over 0.04)":
        "每个种子里，SE 的门控对有信息的通道都比对诱饵通道开得更大（高出 0.04 以上）",
    "the plain CNN's first layer also weights the informative channels over 1.5 times the decoys, in every seed":
        "在每个种子里，普通 CNN 的第一层同样给有信息的通道超过诱饵通道 1.5 倍的权重",
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
    "the single-object task is solvable without locating anything (mean over 0.7)":
        "单物体任务无需定位也能解决（平均高于 0.7）",
}
