"""Chinese reports say everything in Chinese, English ones nothing in Chinese (issue 16).

The zh reports (Markdown and the HTML text) of every profile pair and single run the golden cases pin
must hold no English sentence (tests/support/language.py says what that is: identifiers, numbers,
units, file names, code and the titles of cited documents do not count). The message catalog
(core/messages.py) must give every message in both languages with the same values; the golden English
reports pin that its English is what the analyzers wrote before.
"""

from __future__ import annotations

import html
import json
import re
import string
from pathlib import Path

import pytest

from cli import main as cli
from core import InputError, error_line, in_lang
from core.messages import MESSAGES
from desk.cases import CaseBook, CaseMeta, SqliteCaseStore
from desk.cases.model import parse_case_id
from desk.triage import view
from doctor import facade
from doctor.config import AppConfig
from doctor.i18n import REPORT_TEXT, UI_TEXT
from doctor.render import render
from doctor.text import md_text
from knowledge import catalog_markdown, load_rules
from tests.bad_inputs import generate as bad_inputs
from tests.support.language import UNITS, chinese, english_sentences, plain_text
from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
golden = load_script(ROOT / "tests" / "golden" / "generate.py", "golden_generate")
PROFILE_CASES = [case for case in golden.cases() if case.baseline or case.target]
MINDIR_CASES = [case for case in golden.cases() if case.mindir and not (case.baseline or case.target)]
GENERATION = golden.Case(
    name="ascend_llm:prefill_only->generate_host_bound",
    baseline="tests/fixtures/ascend_llm/prefill_only",
    target="tests/fixtures/ascend_llm/generate_host_bound",
)
BAD_CASES = json.loads(bad_inputs.MANIFEST.read_text(encoding="utf-8"))["cases"]
BAD_ERRORS = [case for case in BAD_CASES if case["outcome"] == "error"]
# Problems whose parenthesis quotes a library's own English diagnostic (pyarrow, the OS): the sentence
# around it is Chinese, the quote stays as the library wrote it. (A MINDIR that does not decode no longer
# quotes protobuf: its reason is said in the page's language.)
QUOTES_A_LIBRARY = {
    "start_overflow",
    "folder_symlink_loop",
}


def _diagnose(case, lang: str):
    def path(rel: str | None) -> Path | None:
        return None if rel is None else ROOT / rel

    return facade.diagnose(
        path(case.baseline),
        path(case.target),
        path(case.mindir),
        rank=case.rank,
        lang=lang,
        npu_smi=path(case.npu_smi),
        isolate=False,
    )


def _without_citations(text: str, report) -> str:
    """`text` without the titles of the documents the causes cite: a title names an (English) document,
    like a file name, so it stays as its authors wrote it."""
    for cause in report.document.causes:
        for reference in cause.references:
            for shown in (reference.title, html.escape(reference.title), md_text(reference.title)):
                text = text.replace(shown, "")
    return text


def test_the_detector_finds_sentences_and_spares_identifiers() -> None:
    assert english_sentences("目标 The target takes 3.2 ms of wall time per step.") == [
        "The target takes",
        "of wall time per",
    ]
    spared = (
        "`re-profile with the Level1 config` Conv2D MatMul-op3 AI_CORE trace_view.json 3.2 ms per step "
        "https://www.mindspore.cn/docs/en/master/index.html CPU GPU ReLU `a b c d`\n"
        "```\nnet.set_train(False)\n```"
    )
    assert english_sentences(spared) == []
    assert english_sentences("<script>var a = 'one two three'</script><p>基线 four five six</p>") == [
        "four five six"
    ]


def test_every_message_has_both_languages_with_the_same_values() -> None:
    def fields(template: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name}

    for key, entry in MESSAGES.items():
        assert set(entry) == {"en", "zh"}, key
        assert fields(entry["en"]) == fields(entry["zh"]), key
        assert not chinese(entry["en"]), key
        if entry["en"].strip(" ;,."):
            assert chinese(entry["zh"]), key


def test_english_labels_hold_no_chinese() -> None:
    for table in (REPORT_TEXT["en"], UI_TEXT["en"]):
        for key, text in table.items():
            assert not chinese(text), key


@pytest.mark.slow
@pytest.mark.parametrize("case", PROFILE_CASES, ids=[case.name for case in PROFILE_CASES])
def test_a_chinese_report_has_no_english_sentence(case) -> None:
    report = _diagnose(case, "zh")
    for fmt in ("md", "html"):
        assert english_sentences(_without_citations(render(report, fmt), report)) == [], fmt
    said = [s.summary for s in report.document.symptoms] + [w.text for w in report.document.warnings]
    assert said and all(chinese(text) for text in said)


WALKED = [*MINDIR_CASES, GENERATION]


