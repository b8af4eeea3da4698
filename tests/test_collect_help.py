"""The "How to collect" help (docs/collect.md, docs/collect.zh.md, shown in the app) and the links of the
app and the docs: the 2.5+ profiler snippet runs on CPU with the installed MindSpore and its output is
diagnosed; the 2.0-2.4 snippet names only APIs that exist; every relative link resolves."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from doctor.i18n import LANGS, REPORT_TEXT, UI_TEXT
from doctor.problems import HELP_ANCHOR
from tests.support.inputs import ROOT
from webapp.help import HELP_FILES, collect_help
from webapp.rules_view import rules_markdown

SNIPPET_MARK = "<!-- snippet: profile-2.5 -->"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# The app's own in-page anchors (elem_id of a component of app.py).
APP_ANCHORS = {HELP_ANCHOR}
# A tiny Conv-BN-ReLU net, its training step and data: what the user's code provides around the snippet.
PREAMBLE = """
import numpy as np
import mindspore as ms
from mindspore import nn

ms.set_device("CPU")
ms.set_context(mode=ms.GRAPH_MODE)
net = nn.SequentialCell(
    nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.Dense(8 * 16 * 16, 10)
)
loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
train_step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
train_step.set_train()
rng = np.random.default_rng(0)
images = ms.Tensor(rng.standard_normal((8, 3, 16, 16)).astype(np.float32))
labels = ms.Tensor(rng.integers(0, 10, 8).astype(np.int32))
train_batches = [(images, labels)] * 10
infer_batches = [(images, labels)] * 10
"""


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _snippet(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    after = text.split(SNIPPET_MARK, 1)[1]
    return _python_blocks(after)[0]


def _code_only(code: str) -> str:
    """The code without comments and docstrings, which are translated."""
    lines = [line.split("#", 1)[0].rstrip() for line in code.splitlines()]
    return re.sub(r'"""[^"]*"""', '""""""', "\n".join(line for line in lines if line))


def test_both_languages_give_the_same_code() -> None:
    codes = {
        lang: [_code_only(c) for c in _python_blocks(p.read_text(encoding="utf-8"))]
        for lang, p in HELP_FILES.items()
    }
    assert len(codes["en"]) == 2 and codes["en"] == codes["zh"]


def test_the_app_shows_the_help_in_one_language() -> None:
    english, chinese = collect_help("en"), collect_help("zh")
    assert (
        "mindspore.profiler.profile" in english
        and "_ExperimentalConfig" in english
        and "schedule(" in english
    )
    assert "perf-doctor pack" in english and "perf-doctor pack" in chinese
    assert not re.search(r"[\u4e00-\u9fff]", english), "no Chinese in the English help"
    assert "如何" not in english and "上传" in chinese
    assert SNIPPET_MARK not in english and "collect.zh.md" not in english and "collect.md" not in chinese


@pytest.mark.mindspore
@pytest.mark.slow
def test_the_2_5_snippet_profiles_both_runs_on_cpu_and_they_are_diagnosed(tmp_path: Path) -> None:
    """The snippet as the help prints it, with a tiny net around it, in a fresh MindSpore process."""
    script = tmp_path / "collect.py"
    script.write_text(textwrap.dedent(PREAMBLE) + "\n" + _snippet(HELP_FILES["en"]), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("prof_train", "prof_infer"):
        assert list((tmp_path / name).glob("*_ascend_ms")), f"{name} has no run folder"
    from doctor import diagnose

    report = diagnose(tmp_path / "prof_train", tmp_path / "prof_infer", isolate=False)
    phases = [run["phase"] for run in report.data["runs"]]
    assert report.kind == "pair" and phases == ["train", "inference"]
    assert report.data["runs"][0]["steps"] == 5 == report.data["runs"][1]["steps"]


@pytest.mark.mindspore
def test_the_2_0_snippet_names_only_apis_that_exist() -> None:
    code = _python_blocks(HELP_FILES["en"].read_text(encoding="utf-8"))[1]
    assert "ms.Profiler(output_path=" in code and "start_profile=False" in code
    check = (
        "import mindspore as ms\n"
        "assert all(callable(getattr(ms.Profiler, m)) for m in ('start', 'stop', 'analyse'))\n"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def _page_texts() -> dict[str, str]:
    """Every Markdown the app shows that may hold a link, by where it comes from."""
    texts = {f"help:{lang}": collect_help(lang) for lang in LANGS}
    texts |= {f"rules:{lang}": rules_markdown("", lang) for lang in LANGS}
    texts |= {f"ui:{lang}:{key}": value for lang in LANGS for key, value in UI_TEXT[lang].items()}
    texts |= {
        f"report:{lang}:{k}": v.replace("{help}", HELP_ANCHOR)
        for lang in LANGS
        for k, v in REPORT_TEXT[lang].items()
    }
    return texts


def test_every_link_in_the_app_resolves() -> None:
    """The page cannot follow a link into the repository: only web links, in-page rule anchors and the
    app's own anchors."""
    rule_anchors = set(re.findall(r'<a id="([^"]+)"></a>', rules_markdown("", "en")))
    app_source = (ROOT / "app.py").read_text(encoding="utf-8")
    bad = []
    for where, text in _page_texts().items():
        for target in LINK.findall(text):
            if target.startswith(("https://", "http://")):
                continue
            anchor = target.lstrip("#")
            if target.startswith("#") and (anchor in rule_anchors or target in APP_ANCHORS):
                continue
            bad.append((where, target))
    assert not bad
    for anchor in APP_ANCHORS:
        assert f'elem_id="{anchor.lstrip("#")}"' in app_source, f"no component has the id {anchor}"


def test_every_relative_link_in_the_docs_resolves() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("*/README.md"))]
    bad = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in LINK.findall(text):
            if target.startswith(("https://", "http://", "mailto:", "#")):
                continue
            path = target.split("#", 1)[0]
            if not (page.parent / path).exists():
                bad.append((page.relative_to(ROOT).as_posix(), target))
    assert not bad
    assert len(pages) >= 8
