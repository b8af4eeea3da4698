"""The small networks the fix snippets run against (imported only inside the fix-runner subprocess).

They live at module level in their own module because MindSpore's network rewriting (used by
``ms.amp.custom_mixed_precision``) re-imports a Cell's class from the module that defines it.
"""

# MindSpore ships no type information (no stubs, Cell.construct(*inputs), layers bound at run time):
# this module is checked in basic mode; the fix tests run it for real.
# pyright: basic, reportOptionalCall=false, reportIncompatibleMethodOverride=false

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


class ConvStack(nn.Cell):
    """Five Conv2d-BatchNorm2d-ReLU blocks, then Flatten -> LayerNorm -> Dense: a deeper net on which a
    mixed-precision fix shows how its Cast count grows with the number of layers (measured, not run as
    a fix preamble by default)."""

    def __init__(self, blocks: int = 5) -> None:
        super().__init__()
        channels = 8
        layers = []
        for i in range(blocks):
            layers += [
                nn.Conv2d(INPUT_SHAPE[1] if i == 0 else channels, channels, 3, pad_mode="same"),
                nn.BatchNorm2d(channels),
                nn.ReLU(),
            ]
        self.features = nn.SequentialCell(layers)
        self.flatten = nn.Flatten()
        features = channels * INPUT_SHAPE[2] * INPUT_SHAPE[3]
        self.norm = nn.LayerNorm((features,))
        self.fc = nn.Dense(features, 10)

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return self.fc(self.norm(self.flatten(self.features(x))))


NETS = {"SmallNet": SmallNet, "ConvStack": ConvStack}
