"""Uploads are deleted from Gradio's cache when the last analysis using them ends: the reference-counting
ledger, the middleware that records what the upload route returns, and a second analysis of a deleted
upload through the app."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from core.errors import InputError
from doctor.config import public_folders
from tests.support.inputs import CPU, files_of
from webapp.uploads import GONE, UPLOAD_ROUTE, UploadLedger, UploadRecorder, given_paths

T = TypeVar("T")


def run_apart(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run in a thread of its own: the browser tests' Playwright keeps an event loop running in
    the main thread for the whole session, where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result(timeout=60)


def _upload(root: Path, name: str = "profile.zip", content: bytes = b"secret", sha: str = "ab12") -> Path:
    """A file where Gradio would store an upload: <root>/<sha>/<name>."""
    path = root / sha / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "gradio"
    folder.mkdir()
    return folder


# ------------------------------------------------------------------------------------------- ledger


def test_a_recorded_upload_is_deleted_when_its_analysis_ends(root: Path) -> None:
    ledger = UploadLedger(root)
    path = _upload(root)
    ledger.record([str(path)])
    assert ledger.count(path) == 1
    ledger.release([str(path)])
    assert not path.exists() and ledger.count(path) == 0
    assert path.parent.is_dir(), "the <sha>/ folder stays (a concurrent upload may rename into it)"


def test_a_shared_path_survives_the_first_release_and_goes_with_the_second(root: Path) -> None:
    ledger = UploadLedger(root)
    path = _upload(root)
    ledger.record([str(path)])  # user 1
    ledger.record([str(path)])  # user 2: the same bytes and name, so the same path
    ledger.release([str(path)])
    assert path.read_bytes() == b"secret", "user 2's queued request still needs it"
    ledger.release([str(path)])
    assert not path.exists()


def test_each_occurrence_counts_once(root: Path) -> None:
    ledger = UploadLedger(root)
    path = _upload(root)
    ledger.record([str(path), str(path)])  # one upload POST holding the file twice
    ledger.release([str(path)])
    assert path.exists()
    ledger.release([str(path), str(path)])  # a release beyond the count is ignored
    assert not path.exists() and ledger.count(path) == 0


def test_paths_the_ledger_did_not_record_are_never_deleted(root: Path, tmp_path: Path) -> None:
    ledger = UploadLedger(root)
    cached_example, users_own = _upload(root, "example.csv"), _upload(tmp_path, "mine.zip")
    ledger.release([str(cached_example), str(users_own)])
    assert cached_example.exists() and users_own.exists()


def test_pinned_example_files_survive_an_upload_of_the_same_bytes(root: Path) -> None:
    ledger = UploadLedger(root)
    example = _upload(root, "trace_view.json")
    ledger.pin([str(example)])
    ledger.record([str(example)])  # a user uploaded a byte-identical copy: Gradio gives the same path
    ledger.release([str(example)])
    assert example.exists() and ledger.count(example) == 0


def test_paths_outside_the_upload_folder_are_never_recorded_nor_deleted(root: Path, tmp_path: Path) -> None:
    ledger = UploadLedger(root)
    outside = _upload(tmp_path, "other.zip", sha="elsewhere")
    sneaky = f"{root}/ab12/../../elsewhere/other.zip"
    ledger.record([str(outside), sneaky, str(root), "", None, 42])  # type: ignore[list-item]
    ledger.release([str(outside), sneaky, str(root)])
    assert outside.exists() and root.is_dir()
    assert ledger.count(outside) == 0


def test_symbolic_links_are_never_followed(root: Path, tmp_path: Path) -> None:
    ledger = UploadLedger(root)
    target = _upload(tmp_path, "precious.zip", sha="home")
    link = root / "cd34" / "link.zip"
    link.parent.mkdir()
    link.symlink_to(target)
    linked_folder = root / "ef56"
    linked_folder.symlink_to(target.parent, target_is_directory=True)  # a folder link out of the root
    for path in (link, linked_folder / "precious.zip"):
        ledger.record([str(path)])
        ledger.release([str(path)])
    assert target.read_bytes() == b"secret"
    assert link.is_symlink(), "a link in the upload folder is not deleted either (only regular files)"


def test_a_file_already_gone_is_no_error(root: Path) -> None:
    ledger = UploadLedger(root)
    path = _upload(root)
    ledger.record([str(path)])
    path.unlink()  # delete_cache was first
    ledger.release([str(path)])
    assert ledger.count(path) == 0


def test_a_count_reaching_zero_during_an_upload_waits_for_the_uploads_in_flight(root: Path) -> None:
    """An upload in flight may just have written the same file (same bytes, same name) before it answers:
    the file is deleted only once no upload is in flight and none recorded the path again."""
    ledger = UploadLedger(root)
    path = _upload(root)
    ledger.record([str(path)])
    with ledger.uploading():
        ledger.release([str(path)])
        assert path.exists()
        ledger.record([str(path)])  # the upload in flight was of the same file
    assert path.exists() and ledger.count(path) == 1
    with ledger.uploading():
        with ledger.uploading():
            ledger.release([str(path)])
        assert path.exists(), "another upload is still in flight"
    assert not path.exists()


def test_counts_not_refreshed_for_a_long_time_are_forgotten(root: Path) -> None:
    ledger = UploadLedger(root, forget_after=0.0)
    abandoned, fresh = _upload(root, "a.zip"), _upload(root, "b.zip")
    ledger.record([str(abandoned)])  # uploaded, never analysed
    ledger.record([str(fresh)])
    assert ledger.count(abandoned) == 0 and ledger.count(fresh) == 1


@pytest.mark.slow
def test_many_threads_uploading_and_releasing_leave_no_count_and_no_file(root: Path) -> None:
    """Users upload shared files as Gradio does (write, rename into place, answer), then analyse them:
    a file is never missing while a request that uploaded it runs, and nothing is left at the end."""
    ledger = UploadLedger(root)
    paths = [str(_upload(root, f"f{index}.csv", sha=f"s{index % 4}")) for index in range(8)]
    start = threading.Barrier(16)
    errors: list[BaseException] = []

    def upload(path: str, user: int) -> None:
        staging = f"{os.path.dirname(path)}/.upload-{user}"
        Path(staging).write_bytes(b"same bytes")
        os.replace(staging, path)

    def user(offset: int) -> None:
        try:
            start.wait(timeout=30)
            for round_ in range(200):
                mine = [paths[(offset + round_ + k) % len(paths)] for k in range(3)]
                with ledger.uploading():
                    for path in mine:
                        upload(path, offset)
                    ledger.record(mine)
                assert all(Path(p).exists() for p in mine), "a counted file was deleted"
                ledger.release(mine)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=user, args=(offset,)) for offset in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert [ledger.count(p) for p in paths] == [0] * len(paths)
    assert [p for p in paths if os.path.exists(p)] == []


def test_a_deleted_upload_is_reported_as_such(root: Path, tmp_path: Path) -> None:
    ledger = UploadLedger(root)
    path = _upload(root, "marked.zip")
    ledger.record([str(path)])
    ledger.require_present([str(path), str(tmp_path / "not-an-upload.zip")])  # only uploads are checked
    ledger.release([str(path)])
    with pytest.raises(InputError) as caught:
        ledger.require_present([str(path)])
    assert caught.value.message == f"marked.zip: {GONE}"
    assert str(root) not in caught.value.message


def test_given_paths_flattens_handler_values_and_keeps_repeats() -> None:
    assert given_paths([["a", "b"], None, "c", ["a"], "", Path("d")]) == ["a", "b", "c", "a", "d"]


# ---------------------------------------------------------------------------------------- middleware


def _uploaded(root: Path) -> list[str]:
    return [str(root / "ab12" / "a.zip"), str(root / "cd34" / "b.zip")]


def _app(root: Path, ledger: UploadLedger) -> Starlette:
    """A stand-in for Gradio: an upload route answering stored paths, and other routes."""

    async def upload(request: Request) -> Response:
        if request.query_params.get("fail"):
            return PlainTextResponse("Invalid file name", status_code=400)
        return JSONResponse(_uploaded(root))

    async def other(request: Request) -> Response:
        return JSONResponse(_uploaded(root))

    async def stream(request: Request) -> Response:
        async def chunks():
            yield b"one,"
            yield b"two"

        return StreamingResponse(chunks(), media_type="text/plain")

    routes = [
        Route(UPLOAD_ROUTE, upload, methods=["GET", "POST"]),
        Route("/prefix" + UPLOAD_ROUTE, upload, methods=["POST"]),
        Route("/gradio_api/queue/join", other, methods=["POST"]),
        Route("/stream", stream),
    ]
    return Starlette(routes=routes, middleware=[Middleware(UploadRecorder, ledger=ledger)])


def _client(app: Starlette) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test")


def test_the_middleware_records_exactly_the_returned_paths(root: Path) -> None:
    ledger = UploadLedger(root)

    async def run() -> list[httpx.Response]:
        async with _client(_app(root, ledger)) as client:
            return [
                await client.post(UPLOAD_ROUTE, files={"files": ("a.zip", b"x")}),
                await client.post("/prefix" + UPLOAD_ROUTE, files={"files": ("a.zip", b"x")}),
            ]

    answers = run_apart(run())
    assert [a.json() for a in answers] == [_uploaded(root)] * 2, "the body reaches the client unchanged"
    assert answers[0].headers["content-length"] == str(len(answers[0].content))
    assert [ledger.count(p) for p in _uploaded(root)] == [2, 2]


def test_the_middleware_leaves_other_routes_and_failed_uploads_alone(root: Path) -> None:
    ledger = UploadLedger(root)

    async def run() -> list[httpx.Response]:
        async with _client(_app(root, ledger)) as client:
            return [
                await client.post(UPLOAD_ROUTE + "?fail=1", files={"files": ("a.zip", b"x")}),
                await client.get(UPLOAD_ROUTE),
                await client.post("/gradio_api/queue/join", json={}),
                await client.get("/stream"),
            ]

    failed, got, joined, streamed = run_apart(run())
    assert (failed.status_code, failed.text) == (400, "Invalid file name")
    assert got.status_code == 200 and joined.json() == _uploaded(root)
    assert streamed.text == "one,two"
    assert [ledger.count(p) for p in _uploaded(root)] == [0, 0]


def test_the_paths_are_counted_before_the_last_chunk_reaches_the_client(root: Path) -> None:
    """A client may queue an analysis as soon as it has the paths: the count must already exist."""
    ledger = UploadLedger(root)
    body = json.dumps(_uploaded(root)).encode()

    async def gradio(scope, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"json")]})
        await send({"type": "http.response.body", "body": body[:10], "more_body": True})
        await send({"type": "http.response.body", "body": body[10:], "more_body": False})

    seen: list[tuple[bytes, int]] = []

    async def client_side(message) -> None:
        if message["type"] == "http.response.body":
            seen.append((message["body"], ledger.count(_uploaded(root)[0])))

    async def nothing() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "POST", "path": UPLOAD_ROUTE, "headers": []}
    run_apart(UploadRecorder(gradio, ledger)(scope, nothing, client_side))
    assert b"".join(chunk for chunk, _ in seen) == body
    assert [count for _, count in seen] == [0, 1], "streamed through; recorded before the final chunk"
    assert ledger._uploading == 0, "the upload ended"


# ------------------------------------------------------------------------------------ through the app


def _call(url: str, api: str, data: list) -> str:
    """One call through Gradio's HTTP API with server-side paths (what the browser sends on a second
    click); returns the event stream's text."""
    with httpx.Client(base_url=url, timeout=120, trust_env=False) as http:
        answer = http.post(f"gradio_api/call/{api}", json={"data": data})
        answer.raise_for_status()
        return http.get(f"gradio_api/call/{api}/{answer.json()['event_id']}").text


