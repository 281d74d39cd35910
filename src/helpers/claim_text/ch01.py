"""The Chinese of the claims of chapter 1's pages and lab (see :mod:`helpers.claim_text`)."""

STATEMENTS_ZH: dict[str, str] = {
    # book/01-bottleneck/index.md
    "without attention both state sizes fall below the breaking accuracy within the lengths tried":
        "没有注意力时，两种状态大小都会在所试的长度内跌破断裂准确率",
    "a bigger state breaks at a longer source":
        "更大的状态在更长的源序列上才断裂",
    "with attention and the big state every seed stays above 85 % at the longest length":
        "有注意力且状态较大时，每个种子在最长长度上都保持在 85% 以上",
    "without attention every seed is far below half at the longest length (under 0.35)":
        "没有注意力时，每个种子在最长长度上都远低于一半（低于 0.35）",
    "attention beats no attention at the longest length on every seed":
        "在最长长度上，有注意力的模型在每个种子上都胜过没有注意力的",
    "without attention the accuracy falls at every step in length, on every seed":
        "没有注意力时，在每个种子上，准确率都随长度每一步下降",
    "4x training without attention stays below attention at the longest length (means over seeds)":
        "没有注意力时训练 4 倍步数，在最长长度上仍低于有注意力的模型（各种子的平均）",
    "at the shortest length the model without attention trained 4x longer beats the attention model (means over seeds)":
        "在最短长度上，训练 4 倍步数的无注意力模型胜过有注意力的模型（各种子的平均）",
    "with 4x training the curve without attention still falls with length":
        "训练 4 倍步数后，没有注意力的曲线仍随长度下降",
    "with 4x training the model without attention is still far below half at the longest length":
        "训练 4 倍步数后，没有注意力的模型在最长长度上仍远低于一半",
    "4x training helps less at the longest length than at length 10":
        "训练 4 倍步数在最长长度上的帮助小于在长度 10 上的",
    "4x training moves the fall-off to longer sources":
        "训练 4 倍步数把准确率下跌的位置推向更长的源序列",
    "four times the steps and four times the state give about the same accuracy at every length (within 0.15)":
        "4 倍的步数与 4 倍的状态在每个长度上给出差不多的准确率（相差不到 0.15）",
    "at length 10 the model without attention is still learning in the second half of its longest training (over 0.05 gained)":
        "在长度 10 上，没有注意力的模型在最长那次训练的后一半仍在学习（提高超过 0.05）",
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
    "the focus stays above chance at every length, with both states and both ways of decoding":
        "在每个长度上，两种状态大小、两种解码方式下，聚焦都高于随机水平",
    "with the small state the focus drifts off the anti-diagonal at long lengths (by over 0.15 of the way above chance)":
        "状态较小时，在长序列上聚焦偏离反对角线（从随机水平到完美的路程中，少走了 0.15 以上）",
    "with the big state the focus holds better at the longest length (by over 0.15 of the way above chance)":
        "状态较大时，在最长长度上聚焦保持得更好（从随机水平到完美的路程中，多走了 0.15 以上）",
    "with the small state the focus drifts at long lengths under teacher forcing too (by over 0.1 of the way above chance)":
        "状态较小时，在教师强制下聚焦在长序列上同样偏离（从随机水平到完美的路程中，少走了 0.1 以上）",
    "the GRU's gradient falls geometrically with distance while attention's stays flat":
        "GRU 的梯度随距离按几何级数下降，而注意力的保持平稳",
    "the GRU's time grows over tenfold from the shortest to the longest sequence":
        "从最短到最长的序列，GRU 的用时增长十倍以上",
    "from 64 tokens on, attention's time grows faster with n than the GRU's (log-log slopes apart by over 0.25)":
        "从 64 个词元起，注意力的用时随 n 增长得比 GRU 快（对数坐标下斜率相差 0.25 以上）",
    "from 64 to 256 tokens, attention does its multiply-adds over 1.3 times as fast as the GRU":
        "从 64 到 256 个词元，注意力完成乘加运算的速度是 GRU 的 1.3 倍以上",
    "the GRU's time grows about in proportion to n (log-log slope 0.6-1.4)":
        "GRU 的用时大约与 n 成正比（对数坐标下斜率 0.6-1.4）",
    "every output depends on the symbol it copies (occluding it changes the output by over 0.5)":
        "每个输出都依赖它所复制的符号（遮挡该符号使输出变化超过 0.5）",
    "most of the weight sits elsewhere than on the copied symbol (under half on average)":
        "大部分权重并不落在被复制的符号上（平均不到一半）",
    "under teacher forcing large effects appear without weight, all on symbols already written":
        "在教师强制下，没有权重也会出现大的影响，且全部在已经写出的符号上",
    "free-running, the outputs barely depend on the symbols already written (over five times less than under teacher forcing)":
        "自由生成时，输出几乎不依赖已经写出的符号（比教师强制时小五倍以上）",
    "teacher forcing on a consistent prefix removes those effects too":
        "在一致的前缀上做教师强制，这些影响也消失了",
    "teacher forcing on a consistent prefix leaves fewer hidden effects than on the model's own outputs":
        "在一致的前缀上做教师强制，隐藏的影响比在模型自己的输出上少",
}
