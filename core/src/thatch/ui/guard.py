"""Who may use the page, and what the browser is allowed to do with it.

The server binds loopback only, yet any local process or web page the user
opens can still send it requests. So every request must carry the random
token the URL printed at start-up; the first one trades it for an HttpOnly,
SameSite=Strict cookie and is redirected to the same path without it, so the
token does not linger in the address bar or the history. A change (POST)
must also carry the CSRF token that only pages served by this server hold,
and a Host header naming this server (a DNS-rebinding page names another).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode

import attrs
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "thatch_ui"
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
#: No inline script or style, nothing from elsewhere, never framed.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
#: A change's form is small; a bigger body is refused before it is read.
MAX_FORM_BYTES = 1_000_000


@attrs.frozen
class Secrets:
    """The two random tokens of one server run."""

    #: In the printed URL, then in the cookie: proves the request is the user's.
    access: str = attrs.field(factory=lambda: secrets.token_urlsafe(32))
    #: In every form: proves a change comes from a page this server served.
    csrf: str = attrs.field(factory=lambda: secrets.token_urlsafe(32))


def same(given: str | None, expected: str) -> bool:
    """Whether ``given`` is ``expected``, compared in constant time."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


class Guard:
    """ASGI middleware: 403 without the token or from a foreign Host; safety headers on all."""

    def __init__(self, app: ASGIApp, keys: Secrets, hosts: Iterable[str]) -> None:
        self.app = app
        self.keys = keys
        self.hosts = frozenset(hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        request = Request(scope)
        if request.headers.get("host") not in self.hosts:
            await PlainTextResponse("forbidden: unknown host", 403)(scope, receive, send)
            return
        if same(request.query_params.get(TOKEN_PARAM), self.keys.access):
            await self._trade_token(request)(scope, receive, send)
            return
        if not same(request.cookies.get(COOKIE), self.keys.access):
            text = "forbidden: open the URL 'thatch ui' printed"
            await PlainTextResponse(text, 403)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _trade_token(self, request: Request) -> RedirectResponse:
        """Redirect to the same URL without the token, setting the cookie."""
        rest = [(k, v) for k, v in parse_qsl(request.url.query) if k != TOKEN_PARAM]
        # "//host/..." would be read as another site: keep the redirect on this one.
        path = "/" + request.url.path.lstrip("/")
        target = path + (f"?{urlencode(rest)}" if rest else "")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(COOKIE, self.keys.access, httponly=True, samesite="strict", path="/")
        return response


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers[name] = value
        await send(message)

    return sending


class Refused(Exception):
    """A change request without a valid CSRF token, or too big to read."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


async def change_form(request: Request, keys: Secrets) -> dict[str, str]:
    """The fields of a POST whose CSRF token (form field or header) is this server's.

    Read as a URL-encoded body here, rather than through a multipart parser:
    the page's forms send nothing else.

    :raises Refused: no or a wrong token, or a body over :data:`MAX_FORM_BYTES`.
    """
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_FORM_BYTES):
        raise Refused(413, "request too large")
    # Read in chunks against the limit: a chunked body declares no length.
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise Refused(413, "request too large")
    fields = dict(parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True))
    in_form = fields.pop(CSRF_FIELD, None)
    token = request.headers.get(CSRF_HEADER) or in_form
    if not same(token, keys.csrf):
        raise Refused(403, "forbidden: the form's CSRF token is missing or wrong; reload the page")
    return fields