@pytest.mark.slow
def test_diagnosing_an_upload_twice_says_it_was_deleted(app_url: str) -> None:
    with httpx.Client(base_url=app_url, trust_env=False) as http:

        def upload(folder: Path) -> list[dict]:
            files = [("files", (Path(p).name, Path(p).read_bytes())) for p in files_of(folder)]
            answer = http.post("gradio_api/upload", files=files)
            answer.raise_for_status()
            return [{"path": path, "meta": {"_type": "gradio.FileData"}} for path in answer.json()]

        # Not train_fp32_graph: its files are byte for byte the first bundled example's, whose copies in
        # Gradio's cache are pinned (never deleted), and the cache is content-addressed.
        baseline, target = upload(CPU / "train_amp_o2_graph"), upload(CPU / "infer_fp32_graph_batch32")
    data = [baseline, target, None, None, "auto", None]  # the last: no after-the-fix run
    first = _call(app_url, "compare", data)
    assert first.startswith("event: complete")
    assert not any(os.path.exists(file["path"]) for file in data[0] + data[1])
    second = _call(app_url, "compare", data)
    assert second.startswith("event: error")
    error = json.loads(second.split("data: ", 1)[1].splitlines()[0])
    assert error["title"] == "Input problem"
    assert error["error"].endswith(": " + GONE)
    assert "Traceback" not in second and "/gradio/" not in error["error"]


