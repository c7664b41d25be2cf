"""``thatch ui`` latency with 10k memories: the memories page and a search, through real HTTP.

One throw-away home filled as the runtime benchmarks fill theirs
(``homes.fill_home``): the 121 real memories of bench/data embedded by the
model, then synthetic ones up to the count, written straight through the
storage backend with random unit vectors of the model's id and dimension and
Zipf-distributed sentences (bench/synthetic.py). The real server runs in a
thread (``UiServer``: uvicorn on a loopback socket); an httpx client opens
the printed URL once, keeps the cookie, and times whole answers, rendering
and transfer included.

Timed, interleaved round by round (the order rotates each round):

- ``memories``: ``GET /memories``, the first page of every store;
- ``memories p.100``: ``GET /memories?page=100``, a page deep in the list;
- ``search``: ``GET /memories?q=…`` with the queries of bench/data/queries.jsonl,
  cycled; every search embeds its query with the real model;
- ``api list`` and ``api recall``: the API calls alone (``th.list`` of every
  store; ``th.recall`` with the page's arguments), on the same object the
  server uses, so the cost of HTTP and the template shows as the difference.

``--pages`` also times the duplicates and hygiene pages a few times each
(every one compares each memory of a store with every other).

``--variants`` adds, to the same interleaved rounds, the memories page's rows
computed in-process two ways: ``rows: page only`` (``rows_of`` as the page
calls it: only the 50 shown memories become rows) and ``rows: all wrapped``
(the first version: a row for every memory, then the page's slice).

    uv run python bench/ui_latency.py
    uv run python bench/ui_latency.py --memories 10000 --rounds 100 --pages --variants
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import thatch
from data_sets import DATA, read_jsonl
from homes import bench_env, fill_home, make_project
from measure import percentile, timed
from thatch.api import Thatch
from thatch.ui.memories import PAGE_SIZE, Query, Row, rows_of
from thatch.ui.server import UiServer

GOAL_P50_MS = 200.0
WARMUP = 5
SEED = 17


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def serve(th: Thatch) -> tuple[UiServer, threading.Thread]:
    server = UiServer(th, 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.uvicorn.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not start within 30 s")
        time.sleep(0.01)
    return server, thread


def signed_in(server: UiServer) -> httpx.Client:
    """A client holding the cookie the printed URL gives."""
    client = httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=60)
    answer = client.get(server.url)
    if answer.status_code != 303 or "thatch_ui" not in client.cookies:
        raise RuntimeError(f"the token URL answered {answer.status_code}, without the cookie")
    return client


def fetch(client: httpx.Client, path: str, **params: str) -> Callable[[], object]:
    def call() -> object:
        answer = client.get(path, params=params)
        answer.raise_for_status()
        return answer

    return call


def all_wrapped(th: Thatch, query: Query) -> tuple[list[Row], bool]:
    """The first version of the listing: a row for every memory, then the page's slice."""
    rows = [Row(memory) for memory in th.list(query.store)]
    wanted = query.page * PAGE_SIZE
    return rows[wanted - PAGE_SIZE : wanted], len(rows) > wanted


def report(name: str, times: list[float]) -> str:
    return (
        f"| {name} | {len(times)} | {percentile(times, 50):.1f} | {percentile(times, 95):.1f} "
        f"| {max(times):.1f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=60, help="timed answers per variant")
    parser.add_argument("--pages", action="store_true", help="also time duplicates and hygiene")
    parser.add_argument(
        "--variants", action="store_true", help="also time two ways of making the page's rows"
    )
    args = parser.parse_args()
    queries = [str(row["query"]) for row in read_jsonl(DATA / "queries.jsonl")]
    deep_page = str(min(100, max(args.memories // PAGE_SIZE, 1)))
    with tempfile.TemporaryDirectory(prefix="thatch-ui-bench-") as folder:
        home, project = Path(folder) / "home", make_project(Path(folder) / "project")
        home.mkdir()
        rng = np.random.default_rng(SEED)
        for note in fill_home(home, project, args.memories, 0, rng):
            print(note)
        with thatch.open(home=home, cwd=project, environ=bench_env(home)) as th:
            server, thread = serve(th)
            try:
                with contextlib.closing(signed_in(server)) as client:
                    counter = iter(range(10**9))

                    def search() -> object:
                        query = queries[next(counter) % len(queries)]
                        return fetch(client, "/memories", q=query)()

                    def api_recall() -> object:
                        query = queries[next(counter) % len(queries)]
                        return th.recall(query, stores="all", limit=PAGE_SIZE + 1, record=False)

                    variants: dict[str, Callable[[], object]] = {
                        "memories": fetch(client, "/memories"),
                        f"memories p.{deep_page}": fetch(client, "/memories", page=deep_page),
                        "search": search,
                        "api list": lambda: th.list("all"),
                        "api recall": api_recall,
                    }
                    if args.variants:
                        first = Query(text="", store="all", archived="hide", page=1)
                        variants["rows: page only"] = lambda: rows_of(th, first)
                        variants["rows: all wrapped"] = lambda: all_wrapped(th, first)
                    for call in variants.values():  # the model loads, caches fill
                        for _ in range(WARMUP):
                            call()
                    print(f"before: {load()}")
                    times: dict[str, list[float]] = {name: [] for name in variants}
                    names = list(variants)
                    for round_ in range(args.rounds):
                        shift = round_ % len(names)
                        for name in names[shift:] + names[:shift]:
                            times[name].append(timed(variants[name]))
                    print(f"after:  {load()}")
                    print(f"\n{args.memories:,} memories, {args.rounds} answers each (ms)\n")
                    print("| what | n | p50 | p95 | max |")
                    print("| --- | --- | --- | --- | --- |")
                    for name in names:
                        print(report(name, times[name]))
                    if args.pages:
                        extra = {
                            "duplicates": fetch(client, "/duplicates"),
                            "hygiene": fetch(client, "/hygiene"),
                        }
                        for name, call in extra.items():
                            call()
                            print(report(name, [timed(call) for _ in range(5)]))
                    print(f"({load()})")
                    verdicts = {
                        name: percentile(times[name], 50) < GOAL_P50_MS
                        for name in ("memories", "search")
                    }
                    for name, met in verdicts.items():
                        print(f"{name} p50 < {GOAL_P50_MS:.0f} ms: {'met' if met else 'NOT met'}")
            finally:
                server.stop()
                thread.join(timeout=10)
    return 0 if all(verdicts.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
