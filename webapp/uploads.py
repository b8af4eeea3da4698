"""Deleting uploaded files from Gradio's upload cache once nobody uses them any more, so that confidential
profiles do not wait there (where anyone who learns a path can fetch them) for Gradio's `delete_cache` sweep.

Gradio stores each upload at `<upload folder>/<sha256 of the content>/<file name>`: byte-identical uploads
with the same name (two users, or two queued requests of one user) share one path. `UploadLedger` counts
the holders of each path and deletes the file when the last one lets go. Holders are: an upload nobody has
claimed yet (forgotten at the TTL), a browser session showing the file in an input (until the user clears
it, the session ends, or the TTL passes without activity), and a running request. An API call without a
browser session claims the upload itself, so its file goes when its analysis ends. `UploadRecorder` (ASGI
middleware) records what Gradio's upload route returns before the client sees it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core import InputError, say

LOG = logging.getLogger("perf_doctor.uploads")
UPLOAD_ROUTE = "/gradio_api/upload"  # gradio.routes: APIRouter(prefix=API_PREFIX).post("/upload")
MAX_ANSWER_BYTES = 4 << 20  # the upload route answers a JSON list of at most 1,000 paths
GONE = say("uploads.gone")


class UploadLedger:
    """Holders of the files in one upload folder; a file is deleted when its last holder lets go.

    A path's count is the number of its holders: unclaimed uploads (`record`), the inputs of browser
    sessions showing it (`hold`), and running requests (`claim` ... `release`). Claiming or holding first
    takes over an unclaimed upload of the path, so an upload is never counted twice.

    Thread-safe: the upload route answers on the event loop while analyses end in worker threads. Only
    recorded or held paths are ever deleted, never a pinned one (example files Gradio copied into its cache,
    which an upload of the same bytes and name shares), never through a symbolic link, never outside the
    folder. A path whose count drops to zero while uploads are in flight is deleted once none is (unless one
    recorded it again): an upload may have just written the same file and not answered yet.
    """

    def __init__(self, root: str | os.PathLike[str], *, forget_after: float = 3600.0) -> None:
        """`root` is Gradio's upload folder; `forget_after` is the TTL in seconds of an unclaimed upload and
        of a browser session without activity (Gradio's delete_cache removes older files anyway)."""
        self.root = Path(os.path.realpath(root))
        self.forget_after = forget_after
        self._lock = threading.Lock()
        self._counts: dict[Path, int] = {}
        self._unclaimed: dict[Path, int] = {}  # holders of _counts that are uploads nobody claimed yet
        self._recorded_at: dict[Path, float] = {}
        self._sessions: dict[str, dict[str, Counter[Path]]] = {}  # session -> input slot -> paths
        self._seen: dict[str, float] = {}  # session -> last activity
        self._pinned: set[Path] = set()
        self._sources: dict[Path, Path] = {}  # pinned copy -> the file it copies (restored from it)
        self._uploading = 0  # upload requests in flight
        self._doomed: set[Path] = set()  # counts at zero, waiting for the uploads in flight to answer
        self._swept = time.monotonic()

    def key(self, path: object) -> Path | None:
        """The absolute path with its folders resolved but not its last part (a link there is never
        followed); None for anything that is not a path strictly inside the upload folder."""
        if not isinstance(path, (str, os.PathLike)):
            return None
        text = os.fspath(path)
        if not isinstance(text, str) or not text.strip() or "\x00" in text:
            return None
        folder, name = os.path.split(os.path.abspath(text))
        if not name:
            return None
        resolved = Path(os.path.realpath(folder)) / name
        return resolved if resolved.is_relative_to(self.root) and resolved != self.root else None

    def pin(self, paths: Iterable[object]) -> None:
        """Never delete these files (example files cached by Gradio, which uploads may share)."""
        with self._lock:
            self._pinned.update(k for k in map(self.key, paths) if k is not None)

    def pin_copies(self, copies: Mapping[str, str]) -> None:
        """Pin cached copies of the app's own files (copy path -> original), so `restore` can put back a
        copy that something else deleted: the cache is shared by every app process on the machine, and
        Gradio's cache sweep or the shutdown of another app deletes copies of the same bytes and name."""
        self.pin(copies)
        with self._lock:
            for copy, source in copies.items():
                key = self.key(copy)
                if key is not None:
                    self._sources[key] = Path(source)

    def restore(self, paths: Iterable[object]) -> None:
        """Put back pinned copies among `paths` that are missing, from their originals (atomically:
        written beside, then renamed into place)."""
        for path in paths:
            key = self.key(path)
            source = self._sources.get(key) if key is not None else None
            if key is None or source is None or os.path.lexists(key):
                continue
            key.parent.mkdir(parents=True, exist_ok=True)
            staging = key.with_name(f".{key.name}.{os.getpid()}.{threading.get_ident()}")
            shutil.copyfile(source, staging)
            os.replace(staging, key)

    @contextmanager
    def uploading(self) -> Iterator[None]:
        """Around one upload request (which may rewrite a file whose count is zero before it answers):
        deletions wait until no upload is in flight."""
        with self._lock:
            self._uploading += 1
        try:
            yield
        finally:
            with self._lock:
                self._uploading -= 1
                if not self._uploading:
                    for key in self._doomed:
                        self._delete(key)
                    self._doomed.clear()

    def record(self, paths: Iterable[object]) -> None:
        """Count one unclaimed upload of each path (a path listed twice counts twice); called before the
        client learns the paths, so a request or session using them always finds its count."""
        now = time.monotonic()
        with self._lock:
            self._forget_stale(now)
            for key in filter(None, map(self.key, paths)):
                self._counts[key] = self._counts.get(key, 0) + 1
                self._unclaimed[key] = self._unclaimed.get(key, 0) + 1
                self._recorded_at[key] = now
                self._doomed.discard(key)

    def claim(self, paths: Iterable[object]) -> None:
        """A request starts using these paths (each occurrence once): it holds them until `release`."""
        with self._lock:
            for key in filter(None, map(self.key, paths)):
                self._take(key)

    def release(self, paths: Iterable[object]) -> None:
        """One finished request used these paths: decrement each occurrence's count and delete the files
        whose count reaches zero. Paths never counted are left alone; a file already gone is fine."""
        with self._lock:
            for key in filter(None, map(self.key, paths)):
                self._drop(key)

    def open_session(self, session: str) -> None:
        """A browser page opened: its inputs will hold their files (`hold`) until it closes."""
        with self._lock:
            self._forget_stale(time.monotonic())
            self._sessions.setdefault(session, {})
            self._seen[session] = time.monotonic()

    def has_session(self, session: str | None) -> bool:
        """Whether `session` is an open browser page (API calls have none)."""
        with self._lock:
            return session is not None and session in self._sessions

    def hold(self, session: str, slot: str, paths: Iterable[object]) -> None:
        """The browser session's input `slot` now shows `paths`: hold the new ones, let go of the ones
        the user cleared or replaced (deleted when nobody else holds them)."""
        now = time.monotonic()
        wanted = Counter(filter(None, map(self.key, paths)))
        with self._lock:
            self._forget_stale(now)
            slots = self._sessions.setdefault(session, {})
            self._seen[session] = now
            held = slots.get(slot, Counter())
            for key in (wanted - held).elements():
                self._take(key)
            for key in (held - wanted).elements():
                self._drop(key)
            if wanted:
                slots[slot] = wanted
            else:
                slots.pop(slot, None)

    def end_session(self, session: str) -> None:
        """The browser page closed: let go of everything its inputs held."""
        with self._lock:
            self._end(session)

    def count(self, path: object) -> int:
        """The current count of a path (0 when not recorded), for tests and logs."""
        key = self.key(path)
        with self._lock:
            return self._counts.get(key, 0) if key is not None else 0

    def require_present(self, paths: Iterable[object]) -> None:
        """Raise an InputError naming the file when a path inside the upload folder no longer exists
        (cleared by its last holder or expired), instead of a confusing "not found"."""
        for path in paths:
            key = self.key(path)
            if key is not None and not os.path.lexists(key):
                raise InputError(GONE, path=key.name)

    def delete_all(self) -> int:
        """Delete every recorded upload now, whatever its count (the app is stopping); returns how many
        paths were recorded. Pinned files stay, as everywhere."""
        with self._lock:
            keys = [*self._counts, *self._doomed]
            for key in keys:
                self._delete(key)
            self._counts.clear()
            self._recorded_at.clear()
            self._doomed.clear()
        return len(keys)

    # Called with the lock held.

    def _take(self, key: Path) -> None:
        """One more holder: an unclaimed upload of the path if there is one, else a new count."""
        if self._unclaimed.get(key, 0) > 0:
            self._unclaimed[key] -= 1
            if not self._unclaimed[key]:
                del self._unclaimed[key], self._recorded_at[key]
        else:
            self._counts[key] = self._counts.get(key, 0) + 1
        self._doomed.discard(key)

    def _drop(self, key: Path) -> None:
        """One holder fewer; at zero the file is deleted (after the uploads in flight)."""
        count = self._counts.get(key, 0)
        if count <= 0:
            return
        if count > 1:
            self._counts[key] = count - 1
            if self._unclaimed.get(key, 0) > count - 1:
                self._unclaimed[key] = count - 1
            return
        del self._counts[key]
        self._unclaimed.pop(key, None)
        self._recorded_at.pop(key, None)
        if self._uploading:
            self._doomed.add(key)
        else:
            self._delete(key)

    def _end(self, session: str) -> None:
        for held in self._sessions.pop(session, {}).values():
            for key in held.elements():
                self._drop(key)
        self._seen.pop(session, None)

    def _forget_stale(self, now: float) -> None:
        """At the TTL (checked at most once a minute): drop uploads nobody claimed and end sessions without
        activity, deleting the files nobody else holds."""
        if now - self._swept < min(60.0, self.forget_after):
            return
        self._swept = now
        for key, when in list(self._recorded_at.items()):
            if now - when > self.forget_after:
                for _ in range(self._unclaimed.get(key, 0)):
                    self._drop(key)
                self._unclaimed.pop(key, None)
                self._recorded_at.pop(key, None)
        for session, when in list(self._seen.items()):
            if now - when > self.forget_after:
                self._end(session)

    def _delete(self, key: Path) -> None:
        """Unlink one regular file (never a link, a folder or a pinned file); the <sha>/ folder stays:
        a concurrent upload of the same content may be renaming into it, delete_cache removes it later."""
        if key in self._pinned:
            return
        try:
            if stat.S_ISREG(os.lstat(key).st_mode):
                os.unlink(key)
        except FileNotFoundError:
            pass
        except OSError as error:
            LOG.warning("could not delete an upload: %s", error.strerror)


@contextmanager
def holding(ledger: UploadLedger | None, session: str | None, slots: Mapping[str, object]) -> Iterator[None]:
    """Around one analysis of uploaded files (`slots`: input name -> its value): an open browser session
    holds what its inputs show (a re-run works), the request holds every path while it runs and lets go
    after (the last holder deletes the file); an upload already deleted is an InputError naming it."""
    if ledger is None:
        yield
        return
    if ledger.has_session(session):
        for slot, value in slots.items():
            ledger.hold(str(session), slot, given_paths([value]))
    paths = given_paths(slots.values())
    ledger.restore(paths)  # a bundled example's copy deleted by another app or a cache sweep
    ledger.claim(paths)
    try:
        ledger.require_present(paths)
        yield
    finally:
        ledger.release(paths)


def given_paths(values: Iterable[object]) -> list[str]:
    """Every path in a handler's input values (a path, a list of paths or None), in order, repeats kept:
    each occurrence was one upload."""
    paths: list[str] = []
    for value in values:
        items = value if isinstance(value, (list, tuple)) else [value]
        paths += [os.fspath(item) for item in items if isinstance(item, (str, os.PathLike)) and item]
    return paths


class UploadRecorder:
    """Pure ASGI middleware: on POST <root>/gradio_api/upload, records the returned paths in the ledger
    before the last body chunk reaches the client; every other request streams through untouched."""

    def __init__(self, app: ASGIApp, ledger: UploadLedger) -> None:
        """Wrap `app`; `ledger` receives the paths of every successful upload."""
        self.app = app
        self.ledger = ledger

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; for an upload, watch its answer."""
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        if scope.get("method") != "POST" or not path.endswith(UPLOAD_ROUTE):
            await self.app(scope, receive, send)
            return
        with self.ledger.uploading():
            await self.app(scope, receive, _Watch(send, self.ledger).send)


class _Watch:
    """The `send` of one upload request: forwards everything, keeping a copy of a 200 JSON body."""

    def __init__(self, send: Send, ledger: UploadLedger) -> None:
        self._send = send
        self._ledger = ledger
        self._body: bytearray | None = None  # None: not watching (error status, encoded or too large)

    async def send(self, message: Message) -> None:
        """Forward `message`; before the final body chunk of a watched answer, record its paths."""
        if message["type"] == "http.response.start":
            headers = {k.lower(): v for k, v in message.get("headers", [])}
            if message["status"] == 200 and b"content-encoding" not in headers:
                self._body = bytearray()
        elif message["type"] == "http.response.body" and self._body is not None:
            self._body.extend(message.get("body", b""))
            if len(self._body) > MAX_ANSWER_BYTES:
                self._body = None
            elif not message.get("more_body", False):
                self._ledger.record(_paths(bytes(self._body)))
                self._body = None
        await self._send(message)


def _paths(body: bytes) -> list[str]:
    """The paths of an upload answer (a JSON list of strings); nothing for anything else."""
    try:
        answer = json.loads(body)
    except ValueError:
        return []
    if not isinstance(answer, list):
        return []
    return [item for item in answer if isinstance(item, str)]