@pytest.mark.slow
@pytest.mark.parametrize("case", WALKED, ids=[case.name for case in [*MINDIR_CASES, GENERATION]])
def test_a_chinese_model_or_generation_report_has_no_english_sentence(case) -> None:
    """The MINDIR-only golden cases (model warnings, hygiene findings, the chain table) and a generation
    pair (phase-by-phase comparison) in zh."""
    report = _diagnose(case, "zh")
    for fmt in ("md", "html"):
        assert english_sentences(_without_citations(render(report, fmt), report)) == [], fmt
    said = [s.summary for s in report.document.symptoms] + [w.text for w in report.document.warnings]
    assert all(chinese(text) for text in said)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["cpu:train_fp32_graph->infer_fp32_pynative", "ascend:level0/train->level1/infer"]
)
def test_an_english_report_has_no_chinese(name) -> None:
    (case,) = [case for case in PROFILE_CASES if case.name == name]
    report = _diagnose(case, "en")
    for fmt in ("md", "html"):
        assert chinese(plain_text(render(report, fmt))) == [], fmt  # plotly.js carries its own locales


@pytest.mark.slow
def test_a_reopened_case_follows_the_viewers_language(tmp_path) -> None:
    """A case keeps its report in both languages; the link opens it in the viewer's, and a case kept
    before translations were stored opens in the language it was made in."""
    (case,) = [case for case in PROFILE_CASES if case.name == "cpu:train_fp32_graph->infer_fp32_pynative"]
    report = _diagnose(case, "en")
    book = CaseBook(SqliteCaseStore(tmp_path / "cases.sqlite3"))
    _, link = view.record_case(book, report, [], "http://h")
    case_id = link.rsplit("=", 1)[1]
    zh, _, _ = view.reopen_case(book, case_id, "zh", None)
    en, _, _ = view.reopen_case(book, case_id, "en", None)
    assert (zh.lang, en.lang) == ("zh", "en")
    assert zh.verdict == report.in_lang("zh").verdict and chinese(zh.verdict)
    assert en.document == report.document
    assert english_sentences(_without_citations(render(zh, "md"), zh)) == []
    old = book.store.put(report.data, CaseMeta())
    assert view.reopen_case(book, old, "zh", None)[0].lang == "en"


@pytest.mark.slow
def test_a_report_without_translations_is_the_same_document(tmp_path) -> None:
    """`translate=False` (the CLI's one-language report) skips the other language's document and
    changes nothing in the report's own: the same JSON, and no other language to switch to."""
    (case,) = [case for case in PROFILE_CASES if case.name == "cpu:train_fp32_graph->infer_fp32_pynative"]
    both = _diagnose(case, "en")
    one = facade.diagnose(ROOT / case.baseline, ROOT / case.target, lang="en", isolate=False, translate=False)
    assert set(both.translations) == {"zh"} and dict(one.translations) == {}
    created = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")  # when each was made
    assert created.sub("", render(one, "json")) == created.sub("", render(both, "json"))
    assert one.in_lang("zh").lang == "en"  # nothing to switch to: the report stays as it is


def test_the_rules_page_is_in_one_language() -> None:
    """The app's rule catalog: no English sentence in zh (cited titles aside), no Chinese in en."""
    rules = load_rules()
    zh = catalog_markdown(rules, "zh")
    for rule in rules:
        for reference in rule.references:
            zh = zh.replace(reference.title, "")
    assert english_sentences(zh) == []
    assert "| 高 |" in zh and "- 严重程度: 高" in zh
    assert chinese(catalog_markdown(rules, "en")) == []


def _figure_texts(figure) -> list[str]:
    """What a reader of a figure sees besides the data: title, axis titles, legend and panel names."""
    layout = figure.layout
    texts = [layout.title.text, *(a.text for a in layout.annotations or ())]
    for axis in ("xaxis", "yaxis", "xaxis2", "yaxis2"):
        if axis in layout and layout[axis].title.text:
            texts.append(layout[axis].title.text)
    return [text for text in texts + [trace.name for trace in figure.data] if text]


@pytest.mark.slow
def test_the_plots_of_a_chinese_report_are_in_chinese() -> None:
    """Every title, axis, panel and legend text with an English word also carries Chinese (a dtype such
    as float32 or a core such as AI_CORE is data, not a word)."""
    from doctor.plots import report_figures

    (case,) = [case for case in PROFILE_CASES if case.name == "ascend:level1/train->level1/infer"]
    figures = report_figures(_diagnose(case, "zh"))
    assert {"ops", "delta", "steps", "breakdown"} <= set(figures)
    texts = [text for figure in figures.values() for text in _figure_texts(figure)]
    assert "基线" in texts and "按计算单元" in texts
    words = [(text, re.findall(r"\b[A-Za-z][a-z]+\b", text)) for text in texts if not chinese(text)]
    worded = [text for text, found in words if set(found) - UNITS]
    assert worded == []


@pytest.mark.parametrize("given", ["notes", "empty"])
def test_an_input_problem_is_said_in_chinese(tmp_path, given) -> None:
    """The problem lines a zh page shows for a bad upload: a folder of other files, a list of files none
    of which a profiler writes."""
    from doctor.problems import problems_markdown

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a profile\n", encoding="utf-8")
    bad = folder if given == "notes" else [str(folder / "notes.txt")]
    with pytest.raises(InputError) as raised:
        facade.diagnose(ROOT / "tests/fixtures/cpu/train_fp32_graph", bad, lang="zh", isolate=False)
    shown = problems_markdown(raised.value, "zh")
    assert chinese(shown) and english_sentences(shown) == [], shown
    assert english_sentences(raised.value.message) != []  # the CLI and the API keep English


