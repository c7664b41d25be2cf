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
    assert "thatch unarchive ci global" in refused.stderr
    assert "Traceback" not in refused.stderr
    listed = as_json(thatch("list", "all", "--archived", "--json"))
    assert [(m["label"], m["archived"], m["content"]) for m in listed] == [
        ("ci", True, "CI runs on Buildkite")
    ]

    thatch("unarchive", "ci", "global")
    # A weak match is listed but not counted as recalled; a relevant one is.
    [weak] = as_json(thatch("search", "continuous integration", "--json"))
    assert (weak["label"], weak["relevant"]) == ("ci", False)
    assert as_json(thatch("show", "ci", "--json"))["recall_count"] == 0
    [hit] = as_json(thatch("search", "where does CI run", "--json"))
    assert (hit["label"], hit["relevant"]) == ("ci", True)
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


def test_two_remembers_of_one_new_label_at_once_are_as_if_one_after_the_other(
    thatch: Runner, home: Path, tmp_path: Path
) -> None:
    import os
    import subprocess

    from integration.conftest import THATCH

    contents = ["alpha content", "beta different content"]
    environment = {**os.environ, "THATCH_HOME": str(home)}
    running = [
        subprocess.Popen(
            [str(THATCH), "remember", "r1-x", content, "--store", "global"],
            cwd=tmp_path,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for content in contents
    ]
    done = [(process.wait(timeout=300), *process.communicate()) for process in running]

    assert sorted(status for status, _, _ in done) == [0, 2]
    [(_, created, _)] = [run for run in done if run[0] == 0]
    [(_, _, refused)] = [run for run in done if run[0] == 2]
    assert "created memory 'r1-x'" in created
    stored = as_json(thatch("show", "r1-x", "global", "--json"))["content"]
    # The very refusal a second save after the first gets.
    loser = contents[1 - contents.index(stored)]
    again = thatch("remember", "r1-x", loser, "--store", "global", check=False)
    assert (again.returncode, again.stderr) == (2, refused)


def test_import_refuses_to_replace_other_content_unless_overwrite(
    thatch: Runner, tmp_path: Path
) -> None:
    thatch("remember", "tabs", "The user indents with tabs", "--store", "global")
    exported = tmp_path / "export.jsonl"
    exported.write_text(thatch("export", "--json").stdout)
    changed = tmp_path / "changed.jsonl"
    line = {"label": "tabs", "content": "The user indents with spaces", "store": "global"}
    changed.write_text(json.dumps({"label": "new", "content": "x", "store": "global"}) + "\n")
    with changed.open("a") as handle:
        handle.write(json.dumps(line) + "\n")

    refused = thatch("import", str(changed), check=False)
    assert refused.returncode == 2
    assert f"{changed}: 1 line would replace" in refused.stderr
    assert "line 2 'tabs' in global" in refused.stderr
    assert "--overwrite" in refused.stderr
    assert [m["label"] for m in as_json(thatch("list", "all", "--json"))] == ["tabs"]

    again = thatch("import", str(exported))
    assert "1 lines: 0 created, 0 updated, 1 unchanged" in again.stdout
    replaced = thatch("import", str(changed), "--overwrite")
    assert "2 lines: 1 created, 1 updated, 0 unchanged" in replaced.stdout
    kept = as_json(thatch("show", "tabs", "--json"))
    first = json.loads(exported.read_text())
    assert kept["created_at"] == first["created_at"]


def test_a_secret_in_a_branch_is_refused_and_git_branch_names_are_taken(thatch: Runner) -> None:
    token = "ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3"
    refused = thatch("remember", "b", "a fact", "--branch", token, check=False)
    assert refused.returncode == 2
    assert "looks like it holds a secret" in refused.stderr
    assert token not in refused.stderr
    assert token not in thatch("export").stdout
    branches = ["fix#123", "a=b", "feat/ü", "a,b", "x'y"]
    for number, branch in enumerate(branches):
        thatch("remember", f"on-{number}", "a fact", "--branch", branch)
    listed = as_json(thatch("list", "all", "--json"))
    assert [m["branch"] for m in listed] == branches


def test_a_home_that_is_a_file_is_one_clear_line(thatch: Runner, tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_text("")
    completed = thatch("--home", str(file), "list", "all", check=False)
    assert completed.returncode != 0
    assert "Traceback" not in completed.stderr
    assert completed.stderr.strip().splitlines() == [
        f"thatch: thatch home {file} (--home or THATCH_HOME) is a file, not a folder; "
        "give a folder (it is made if missing), or move the file away"
    ]


def test_batch_search_names_the_stores_it_searched_and_redacts_the_query(
    thatch: Runner, tmp_path: Path
) -> None:
    thatch("remember", "tabs", "The user indents with tabs", "--store", "global")
    repo = make_repo(tmp_path / "web", "git@github.com:acme/web.git")
    token = "ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3"
    queries = f"indentation {token}\n" + json.dumps({"query": "tabs", "store": "global"}) + "\n"
    completed = thatch("search", "-", input=queries, cwd=repo)
    first, second = (json.loads(line) for line in completed.stdout.splitlines())
    assert first["stores"] == ["acme/web", "global"]
    assert token not in completed.stdout
    assert first["query"].startswith("indentation [REDACTED")
    assert second["stores"] == ["global"]
