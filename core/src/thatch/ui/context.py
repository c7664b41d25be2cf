"""What every page handler works with: the API, the secrets, the templates."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
from jinja2 import Environment, PackageLoader
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse

from thatch.ui.doctor_run import Finding, doctor_of
from thatch.ui.guard import CSRF_FIELD, Secrets

if TYPE_CHECKING:
    from thatch.api import Thatch

_Result = TypeVar("_Result")

#: The store choice "every store" (``thatch.api.ALL``). Named again here
#: because the page imports the API for types only: the API loads the plugin
#: manager, which loads the builtin that starts this page.
ALL_STORES = "all"
#: The pages a change may send the browser back to (the form's ``back``
#: field). A fixed list: a free target would let a form send the user off-site.
BACK_PAGES = ("/memories", "/duplicates", "/hygiene")


def templates() -> Environment:
    """The package's templates, every value escaped unless a template says otherwise."""
    # autoescape=True for every template, not by file name: a memory holding
    # <script> must reach the browser as text whatever template shows it.
    env = Environment(loader=PackageLoader("thatch.ui"), autoescape=True)
    env.filters["utc"] = utc_time
    return env


def utc_time(at: float) -> str:
    """Epoch seconds as ``2026-12-02 01:30:00`` in UTC (the time the CLI prints)."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S")


@attrs.define
class UiContext:
    """One server run's API object, secrets and templates."""

    th: Thatch
    keys: Secrets
    env: Environment = attrs.field(factory=templates)
    #: ``thatch doctor``'s checks of this installation, seen from the API's folder.
    doctor: Callable[[], list[Finding]] = attrs.field(
        default=attrs.Factory(lambda self: doctor_of(self.th), takes_self=True)
    )
    # One call into the API at a time: a storage backend need not be safe
    # for several threads, and one person clicking does not need parallelism.
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    async def call(self, work: Callable[..., _Result], *args: Any, **kwargs: Any) -> _Result:
        """Run ``work`` off the event loop (it may embed or read a large store)."""

        def locked() -> _Result:
            with self._lock:
                return work(*args, **kwargs)

        return await run_in_threadpool(locked)

    def page(self, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        """``template`` rendered with ``values`` and the CSRF token its forms carry."""
        html = self.env.get_template(template).render(
            csrf_field=CSRF_FIELD, csrf=self.keys.csrf, **values
        )
        return HTMLResponse(html, status_code=status)


def back_to(form: Mapping[str, str], default: str) -> str:
    """The form's ``back`` page (with its query) if it is one of :data:`BACK_PAGES`."""
    back = form.get("back", "")
    path, _, _ = back.partition("?")
    return back if path in BACK_PAGES else default
