"""Cases and the Triage tab through the app's API (gradio_client against the app launched in-process):
every diagnosis gets a case link, and staff list, filter, group, annotate, open and delete cases."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError

import app
from desk import CaseBook, triage_view
from desk.cases import SqliteCaseStore
from doctor.config import AppConfig
from tests.support.inputs import CPU, MINDIR, XSS, files_of, free_port

pytestmark = pytest.mark.slow

REPORT, FILES = 0, 1  # what /diagnose, /inspect_model and /case return
MODEL = MINDIR / "conv_bn_relu_eval.mindir"


def _launch(config: AppConfig) -> tuple[object, str]:
    demo = app.build_demo(config)
    _, url, _ = demo.launch(
        server_name="127.0.0.1",
        server_port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
        **app.launch_kwargs(config, demo),
    )
    return demo, url


@pytest.fixture(scope="module")
def triage_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The app with the Triage tab on (no login: a private network) and its case database."""
    db = tmp_path_factory.mktemp("cases") / "cases.sqlite3"
    demo, url = _launch(AppConfig(triage="on", case_db=str(db)))
    yield url, db
    demo.close()


@pytest.fixture(scope="module")
def client(triage_app: tuple[str, Path]) -> Client:
    return Client(triage_app[0], verbose=False, analytics_enabled=False)


@pytest.fixture(scope="module")
def cases(client: Client) -> dict[str, str]:
    """Three diagnoses run through the API: case id by name."""
    found = {}
    for name, baseline, target in (("amp", "train_amp_o2_graph", "infer_fp32_graph"),
                                   ("pynative", None, "infer_fp32_pynative")):  # fmt: skip
        result = client.predict(
            [handle_file(p) for p in files_of(CPU / baseline)] if baseline else [],
            [handle_file(p) for p in files_of(CPU / target)],
            None,
            None,
            "auto",
            api_name="/diagnose",
        )
        found[name] = result[REPORT]["case"]["id"]
    found["model"] = client.predict(handle_file(str(MODEL)), api_name="/inspect_model")[REPORT]["case"]["id"]
    return found


def _rows(table: dict) -> list[dict]:
    value = table["value"]
    return [dict(zip(value["headers"], row, strict=True)) for row in value["data"]]


def listing(client: Client, cause: str = "", severity: str = "", status: str = "") -> tuple[list, list]:
    table, groups = client.predict(cause, severity, status, 200, api_name="/triage_list")
    assert set(table["datatype"]) <= {"str", "number"} and set(groups["datatype"]) <= {"str", "number"}
    return _rows(table), _rows(groups)


def test_every_diagnosis_gets_a_case_and_a_link_that_reopens_it(client, triage_app):
    url, db = triage_app
    report, files = client.predict(handle_file(str(MODEL)), api_name="/inspect_model")
    case_id = report["case"]["id"]
    assert report["case"]["link"] == f"{url.rstrip('/')}/?case={case_id}"
    assert all(case_id in Path(path).name for path in files)  # the downloads are named after the case
    assert SqliteCaseStore(db).get(case_id).report == {k: v for k, v in report.items() if k != "case"}
    opened, _ = client.predict(case_id, "en", api_name="/case")
    assert opened == report


def test_the_page_shows_the_case_banner_and_link(triage_app):
    """The Inspect tab's handler, in-process on the same case store: the banner and the link box."""
    _, db = triage_app
    book = CaseBook.from_config(AppConfig(triage="on", case_db=str(db)))
    values = app.inspect(str(MODEL), type("Request", (), {"headers": {}})(), None, cases=book)
    banner, link = values["case_info"], values["case_link"].value
    case_id = link.rsplit("case=", 1)[1]
    assert banner == f"Case `{case_id}` saved: the link below reopens this report for 30 days."
    assert values["case_link"].visible is True


