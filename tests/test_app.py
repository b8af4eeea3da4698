"""The app through its public API: gradio_client against the app launched in-process."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

import gradio as gr
import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError
from jsonschema import Draft202012Validator

import app
from doctor.config import AppConfig
from doctor.schema import load_schema
from tests.support.inputs import CPU, EXAMPLE, RESNET, ROOT, files_of, free_port
from webapp.locale import PageLocale
from webapp.uploads import UploadRecorder

pytestmark = pytest.mark.slow

REPORT, FILES = 0, 1  # every named endpoint returns the report document, then its download files
SCHEMA = Draft202012Validator(load_schema())
REQUEST = type("Request", (), {"headers": {}})()  # a request without a browser page: English


@pytest.fixture(scope="module")
def client(app_url: str) -> Client:
    return Client(app_url, verbose=False, analytics_enabled=False)


def _files(folder: Path) -> list:
    return [handle_file(p) for p in files_of(folder)]


def diagnose(client: Client, baseline: Path, target: Path, mindir: Path | None = None) -> tuple:
    return client.predict(
        _files(baseline),
        _files(target),
        handle_file(str(mindir)) if mindir else None,
        None,
        "auto",
        api_name="/diagnose",
    )


def shown(baseline: Path, target: Path, mindir: Path | None = None, after: Path | None = None) -> dict:
    """What the Compare tab shows of a pair, by result component (the UI's event, called in-process)."""
    model = str(mindir) if mindir else None
    later = files_of(after) if after else None
    return app.compare(files_of(baseline), files_of(target), model, None, "auto", REQUEST, None, after=later)


def test_the_api_is_the_named_endpoints_and_none_of_the_ui_events(client):
    api = client.view_api(print_info=False, return_format="dict")
    assert set(api["named_endpoints"]) == {"/diagnose", "/inspect_model", "/compare_outputs", "/case"}
    assert api["unnamed_endpoints"] == {}
    params = {
        name: [p["parameter_name"] for p in e["parameters"]] for name, e in api["named_endpoints"].items()
    }
    assert params == {
        "/diagnose": ["baseline", "target", "mindir", "rank", "role", "after", "lang"],
        "/inspect_model": ["mindir", "lang"],
        "/compare_outputs": ["baseline", "target", "mapping", "lang"],
        "/case": ["case_id", "lang"],
    }
    for endpoint in api["named_endpoints"].values():
        assert [r["label"] for r in endpoint["returns"]] == ["report", "files"]
    with pytest.raises(ValueError, match="compare"):
        client.predict([], [], None, None, "auto", api_name="/compare")  # the UI's event is private


def test_diagnose_example_pair_with_mindir_returns_the_report_and_its_files(client):
    result = diagnose(client, EXAMPLE / "baseline", EXAMPLE / "target", RESNET)
    assert len(result) == 2
    report = result[REPORT]
    assert not list(SCHEMA.iter_errors(report))
    assert report["causes"][0]["id"] == "precision-mismatch"
    assert report["verdict"]["top_cause"] == "precision-mismatch"
    counts = {row["pattern"]: row["count"] for row in report["graph"]["chains"]["by_pattern"]}
    assert (counts["conv-bn-act"], counts["conv-bn-add-act"], counts["conv-bn"]) == (33, 16, 4)
    html_path, md_path, json_path, csv_path = (Path(p) for p in result[FILES])
    assert html_path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert md_path.read_text(encoding="utf-8").startswith("# Perf Doctor report")
    assert json.loads(json_path.read_text(encoding="utf-8")) == report  # the file is the document
    rows = list(csv.DictReader(csv_path.open(encoding="utf-8")))
    assert len(rows) == report["operators"]["total"]
    assert report["case"]["id"] in html_path.name and report["case"]["link"].endswith(report["case"]["id"])


def test_diagnose_in_chinese_and_an_unknown_language_refused(client):
    result = client.predict(
        [], _files(CPU / "infer_fp32_pynative"), None, None, "auto", None, "zh", api_name="/diagnose"
    )
    assert result[REPORT]["lang"] == "zh" and result[REPORT]["kind"] == "single"
    with pytest.raises(AppError, match="fr"):
        client.predict(
            [], _files(CPU / "infer_fp32_pynative"), None, None, "auto", None, "fr", api_name="/diagnose"
        )


def test_the_compare_tab_shows_verdict_causes_and_files_of_the_report():
    values = shown(EXAMPLE / "baseline", EXAMPLE / "target", RESNET)
    report = values["report_json"]
    verdict, causes = values["verdict"], values["causes"]
    assert verdict.visible is True and values["notice"].visible is False  # the verdict box, no notice
    assert report["verdict"]["text"].split(";")[0] in verdict.value.replace("\\", "")
    assert "`precision-mismatch`" in causes and "```python" in causes
    assert Path(values["dl_html"]).read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert '"schema_version": "1.0"' in Path(values["dl_json"]).read_text(encoding="utf-8")


def test_diagnose_with_an_after_run_reports_the_loop_and_the_tab_offers_reprofile_py(client):
    result = client.predict(
        _files(CPU / "train_fp32_graph"),
        _files(CPU / "infer_fp32_pynative"),
        None,
        None,
        "auto",
        _files(CPU / "infer_fp32_graph"),
        api_name="/diagnose",
    )
    assert [(c["id"], c["status"]) for c in result[REPORT]["after"]["causes"]] == [
        ("execution-mode-mismatch", "resolved")
    ]
    values = shown(CPU / "train_fp32_graph", CPU / "infer_fp32_pynative", after=CPU / "infer_fp32_graph")
    assert "After the fix" in values["after"] and "resolved" in values["after"]
    assert values["plot_waterfall"].value is not None
    fixes = values["fixes"]
    assert fixes.value == ["execution-mode-mismatch"] and fixes.visible is True
    assert [value for _, value in fixes.choices] == ["execution-mode-mismatch"]
    text = Path(values["dl_reprofile"].value["path"]).read_text(encoding="utf-8")
    assert "# ---- fix 1: execution-mode-mismatch" in text and "def build_net():" in text


def test_the_compare_tab_shows_tables_with_text_and_number_columns_only():
    values = shown(EXAMPLE / "baseline", EXAMPLE / "target")
    report, operators = values["report_json"], values["operators"]
    assert set(operators.datatype) <= {"str", "number"}
    assert operators.value["headers"][0] == "operator"
    assert len(operators.value["data"]) == report["operators"]["total"]
    top_target = values["top_target"].value["data"]
    assert [row[1] for row in top_target] == [r["operator"] for r in report["leaderboards"]["target"]]
    plots = [values[f"plot_{key}"] for key in ("ops", "delta", "steps", "breakdown", "chains")]
    assert [p.visible for p in plots] == [True, True, True, True, False]  # no model: no chain graph


def test_inspect_model_endpoint_reports_resnet_chains(client):
    report, files = client.predict(handle_file(str(RESNET)), api_name="/inspect_model")
    assert report["kind"] == "mindir" and not list(SCHEMA.iter_errors(report))
    assert report["graph"]["chains"]["by_pattern"][0] == {
        "pattern": "conv-bn-act",
        "count": 33,
        "fusible": 33,
        "blocked": 0,
    }
    assert [Path(p).suffix for p in files] == [".html", ".md", ".json"]  # a model has no operator CSV
    values = app.inspect(str(RESNET), REQUEST, None)
    assert values["plot_chains"].visible is True  # the Inspect tab's chain graph


def test_a_case_reopens_through_the_api_in_either_language(client):
    report, _ = client.predict(handle_file(str(RESNET)), api_name="/inspect_model")
    again, files = client.predict(report["case"]["id"], "zh", api_name="/case")
    assert again["lang"] == "zh" and again["case"] == report["case"]
    assert again["graph"]["chains"]["by_pattern"] == report["graph"]["chains"]["by_pattern"]
    assert len(files) == 3
    with pytest.raises(AppError, match="case"):
        client.predict("no-such-case", "en", api_name="/case")


def test_compare_outputs_endpoint_returns_the_outputs_section_and_its_files(client, tmp_path):
    """The outputs tab's API: two zipped real dumps in, the section (first divergence) and its files out."""
    import shutil

    dumps = ROOT / "tests" / "fixtures" / "outputs"
    archives = [shutil.make_archive(str(tmp_path / n), "zip", dumps, n) for n in ("reference", "bn_train")]
    section, files = client.predict(
        handle_file(archives[0]), handle_file(archives[1]), None, "zh", api_name="/compare_outputs"
    )
    assert [Path(p).suffix for p in files] == [".html", ".md", ".json", ".csv"]
    assert json.loads(Path(files[2]).read_text(encoding="utf-8")) == section
    assert "BatchNorm" in json.dumps(section) and "首个出现分歧的层" in Path(files[1]).read_text(
        encoding="utf-8"
    )
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    with pytest.raises(AppError, match=r"junk\.zip"):
        client.predict(
            handle_file(str(junk)), handle_file(str(junk)), None, "en", api_name="/compare_outputs"
        )


def test_single_profile_upload_is_diagnosed_alone(client):
    result = client.predict([], _files(CPU / "infer_fp32_pynative"), None, None, "auto", api_name="/diagnose")
    assert result[REPORT]["kind"] == "single"


def test_bad_inputs_come_back_as_one_clear_error(client, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("not a profile", encoding="utf-8")
    with pytest.raises(AppError, match="none of the 1 files is a known profiler file"):
        client.predict([handle_file(str(junk))], _files(CPU / "infer_fp32_graph"), None, None, "auto",
                       api_name="/diagnose")  # fmt: skip
    garbage = tmp_path / "garbage.mindir"
    garbage.write_bytes(b"\x08\x96\x01" * 500)
    with pytest.raises(AppError, match=r"garbage\.mindir"):
        client.predict(handle_file(str(garbage)), api_name="/inspect_model")
    with pytest.raises(AppError, match="nothing to diagnose"):
        client.predict([], [], None, None, "auto", api_name="/diagnose")


def test_two_analyses_run_at_the_same_time(client):
    """The queue runs up to `concurrency` analyses in parallel: a second user is not blocked."""
    events = {fn.api_name: fn for fn in _demo_functions()}
    assert events["compare"].concurrency_limit >= 2
    pools = {events[name].concurrency_id for name in ("compare", "inspect", "diagnose", "inspect_model")}
    assert pools == {"analysis"}  # the UI's events and the API's share one pool
    started = time.perf_counter()
    jobs = [client.submit(handle_file(str(RESNET)), api_name="/inspect_model") for _ in range(2)]
    results = [job.result(timeout=120) for job in jobs]
    assert all(r[REPORT]["kind"] == "mindir" for r in results)
    assert time.perf_counter() - started < 60


def _demo_functions() -> list:
    demo = app.build_demo(AppConfig())
    return [
        fn for fn in demo.fns.values() if fn.api_name in ("compare", "inspect", "diagnose", "inspect_model")
    ]


def test_launch_settings_suit_a_small_shared_machine():
    demo = app.build_demo(AppConfig(concurrency=2, queue_size=16))
    kwargs = app.launch_kwargs(AppConfig(), demo)
    assert "server_name" not in kwargs and "server_port" not in kwargs  # Spaces sets them
    assert kwargs["run_history"] is False and kwargs["footer_links"] == ["api"]
    assert kwargs["max_file_size"] == "500mb" and kwargs["auth"] is None
    # the recorder deletes uploads after their analysis; PageLocale starts Gradio in the page's language
    recorder, locale = kwargs["app_kwargs"]["middleware"]
    assert recorder.cls is UploadRecorder and recorder.kwargs["ledger"] is app.LEDGERS[demo]
    assert locale.cls is PageLocale
    assert demo._queue.max_size == 16 and demo._queue.default_concurrency_limit == 2
    assert app.os.environ["GRADIO_ANALYTICS_ENABLED"] == "False"


def test_example_files_outlive_cache_sweeps_and_another_apps_shutdown(monkeypatch, tmp_path):
    """The cause of the example clicks that ran nothing (issue 16): Gradio's cache is shared by every
    app of the process, and its delete_cache sweep and any app's shutdown deleted the example copies.
    The apps here use a private cache, so a failure deletes nothing another app on the machine uses."""
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    from gradio.route_utils import delete_files_created_by_app  # what both the sweep and shutdown run

    from webapp.examples import MODEL, available_pairs

    demo = app.build_demo(AppConfig())
    other = app.build_demo(AppConfig())  # e.g. the `--example` app a test starts and closes
    copies = {Path(p) for block in demo.blocks.values() for p in getattr(block, "temp_files", ())}
    wanted = {Path(f).name for pair in available_pairs() for f in pair.files("target")} | {MODEL.name}
    assert wanted <= {p.name for p in copies} and all(p.is_relative_to(tmp_path) for p in copies)
    delete_files_created_by_app(other, age=None)  # the other app stops
    delete_files_created_by_app(demo, age=0)  # a sweep long after the start
    assert [p for p in copies if not p.is_file()] == []
    # An app in another process (older code, or its clean_up) deletes them anyway: the next analysis
    # of an example click puts them back from the originals before reading them.
    ledger = app.LEDGERS[demo]
    model_copy = next(p for p in copies if p.name == MODEL.name)
    pair_copies = [str(p) for p in copies if p.name in wanted and p != model_copy]
    for path in [model_copy, *map(Path, pair_copies)]:
        path.unlink()
    with app._using_uploads(ledger, None, {"baseline": pair_copies, "mindir": str(model_copy)}, "en"):
        assert model_copy.read_bytes() == MODEL.read_bytes()
        assert all(Path(p).is_file() for p in pair_copies)
    assert model_copy.is_file(), "pinned: the request letting go does not delete it"


def _launch(config: AppConfig):
    demo = app.build_demo(config)
    _, url, _ = demo.launch(
        server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True,
        **app.launch_kwargs(config, demo),
    )  # fmt: skip
    return demo, url


def test_login_from_the_environment_protects_the_api():
    config = AppConfig.from_env({"PERF_DOCTOR_USERS": "alice:wonderland"})
    demo, url = _launch(config)
    try:
        with pytest.raises(Exception, match=r"(?i)auth|login|401"):
            Client(url, verbose=False, analytics_enabled=False)
        logged_in = Client(url, auth=("alice", "wonderland"), verbose=False, analytics_enabled=False)
        result = logged_in.predict(handle_file(str(RESNET)), api_name="/inspect_model")
        assert result[REPORT]["kind"] == "mindir"
    finally:
        demo.close()


def test_uploads_above_max_file_size_are_refused():
    demo, url = _launch(AppConfig(max_file_size="100kb"))
    try:
        small = Client(url, verbose=False, analytics_enabled=False)
        with pytest.raises(ValueError, match=r"(?i)size"):
            small.predict(handle_file(str(RESNET)), api_name="/inspect_model")  # 293 kB
    finally:
        demo.close()


def test_handlers_only_delegate_to_the_facade(monkeypatch):
    """The compare handler passes its inputs through unchanged and shows what the facade returns."""
    from doctor import diagnose

    seen = {}

    def spy(*args, **kwargs):
        seen.update(args=args, kwargs=kwargs)
        return diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph")

    monkeypatch.setattr(app, "diagnose", spy)
    request = type("Request", (), {"headers": {"accept-language": "zh-CN,zh;q=0.9"}})()
    outputs = app.compare(["a.zip"], ["b.zip"], None, 1.0, "second", request, lambda *a, **k: None)
    assert seen["args"] == (["a.zip"], ["b.zip"], None)
    assert seen["kwargs"]["rank"] == 1 and seen["kwargs"]["baseline_role"] == "second"
    assert seen["kwargs"]["lang"] == "zh"
    assert outputs["report_json"]["kind"] == "pair"
    assert set(outputs) == set(app.COMPARE_OUTPUTS)


def test_results_key_values_by_component_and_refuse_a_missing_one():
    """Handlers return {component: value}; the event's order is the order of the output names."""
    with gr.Blocks():
        parts = {"verdict": gr.Markdown(), "report_json": gr.JSON()}
        results = app.Results(("report_json", "verdict"), parts)
    assert results.outputs == [parts["report_json"], parts["verdict"]]
    keyed = results.keyed({"verdict": "v", "report_json": {}})
    assert keyed == {parts["verdict"]: "v", parts["report_json"]: {}}
    with pytest.raises(ValueError, match="outputs are"):
        results.keyed({"verdict": "v"})
    with pytest.raises(ValueError, match="are not the outputs"):
        app.Results(("verdict",), parts)


def test_report_files_are_written_outside_the_repository(client, tmp_path):
    before = {p for p in Path(app.__file__).parent.iterdir()}
    result = diagnose(client, EXAMPLE / "baseline", EXAMPLE / "target")
    assert result[REPORT]["kind"] == "pair"
    assert {p for p in Path(app.__file__).parent.iterdir()} == before
    assert not app.FILES.root.is_relative_to(Path(app.__file__).parent)


def test_the_documented_api_snippet_runs(app_url, monkeypatch, capsys):
    """docs/api.md's example, run as written against the test server."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text(encoding="utf-8")
    snippet = doc.split("```python\n", 1)[1].split("\n```", 1)[0]
    assert 'Client("http://127.0.0.1:7860/")' in snippet
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    exec(compile(snippet.replace("http://127.0.0.1:7860/", app_url), "docs/api.md", "exec"), {})
    out = capsys.readouterr().out
    assert "1 precision-mismatch" in out and "conv-bn-act 33 fusible: 33" in out


def test_reprofile_with_an_edited_report_is_one_input_error():
    """Issue 33 item 11: the private reprofile event gets the shown report back from the client; an
    edited one is a clear error, not "Internal error (ValidationError)"."""
    from doctor import diagnose

    report = diagnose(CPU / "train_amp_o2_graph", CPU / "infer_fp32_graph", isolate=False).to_dict()
    assert app.reprofile(report, []).value  # the untouched report gives a script
    for edited in (
        {**report, "kind": "nonsense"},
        {**report, "extra": 1},
        {"kind": "pair"},
        ["not", "a", "dict"],
    ):
        with pytest.raises(gr.Error) as caught:
            app.reprofile(edited, [])  # type: ignore[arg-type]
        assert caught.value.message.startswith("report: is not a report this app wrote (")
        assert "Internal error" not in caught.value.message


@pytest.mark.parametrize("rank", ["NaN", "Infinity", "1e400", "1e308", "2.5"])
def test_a_rank_that_is_no_device_number_is_one_clear_error(app_url, rank):
    """Issue 33 items 10 and 13 through the raw HTTP API (JSON allows NaN, Infinity and 1e400, which
    gradio_client refuses to send): one clear error, no Gradio traceback, no null message, no 309 digits."""
    import httpx

    base = app_url.rstrip("/") + "/gradio_api/call/diagnose"
    body = '{"data": [null, null, null, ' + rank + ', "auto", null, "en"]}'
    event = httpx.post(base, content=body, headers={"Content-Type": "application/json"}, timeout=60).json()
    stream = httpx.get(f"{base}/{event['event_id']}", timeout=120).text
    assert "event: error" in stream, stream
    assert "the rank must be a whole number from 0 to 65,535" in stream and "0" * 30 not in stream, stream
