"""The page's language from its `?lang=` before Gradio starts: Gradio chooses its locale once, from the
browser's, and most of its labels (the tab labels, the upload boxes' "Drop File Here") keep the words of
that locale. A language switch that set the locale afterwards left them English (issue 31). `PageLocale`
(ASGI middleware) puts a first script into the app page's <head> that makes the browser report the page's
language; Gradio then starts in it ("zh-CN": Gradio's own Chinese, falling back to the app's "zh" texts).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOCALES = {"zh": "zh-CN", "en": "en-US"}  # ?lang= -> the locale the browser reports to Gradio
MAX_PAGE_BYTES = 2 << 20  # the app page is a few kB; anything larger streams through untouched


def locale_script(locale: str) -> bytes:
    """The inline script that makes navigator.language(s) say `locale` (a LOCALES value, not user data)."""
    body = (
        f"const l = {json.dumps(locale)}; for (const [k, v] of [['language', l], ['languages', [l]]])"
        " Object.defineProperty(navigator, k, {get: () => v, configurable: true});"
    )
    return f"<script>(() => {{{body}}})();</script>".encode()


def page_locale(scope: Scope) -> str | None:
    """The locale a GET of the app page asks for with `?lang=`; None for any other request."""
    if scope.get("type") != "http" or scope.get("method") != "GET":
        return None
    if not str(scope.get("path", "")).endswith("/"):
        return None
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return LOCALES.get((query.get("lang") or [""])[0])


class PageLocale:
    """Pure ASGI middleware: the app page asked for with `?lang=zh|en` gets locale_script first in its
    <head>; every other request streams through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; for the app page with a language, add the script to its answer."""
        locale = page_locale(scope)
        if locale is None:
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Inject(send, locale_script(locale)).send)


class _Inject:
    """The `send` of one page request: an uncompressed HTML answer is held whole, then sent with the
    script after <head>; anything else is forwarded as it comes."""

    def __init__(self, send: Send, script: bytes) -> None:
        self._send = send
        self._script = script
        self._start: Message | None = None  # the held response start (None: forwarding)
        self._body = bytearray()

    async def send(self, message: Message) -> None:
        """Forward `message`, or hold an HTML answer until its last chunk."""
        if message["type"] == "http.response.start":
            headers = {k.lower(): v for k, v in message.get("headers", [])}
            html = headers.get(b"content-type", b"").startswith(b"text/html")
            if message.get("status") == 200 and html and b"content-encoding" not in headers:
                self._start = message
                return
        elif message["type"] == "http.response.body" and self._start is not None:
            self._body += message.get("body", b"")
            if len(self._body) > MAX_PAGE_BYTES:
                await self._flush(False, message.get("more_body", False))
            elif not message.get("more_body", False):
                await self._flush(True, False)
            return
        await self._send(message)

    async def _flush(self, inject: bool, more: bool) -> None:
        """Send the held start and body (with the script when `inject`), then forward the rest."""
        body = bytes(self._body)
        if inject:
            body = body.replace(b"<head>", b"<head>" + self._script, 1)
        start, self._start = self._start, None
        assert start is not None
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        if not more:
            headers.append((b"content-length", str(len(body)).encode()))
        await self._send({**start, "headers": headers})
        await self._send({"type": "http.response.body", "body": body, "more_body": more})