@pytest.mark.slow
@pytest.mark.parametrize("name", [case["name"] for case in BAD_ERRORS])
def test_a_bad_input_is_said_in_chinese(name, tmp_path) -> None:
    """Every error case of the bad-input corpus, through the facade in zh: the problem line the page
    shows is Chinese with no English sentence (a quoted library diagnostic aside), and the error's
    message for the CLI and the API stays English (the corpus manifest matches it)."""
    from doctor.problems import problems_markdown

    (case,) = [case for case in BAD_ERRORS if case["name"] == name]
    path = bad_inputs.build(name, tmp_path) if case["runtime"] else bad_inputs.CORPUS / case["input"]
    with pytest.raises(InputError) as raised:
        if case["call"] == "inspect":
            facade.inspect_model(path, lang="zh", isolate=False)
        else:
            facade.diagnose(ROOT / case["baseline"], path, lang="zh", isolate=False)
    shown = problems_markdown(raised.value, "zh")
    assert chinese(shown)
    assert (english_sentences(shown) == []) is (name not in QUOTES_A_LIBRARY), shown
    assert re.search(case["match"], raised.value.message), raised.value.message


def _all_figure_texts(figure) -> list[str]:
    """Title, annotations, legend names, marker labels and hover texts of a figure."""
    texts = _figure_texts(figure)
    for trace in figure.data:
        texts += [str(text) for text in (trace.text or ()) if text]
        texts += [str(text) for text in (trace.hovertext or ()) if text]
    return texts


def test_the_chain_figure_and_a_blocked_reason_are_said_in_chinese() -> None:
    """The fusion-chain figure of a model with a blocked chain (BatchNorm in training mode): block view
    and chain close-up in zh hold no English sentence; the English figure holds no Chinese; the blocked
    reason and the graph section build.graph_section makes for zh are Chinese."""
    from doctor import build
    from graph import find_chains, load_mindir
    from graph.view import chain_figure, overview_figure

    model = load_mindir(ROOT / "tests/fixtures/mindir/conv_bn_relu_train.mindir")
    chains = find_chains(model)
    (blocked,) = [chain for chain in chains if not chain.fusible]
    zh = [*_all_figure_texts(overview_figure(model, chains, lang="zh"))]
    zh += _all_figure_texts(chain_figure(model, blocked, lang="zh"))
    assert english_sentences(plain_text(" | ".join(zh))) == []
    assert any("受阻" in text for text in zh) and any("融合链" in text for text in zh)
    en = _all_figure_texts(overview_figure(model, chains)) + _all_figure_texts(chain_figure(model, blocked))
    assert chinese(" | ".join(en)) == [] and any("blocked" in text for text in en)
    section = build.graph_section(model, chains, "m.mindir", None, "zh")
    reasons = [item.blocked_reason for item in section.chains.items if item.blocked_reason]
    assert reasons and all(chinese(reason) and english_sentences(reason) == [] for reason in reasons)


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "/nonexistent/a", "/nonexistent/b"],
        ["inspect", "/nonexistent/m.mindir"],
        ["triage", "--jobs", "0", "/nonexistent"],
    ],
    ids=["two-missing-profiles", "missing-model", "bad-jobs"],
)
def test_the_cli_says_its_errors_in_the_language_asked_for(argv, capsys) -> None:
    """`--lang zh` says a bad input's line in Chinese, its sides too; without it the line stays English."""
    assert cli.main([*argv, "--lang", "zh"]) == cli.EXIT_INPUT
    zh = capsys.readouterr().err
    assert cli.main(argv) == cli.EXIT_INPUT
    en = capsys.readouterr().err
    assert chinese(zh) and english_sentences(zh) == [], zh
    assert chinese(en) == [] and english_sentences(en), en


@pytest.mark.parametrize(
    "make",
    [
        lambda: AppConfig.from_env({"PERF_DOCTOR_USERS": "nobody"}),
        lambda: AppConfig.from_env({"PERF_DOCTOR_TRIAGE": "sometimes"}),
        lambda: AppConfig.from_env({"PERF_DOCTOR_CASE_RETENTION_DAYS": "soon"}),
        lambda: parse_case_id("not-a-case"),
        lambda: facade.diagnose(),
        lambda: facade.inspect_model(""),
    ],
    ids=["users", "triage-mode", "retention", "case-id", "nothing", "no-model"],
)
def test_settings_case_and_facade_errors_have_chinese(make) -> None:
    """The server's settings, the case store's and the facade's own errors are messages with zh."""
    with pytest.raises(InputError) as caught:
        make()
    said = str(in_lang(error_line(caught.value), "zh"))
    assert chinese(said) and english_sentences(said) == [], said
    assert str(error_line(caught.value)) == caught.value.message  # English unchanged
