"""The small network the fix snippets run against (imported only inside the fix-runner subprocess).

It lives at module level in its own module because MindSpore's network rewriting (used by
``ms.amp.custom_mixed_precision``) re-imports a Cell's class from the module that defines it.
"""

from __future__ import annotations

import mindspore as ms
from mindspore import nn

INPUT_SHAPE = (2, 3, 16, 16)


class SmallNet(nn.Cell):
    """Conv2d -> BatchNorm2d -> ReLU -> Dropout -> Dense: a fusible chain with BN and Dropout state."""

    def __init__(self) -> None:
        super().__init__()
        channels = 8
        self.conv = nn.Conv2d(INPUT_SHAPE[1], channels, 3, pad_mode="same")
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(p=0.5)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(channels * INPUT_SHAPE[2] * INPUT_SHAPE[3], 10)

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return self.fc(self.flatten(self.drop(self.relu(self.bn(self.conv(x))))))