def test_triage_list_shows_recent_cases_with_their_columns_and_groups(client, cases):
    rows, groups = listing(client)
    by_case = {row["case"]: row for row in rows}
    assert set(cases.values()) <= set(by_case)
    amp = by_case[cases["amp"]]
    assert (amp["kind"], amp["layouts"], amp["top_cause"], amp["severity"], amp["status"]) == (
        "pair",
        "cpu-ms",
        "precision-mismatch",
        "high",
        "new",
    )
    assert amp["submission"] == "baseline: cpu_framework_0.txt +4 · target: cpu_framework_0.txt +4"
    assert by_case[cases["pynative"]]["kind"] == "single" and by_case[cases["model"]]["kind"] == "model"
    assert [row["when"] for row in rows] == sorted((row["when"] for row in rows), reverse=True)
    counts = {group["top_cause"]: group["cases"] for group in groups}
    assert counts["precision-mismatch"] == sum(1 for row in rows if row["top_cause"] == "precision-mismatch")
    assert sum(counts.values()) == len(rows)


def test_filters_by_cause_severity_and_status(client, cases):
    rows, groups = listing(client, cause="precision-mismatch")
    assert rows and all(row["top_cause"] == "precision-mismatch" for row in rows)
    assert [group["top_cause"] for group in groups] == ["precision-mismatch"]
    assert cases["amp"] in {row["case"] for row in rows}
    rows, _ = listing(client, severity="high")
    assert rows and all(row["severity"] == "high" for row in rows)
    with pytest.raises(AppError, match="severe is not in the list of choices"):  # Gradio checks choices
        client.predict("", "severe", "", 200, api_name="/triage_list")


def test_staff_set_status_and_note_and_filter_by_status(client, cases):
    message, table, _ = client.predict(
        cases["pynative"], "answered", XSS, "", "", "", 200, api_name="/triage_update"
    )
    assert message == f"Case `{cases['pynative']}` saved: answered."
    row = next(row for row in _rows(table) if row["case"] == cases["pynative"])
    assert (row["status"], row["note"]) == ("answered", XSS)
    rows, _ = listing(client, status="answered")
    assert [row["case"] for row in rows] == [cases["pynative"]]
    with pytest.raises(AppError, match=r"'closed' .* is not in the list of choices"):
        client.predict(cases["pynative"], "closed", "", "", "", "", 200, api_name="/triage_update")


def test_a_deleted_case_is_gone_for_its_link_too(client, triage_app):
    case_id = client.predict(handle_file(str(MODEL)), api_name="/inspect_model")[REPORT]["case"]["id"]
    message, table, _ = client.predict(case_id, "", "", "", 200, api_name="/triage_delete")
    assert message == f"Case `{case_id}` deleted."
    assert case_id not in {row["case"] for row in _rows(table)}
    with pytest.raises(AppError, match="no case has this id"):
        client.predict(case_id, "en", api_name="/case")


def test_malformed_and_unknown_ids_are_one_clear_message(client):
    for bad, problem in [(XSS, "this is not a case id"), ("", "no case id was given"),
                         ("A" * 22, "no case has this id")]:  # fmt: skip
        with pytest.raises(AppError, match=problem):
            client.predict(bad, "en", api_name="/case")
        with pytest.raises(AppError, match=problem):
            client.predict(bad, "answered", "", "", "", "", 200, api_name="/triage_update")


def test_the_public_app_has_no_case_list(app_url):
    """Without a login (and without PERF_DOCTOR_TRIAGE=on) nobody can list other users' cases."""
    api = Client(app_url, verbose=False, analytics_enabled=False).view_api(
        print_info=False, return_format="dict"
    )["named_endpoints"]
    assert set(api) == {"/diagnose", "/inspect_model", "/compare_outputs", "/case"}  # a case link: anyone
    assert not {"/triage_list", "/triage_update", "/triage_delete", "/triage_attach"} & set(api)


