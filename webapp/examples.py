"""The bundled examples the app offers: pairs of real CPU profiles and one Ascend pair derived from a real
NPU step (assets/examples), and a model.

Each side of a pair is given to the app as the list of its files, exactly what a browser folder upload
sends, so clicking an example exercises the same path as a user's upload.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from doctor.i18n import UI_TEXT

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "assets" / "examples"
MODELS_DIR = ROOT / "assets" / "models"


@dataclass(frozen=True)
class PairExample:
    """A baseline/target pair under assets/examples/<name>/; its label, in one language each, is the UI
    text `label_key` (doctor.i18n.UI_TEXT)."""

    name: str

    @property
    def label_key(self) -> str:
        return f"ex_{self.name}"

    @property
    def label(self) -> str:
        """The English label."""
        return UI_TEXT["en"][self.label_key]

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


# The first example is the case the app is for: inference slower than the training step it came from.
PAIRS = (
    PairExample("graph_train_vs_pynative_infer"),
    PairExample("amp_train_vs_fp32_infer"),
    PairExample("pynative_infer"),
    # Ascend: derived from the forward pass of a real NPU step with three culprits injected
    # (assets/examples/generate_ascend.py names the origin and every assumption).
    PairExample("ascend_derived_fp32_split"),
)
MODEL = MODELS_DIR / "resnet50_noweights.mindir"
MODEL_LABEL_KEY = "ex_resnet50"


def available_pairs() -> list[PairExample]:
    """The pair examples whose files are present."""
    return [pair for pair in PAIRS if pair.available]
