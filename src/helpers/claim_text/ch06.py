"""The Chinese of the claims of chapter 6's pages and lab (see :mod:`helpers.claim_text`)."""

STATEMENTS_ZH: dict[str, str] = {
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
    "in a one-layer model the raw attention map names the trigger in over 90 % of examples, every seed":
        "在单层模型中，原始注意力图在超过 90% 的样本里指出触发词，每个种子都如此",
    "every classifier solves the trigger task (over 98 % held-out accuracy), and removing the trigger changes its answer in over 99 % of the examples":
        "每个分类器都解决了触发词任务（留出集准确率高于 98%），而且去掉触发词后，超过 99% 的样本答案随之改变",
    "raw attention names the deciding token in under 60 % of the examples in most seeds (at least 4 of 6)":
        "在大多数种子（6 个中至少 4 个）上，原始注意力指出决定性词元的样本不到 60%",
    "in most seeds (at least 4 of 6) the last map names the trigger in under half of the examples of at least one of the two trigger kinds":
        "在大多数种子（6 个中至少 4 个）上，对两种触发词中的至少一种，最后一层的注意力图在不到一半的样本里指出触发词",
    "rollout and occlusion name the deciding token in over 90 % of the examples, in every seed":
        "在每个种子上，注意力展开和遮挡法都在超过 90% 的样本里指出决定性的词元",
    "the one-layer model's map names the trigger at least 0.3 more often than the two-layer model's last map, on average over seeds":
        "按种子平均，单层模型的注意力图指出触发词的比例比两层模型最后一层的图至少高 0.3",
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
    "with Xavier initialisation Post-LN's last block gets a larger gradient than Pre-LN's (on average over seeds), with GPT-2's a smaller one in every seed":
        "用 Xavier 初始化时，Post-LN 最后一块的梯度大于 Pre-LN 的（按种子平均）；用 GPT-2 的初始化时，每个种子上都更小",
    "Post-LN's block gradients are within a factor of four of each other with Xavier initialisation and over eight times apart with GPT-2's, in every seed":
        "在每个种子上，用 Xavier 初始化时 Post-LN 各块梯度彼此相差不到四倍，用 GPT-2 的初始化时相差八倍以上",
    "with GPT-2's initialisation the attention starts uniform, and no softmax row is saturated":
        "用 GPT-2 的初始化时，注意力一开始是均匀的，没有一行 softmax 饱和",
    "with weights of standard deviation 0.5 over 30 % of the softmax rows are saturated at step 0":
        "权重标准差为 0.5 时，第 0 步就有超过 30% 的 softmax 行饱和",
    "saturation at standard deviation 0.5 lowers the softmax Jacobian's mean norm below that at 0.2":
        "标准差为 0.5 时的饱和，使 softmax 雅可比矩阵的平均范数低于标准差为 0.2 时",
    # book/06-pitfalls/03-memory.md
    "doubling n multiplies the layer's forward peak by about four (3.6-4.4): quadratic":
        "n 加倍时，这一层前向计算的峰值内存约变为四倍（3.6-4.4）：二次增长",
    "the forward peak holds a fixed number of n x n matrices (the ratio changes by under 10 % in the last doubling)":
        "前向峰值内存里 n x n 矩阵的个数是固定的（最后一次加倍时比值变化不到 10%）",
    "the forward peak is between two and five n x n score matrices":
        "前向峰值内存相当于两到五个 n x n 的分数矩阵",
    "gradient checkpointing needs over two times less memory":
        "梯度检查点所需内存不到原来的一半",
    "a checkpointed training step takes less than twice the time of a plain one":
        "做了检查点的一个训练步，耗时不到普通训练步的两倍",
    "the materialised attention's memory grows as n^2 (3.6-4.4 a doubling) and the chunked one's as n (1.8-2.2)":
        "完整写出的注意力内存按 n^2 增长（每次加倍 3.6-4.4 倍），分块的按 n 增长（1.8-2.2 倍）",
    "at the largest n the chunked attention needs over eight times less memory":
        "在最大的 n 上，分块注意力所需内存不到完整写出的八分之一",
    "PyTorch's fused kernel is over three times faster than the materialised readable version":
        "PyTorch 的融合内核比完整写出的可读版本快三倍以上",
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
    "with bfloat16 inputs the readable attention's peak memory stays above 0.9 of float32's":
        "输入为 bfloat16 时，可读版注意力的峰值内存仍高于 float32 时的 0.9",
    "bfloat16 attention stays within 0.05 of float32's output":
        "bfloat16 注意力的输出与 float32 相差不到 0.05",
    # book/06-pitfalls/04-decoding.md
    "with and without the cache greedy decoding gives the same tokens":
        "用缓存和不用缓存，贪心解码给出相同的词元",
    "recomputing the prefix grows over ten times faster with its length than a cached step does":
        "重新计算前缀的用时随长度增长的速度是缓存一步的十倍以上",
    "at the last position the cached step is over five times cheaper than recomputing":
        "在最后一个位置，缓存的一步比重新计算便宜五倍以上",
    "MQA's decoding step is over twice as fast as MHA's when each key/value head is read once":
        "每个键/值头只读一次时，MQA 的解码一步比 MHA 快一倍以上",
    "copying the key/value heads with repeat_kv is over three times slower than grouping them":
        "用 repeat_kv 复制键/值头比分组计算慢三倍以上",
    "PyTorch's kernel with enable_gqa takes under half the time of copying the heads":
        "PyTorch 启用 enable_gqa 的内核用时不到复制各头的一半",
    "trained from scratch, MHA, GQA-2 and MQA all solve the task (over 0.95 in every seed)":
        "从头训练时，MHA、GQA-2 和 MQA 都解决了任务（每个种子都高于 0.95）",
    "merging all heads into one costs more accuracy than merging pairs, in every seed (by over 0.1)":
        "把所有头合并成一个比两两合并损失更多准确率，每个种子都如此（差距超过 0.1）",
    "merging all heads into one costs every seed accuracy (under 0.9)":
        "把所有头合并成一个会使每个种子都损失准确率（低于 0.9）",
    "before uptraining, the checkpoint's heads (mean or first) beat random key/value heads in every seed (by over 0.1)":
        "在继续训练之前，取自检查点的头（平均或第一个头）在每个种子上都胜过随机的键/值头（差距超过 0.1）",
    "random key/value heads leave the model near chance (under 0.25)":
        "随机的键/值头使模型接近随机水平（低于 0.25）",
    "after 10 steps of uptraining, the converted models (mean or first head) are over 0.95 in every seed":
        "继续训练 10 步后，转换得到的模型（平均或第一个头）在每个种子上都高于 0.95",
    "with one key/value head, 10 steps from random key/value heads stay below the converted models on average (by over 0.1)":
        "只有一个键/值头时，从随机键/值头出发训练 10 步，平均仍低于转换得到的模型（差距超过 0.1）",
    # book/06-pitfalls/05-position.md
    "learned positions and a causal mask each break permutation equivariance (output changes over 0.1)":
        "可学习的位置编码和因果掩码都会破坏置换等变性（输出变化超过 0.1）",
    "with learned positions the order task is solved in every seed (over 0.95) and without positions it stays far off (under 0.6)":
        "有可学习的位置编码时，顺序任务在每个种子上都被解决（高于 0.95），没有位置编码时远远不够（低于 0.6）",
    "without positions no seed does better than the best function of a token and the set (within 0.04, the test set's noise)":
        "没有位置编码时，没有哪个种子超过“词元与集合的最优函数”所能达到的水平（误差在 0.04 以内，即测试集的噪声）",
    "inside the training length T5, ALiBi, the learned table and RoPE solve the task in every seed (over 0.85)":
        "在训练长度内，T5、ALiBi、可学习的位置表和 RoPE 在每个种子上都解决了任务（高于 0.85）",
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
    "far past the training length every seed ranks T5 above ALiBi above the rest, and sinusoidal below no encoding and the learned table":
        "远超训练长度时，每个种子的排序都是 T5 高于 ALiBi，ALiBi 高于其余各种，而正弦低于无位置编码和可学习的位置表",
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
    "with no fine-tuning the NTK base and YaRN, which put the angles back, win back under a quarter of what plain RoPE loses far away":
        "不做微调时，把角度放回训练范围的 NTK 基数和 YaRN，在远处挽回的不到普通 RoPE 所失去的四分之一",
    "with PI the queries that have no key 8 back are at chance unless the first token is the answer, in every seed":
        "使用 PI 时，往回 8 个位置没有键的查询处于随机水平，除非第一个词元恰好是答案，每个种子都如此",
    "with PI the queries that do have a key 8 back are right only part of the time (0.4 to 0.85 in every seed)":
        "使用 PI 时，往回 8 个位置有键的查询也只有一部分答对（每个种子都在 0.4 到 0.85 之间）",
    "after 50 steps at the long length every rule that keeps the fast pair holds to position 63 (over 0.93 in every seed)":
        "在长序列上微调 50 步后，每个保留最快频率对的规则都能撑到位置 63（每个种子都高于 0.93）",
    "after 50 steps the rules that squeeze the fast pair stay far below plain RoPE":
        "微调 50 步后，压缩最快频率对的规则仍远低于普通 RoPE",
    "up to twice the fine-tuning length the rules that keep the fast pair still hold (over 0.9 on average)":
        "在两倍微调长度以内，保留最快频率对的规则仍然有效（平均高于 0.9）",
    "beyond twice the fine-tuning length direct fine-tuning of plain RoPE holds better than the NTK base and YaRN, in every seed (by over 0.03)":
        "超过两倍微调长度后，直接微调的普通 RoPE 比 NTK 基数和 YaRN 保持得更好，每个种子都如此（差距超过 0.03）",
    "from three layers on, the farthest input reached counts orders of magnitude less than the last (under 1 %)":
        "从三层起，所能到达的最远输入的影响比最后一个小几个数量级（不到 1%）",
    "in every seed layer 0 puts over three times the uniform weight on the first token":
        "在每个种子中，第 0 层放在第一个词元上的权重超过均匀权重的三倍",
    "in every seed the full cache gets far fewer copies right past the training length than a window (by over 0.2), which gets over 0.9":
        "在每个种子中，超出训练长度后完整缓存答对的复制远少于窗口（差距超过 0.2），而窗口答对的超过 0.9",
    "a window with sinks is never worse than the window alone, and on average over 0.05 nats better":
        "带汇点的窗口从不比只有窗口的差，平均好 0.05 奈特以上",
    "with sinks the loss is within 0.02 nats of the language's own floor, in every seed":
        "带汇点时，损失与这门语言本身的下限相差不到 0.02 奈特，每个种子都如此",
    "with any number of sinks the copy accuracy stays over 0.99":
        "无论有几个汇点，复制准确率都保持在 0.99 以上",
    "one sink is enough: the losses with 1 to 4 sinks differ by under 0.01":
        "一个汇点就够了：1 到 4 个汇点的损失相差不到 0.01",
    "the first column draws over four times any other key's weight, and one head puts over half its weight there":
        "第一列得到的权重是其他任何键的四倍以上，而且有一个头把一半以上的权重放在那里",
}