def test_no_diagnosis_workspace_inside_gradios_temp_folder(tmp_path: Path, monkeypatch) -> None:
    """Files under GRADIO_TEMP_DIR can be fetched by any user of the app: the facade never extracts there."""
    import tempfile

    from doctor import diagnose

    monkeypatch.delenv("GRADIO_TEMP_DIR", raising=False)
    assert public_folders() == {}
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    assert public_folders() == {"GRADIO_TEMP_DIR": str(tmp_path)}
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "inside"))
    with pytest.raises(ValueError, match="GRADIO_TEMP_DIR"):
        diagnose(CPU / "infer_fp32_graph", isolate=False)


# ----------------------------------------------------------------------------------- browser sessions


def test_a_session_keeps_its_uploads_across_runs_until_the_user_clears_them(root: Path) -> None:
    """The issue's re-run: the page holds what its inputs show, each run holds its files while it runs."""
    ledger = UploadLedger(root)
    baseline, target = _upload(root, "train.zip", sha="aa"), _upload(root, "infer.zip", sha="bb")
    ledger.record([str(baseline), str(target)])
    ledger.open_session("page")
    ledger.hold("page", "baseline", [str(baseline)])
    ledger.hold("page", "target", [str(target)])
    assert ledger.count(baseline) == 1, "the session took over the upload, it did not add a holder"
    for _ in range(2):  # two runs of the same inputs
        ledger.claim([str(baseline), str(target)])
        assert ledger.count(baseline) == 2
        ledger.release([str(baseline), str(target)])
        assert baseline.exists() and target.exists()
    replacement = _upload(root, "infer2.zip", sha="cc")
    ledger.record([str(replacement)])
    ledger.hold("page", "target", [str(replacement)])  # the user replaced only the target
    assert not target.exists() and baseline.exists() and replacement.exists()
    ledger.hold("page", "baseline", [])  # cleared
    assert not baseline.exists() and ledger.count(baseline) == 0


