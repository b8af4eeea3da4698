"""The bundled examples the app offers: pairs of real CPU profiles (assets/examples) and a model.

Each side of a pair is given to the app as the list of its files, exactly what a browser folder upload
sends, so clicking an example exercises the same path as a user's upload.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "assets" / "examples"
MODELS_DIR = ROOT / "assets" / "models"


@dataclass(frozen=True)
class PairExample:
    """A baseline/target pair under assets/examples/<name>/ with a label for the UI."""

    name: str
    label: str

    @property
    def folder(self) -> Path:
        return EXAMPLES_DIR / self.name

    def files(self, role: str) -> list[str]:
        """Every file of one side ('baseline' or 'target'), sorted, as strings."""
        return sorted(str(p) for p in (self.folder / role).rglob("*") if p.is_file())

    @property
    def available(self) -> bool:
        """Whether both sides hold files (the examples are generated, so check)."""
        return bool(self.files("baseline")) and bool(self.files("target"))


PAIRS = (
    PairExample("amp_train_vs_fp32_infer", "AMP O2 training vs FP32 inference · AMP O2 训练 vs FP32 推理"),
    PairExample("pynative_infer", "Graph-mode vs PyNative inference · 图模式 vs PyNative 推理"),
)
MODEL = MODELS_DIR / "resnet50_noweights.mindir"
MODEL_LABEL = "ResNet-50 (weights stripped · 已去除权重)"


def available_pairs() -> list[PairExample]:
    """The pair examples whose files are present."""
    return [pair for pair in PAIRS if pair.available]
