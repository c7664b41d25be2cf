"""Memory through the real command line, the real model and a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from integration.conftest import Runner, as_json, git, make_repo

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2@8199be6f699a"


def test_remember_then_search_by_meaning(thatch: Runner) -> None:
    saved = thatch(
        "remember", "tabs", "The user indents with tabs, never spaces", "--store", "global"
    )
    assert "created memory 'tabs' in global" in saved.stdout
    thatch("remember", "db", "Sessions are stored in PostgreSQL", "--store", "global")
    results = as_json(thatch("search", "indentation preference", "--json"))
    assert results[0]["label"] == "tabs"
    assert results[0]["model"] == DEFAULT_MODEL_ID
    assert 0 < results[0]["score"] <= 1
    assert results[0]["cosine"] > results[-1]["cosine"] or len(results) == 1


def test_stores_are_kept_apart_and_global_is_shared(thatch: Runner, tmp_path: Path) -> None:
    web = make_repo(tmp_path / "web", "git@github.com:acme/web.git")
    api = make_repo(tmp_path / "api", "https://github.com/acme/api.git")
    thatch("remember", "web-db", "The web app keeps sessions in Redis", cwd=web)
    thatch("remember", "editor", "The user edits sessions in vim", "--store", "global", cwd=web)

    from_api = as_json(thatch("search", "where are sessions kept", "--json", cwd=api))
    assert [hit["label"] for hit in from_api] == ["editor"]
    from_web = as_json(thatch("search", "where are sessions kept", "--json", cwd=web))
    assert {hit["label"] for hit in from_web} == {"web-db", "editor"}
    assert from_web[0]["store"] == "acme/web"
    stores = {s["name"]: s for s in as_json(thatch("stores", "--json", cwd=web))}
    assert stores["acme/web"]["current"] is True
    assert stores["global"]["memories"] == 1


def test_update_archive_unarchive_forget(thatch: Runner) -> None:
    thatch("remember", "ci", "CI runs on GitHub Actions", "--store", "global")
    updated = thatch("remember", "ci", "CI runs on Buildkite", "--store", "global", "--overwrite")
    assert "updated memory 'ci'" in updated.stdout
    same = thatch("remember", "ci", "CI runs on Buildkite", "--store", "global")
    assert "unchanged memory 'ci'" in same.stdout

    thatch("archive", "ci", "global")
    assert as_json(thatch("search", "continuous integration", "--json")) == []
    refused = thatch(
        "remember", "ci", "CI runs on Jenkins", "--store", "global", "--overwrite", check=False
    )
    assert refused.returncode != 0
    assert "archived" in refused.stderr
    assert "thatch unarchive ci --store global" in refused.stderr
    assert "Traceback" not in refused.stderr
    listed = as_json(thatch("list", "all", "--archived", "--json"))
    assert [(m["label"], m["archived"], m["content"]) for m in listed] == [
        ("ci", True, "CI runs on Buildkite")
    ]

    thatch("unarchive", "ci", "global")
    assert as_json(thatch("search", "continuous integration", "--json"))[0]["label"] == "ci"
    shown = as_json(thatch("show", "ci", "--json"))
    assert shown["recall_count"] == 1
    assert shown["last_recalled_at"] is not None

    thatch("forget", "ci")
    missing = thatch("show", "ci", check=False)
    assert missing.returncode != 0
    assert "no memory labelled 'ci'" in missing.stderr


def test_near_duplicate_warns_names_label_and_saves(thatch: Runner) -> None:
    thatch("remember", "tabs", "The user indents code with tabs, never spaces", "--store", "global")
    warned = thatch(
        "remember",
        "indent",
        "The user indents code with tabs and never spaces",
        "--store",
        "global",
    )
    assert "created memory 'indent'" in warned.stdout
    assert "similar to 'tabs'" in warned.stderr
    pairs = as_json(thatch("duplicates", "--json"))
    assert [(p["first"]["label"], p["second"]["label"]) for p in pairs] == [("tabs", "indent")]
    thatch("duplicates", "global", "--mark-reviewed", "indent", "tabs")
    assert as_json(thatch("duplicates", "--json")) == []
    assert as_json(thatch("hygiene", "--json"))["duplicates"] == []


def test_branch_memories_follow_the_checked_out_branch(thatch: Runner, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "web", "git@github.com:acme/web.git")
    git(repo, "checkout", "-q", "-b", "feature/login")
    thatch(
        "remember",
        "login-flag",
        "The login rewrite is behind the NEW_LOGIN flag",
        "--branch",
        "feature/login",
        cwd=repo,
    )
    on_branch = as_json(thatch("search", "login rewrite flag", "--json", cwd=repo))
    assert [hit["label"] for hit in on_branch] == ["login-flag"]
    git(repo, "checkout", "-q", "main")
    assert as_json(thatch("search", "login rewrite flag", "--json", cwd=repo)) == []
    assert as_json(thatch("hygiene", "--json", cwd=repo))["orphaned"] == []
    git(repo, "branch", "-q", "-D", "feature/login")
    orphaned = as_json(thatch("hygiene", "--json", cwd=repo))["orphaned"]
    assert [m["label"] for m in orphaned] == ["login-flag"]


def test_search_reads_queries_from_stdin(thatch: Runner) -> None:
    thatch("remember", "tabs", "The user indents with tabs, never spaces", "--store", "global")
    thatch("remember", "deploy", "Deploy with make release", "--store", "global")
    queries = "\n".join(
        [
            "indentation preference",
            json.dumps({"query": "how do we ship", "store": "global", "limit": 1}),
            json.dumps({"store": "global"}),
        ]
    )
    completed = thatch("search", "-", input=queries + "\n", check=False)
    lines = [json.loads(line) for line in completed.stdout.splitlines()]
    assert len(lines) == 3
    assert lines[0]["query"] == "indentation preference"
    assert lines[0]["results"][0]["label"] == "tabs"
    assert set(lines[0]["results"][0]) >= {"label", "store", "content", "score", "model"}
    assert [hit["label"] for hit in lines[1]["results"]] == ["deploy"]
    assert lines[2]["line"] == 3
    assert "query" in lines[2]["error"]
    assert completed.returncode == 1


def test_bad_input_is_named_and_changes_nothing(thatch: Runner) -> None:
    for args, fragment in [
        (("remember", "a/b", "x"), "label 'a/b' looks like a path"),
        (("remember", "ok", "x", "--store", "a/../b"), "store name 'a/../b'"),
        (("remember", "ok", "   "), "content of memory 'ok' is empty"),
        (("search", "x", "--limit", "0"), "argument --limit"),
    ]:
        completed = thatch(*args, check=False)
        assert completed.returncode == 2, args
        assert fragment in completed.stderr
        assert "Traceback" not in completed.stderr
    assert as_json(thatch("list", "all", "--json")) == []


def test_remember_reads_content_from_stdin(thatch: Runner) -> None:
    text = "Releases are cut on Thursdays.\nHotfixes may go out any day."
    saved = as_json(
        thatch("remember", "release-day", "-", "--store", "global", "--json", input=text)
    )
    assert saved["action"] == "created"
    assert as_json(thatch("show", "release-day", "--json"))["content"] == text