def test_a_closed_page_lets_go_but_another_holder_keeps_the_shared_file(root: Path) -> None:
    ledger = UploadLedger(root)
    shared = _upload(root)
    ledger.record([str(shared)])
    ledger.record([str(shared)])  # two users uploaded the same bytes under the same name
    for page in ("first", "second"):
        ledger.open_session(page)
        ledger.hold(page, "baseline", [str(shared)])
    assert ledger.count(shared) == 2
    ledger.end_session("first")
    assert shared.exists() and ledger.count(shared) == 1
    ledger.end_session("second")
    assert not shared.exists()


def test_a_request_holds_its_files_while_the_page_clears_them(root: Path) -> None:
    ledger = UploadLedger(root)
    path = _upload(root)
    ledger.record([str(path)])
    ledger.open_session("page")
    ledger.hold("page", "target", [str(path)])
    ledger.claim([str(path)])  # a run started
    ledger.hold("page", "target", [])  # the user cleared the input meanwhile
    assert path.exists(), "the running request still holds it"
    ledger.release([str(path)])
    assert not path.exists()


def test_an_api_call_without_a_page_deletes_its_upload_when_it_ends(root: Path) -> None:
    ledger = UploadLedger(root)
    path = _upload(root)
    ledger.record([str(path)])
    assert not ledger.has_session("api-call")
    ledger.claim([str(path)])
    assert ledger.count(path) == 1, "the request took over the upload"
    ledger.release([str(path)])
    assert not path.exists()


def test_idle_sessions_and_unclaimed_uploads_go_at_the_ttl(root: Path) -> None:
    ledger = UploadLedger(root, forget_after=0.0)
    held, unclaimed = _upload(root, "a.zip", sha="aa"), _upload(root, "b.zip", sha="bb")
    ledger.record([str(held), str(unclaimed)])
    ledger.open_session("idle")
    ledger.hold("idle", "baseline", [str(held)])
    ledger.open_session("later")  # any later activity sweeps
    assert not held.exists() and not unclaimed.exists()
    assert ledger.count(held) == 0 and not ledger.has_session("idle")