def test_only_staff_users_may_triage(tmp_path):
    env = {"PERF_DOCTOR_USERS": "ann:pw-ann,bob:pw-bob", "PERF_DOCTOR_STAFF": "ann"}
    config = AppConfig.from_env({**env, "PERF_DOCTOR_CASE_DB": str(tmp_path / "cases.sqlite3")})
    demo, url = _launch(config)
    try:
        staff = Client(url, auth=("ann", "pw-ann"), verbose=False, analytics_enabled=False)
        table, _ = staff.predict("", "", "", 200, api_name="/triage_list")
        assert table["value"]["data"] == []
        user = Client(url, auth=("bob", "pw-bob"), verbose=False, analytics_enabled=False)
        with pytest.raises(AppError, match="for support staff only"):
            user.predict("", "", "", 200, api_name="/triage_list")
        with pytest.raises(AppError, match="for support staff only"):
            user.predict("A" * 22, "answered", "", "", "", "", 200, api_name="/triage_update")
    finally:
        demo.close()


def _zipped(folder: Path, dest: Path) -> Path:
    """A real profile folder as the .zip a user uploads."""
    import zipfile

    archive = dest / f"{folder.name}.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, path.relative_to(folder.parent).as_posix())
    return archive


def test_a_case_with_kept_uploads_receives_its_after_run_in_the_triage_tab(tmp_path):
    demo, url = _launch(AppConfig(triage="on", case_db=str(tmp_path / "c.sqlite3"), keep_uploads=True))
    try:
        client = Client(url, verbose=False, analytics_enabled=False)
        archives = [_zipped(CPU / name, tmp_path) for name in ("train_fp32_graph", "infer_fp32_pynative")]
        result = client.predict(
            [handle_file(str(archives[0]))],
            [handle_file(str(archives[1]))],
            None,
            None,
            "auto",
            api_name="/diagnose",
        )
        case_id = result[REPORT]["case"]["id"]
        after = [handle_file(str(_zipped(CPU / "infer_fp32_graph", tmp_path)))]
        message, table, _ = client.predict(case_id, after, "", "", "", 200, api_name="/triage_attach")
        assert f"Case `{case_id}` received its after run" in message and "execution-mode-mismatch" in message
        row = next(r for r in _rows(table) if r["case"] == case_id)
        assert (row["resolved"], row["remaining"]) == ("execution-mode-mismatch", "")
        assert row["gain_ms"] > row["predicted_gain_ms"] > 0
        opened, _ = client.predict(case_id, "en", api_name="/case")
        assert opened["after"]["causes"][0]["status"] == "resolved"
    finally:
        demo.close()


def test_staff_notes_and_status_reach_staff_only(tmp_path):
    """Issue 33 item 4: a user who is not staff opens a case link: the banner has no status and no note
    (the page's banner, as the app's open_case makes it for the logged-in user; tests/test_browser.py
    shows it in the page)."""
    env = {"PERF_DOCTOR_USERS": "ann:pw-ann,bob:pw-bob", "PERF_DOCTOR_STAFF": "ann"}
    config = AppConfig.from_env({**env, "PERF_DOCTOR_CASE_DB": str(tmp_path / "cases.sqlite3")})
    model = tmp_path / "notes_model.mindir"  # its own upload: another app of this module removed its copy
    model.write_bytes(MODEL.read_bytes())
    demo, url = _launch(config)
    try:
        user = Client(url, auth=("bob", "pw-bob"), verbose=False, analytics_enabled=False)
        staff = Client(url, auth=("ann", "pw-ann"), verbose=False, analytics_enabled=False)
        case_id = user.predict(handle_file(str(model)), api_name="/inspect_model")[REPORT]["case"]["id"]
        staff.predict(case_id, "answered", "Customer: ACME", "", "", "", 200, api_name="/triage_update")
        book = CaseBook.from_config(config)

        def banner(username: str) -> str:
            staff = config.may_triage(username)
            return triage_view.reopen_case(book, case_id, "en", None, staff=staff)[1]

        seen_by_staff = banner("ann")
        assert "status: answered" in seen_by_staff and "Customer: ACME" in seen_by_staff
        seen_by_user = banner("bob")
        assert seen_by_user.startswith(f"Case `{case_id}` of ")
        assert "ACME" not in seen_by_user and "answered" not in seen_by_user and "status" not in seen_by_user
    finally:
        demo.close()
