from __future__ import annotations

import pytest
from thatch.memory.names import validate_branch, validate_label, validate_store
from thatch.plugin.errors import InvalidInputError


@pytest.mark.parametrize("name", ["global", "acme/web", "owner.name/repo_1", "all/web"])
def test_good_store_names(name: str) -> None:
    assert validate_store(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a/../b",
        "../x",
        "a/b/c",
        "/abs",
        "a/",
        "a\nb",
        ".hidden",
        "a/.b",
        "x" * 101,
        "sp ace/x",
        "solo",
        "all",
    ],
)
def test_bad_store_names_name_input_and_fix(name: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        validate_store(name)
    message = str(caught.value)
    assert "store name" in message
    assert "use 'global' or 'owner/name'" in message


def test_store_names_that_reads_would_take_for_something_else_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="'all' is reserved: it means every store"):
        validate_store("all")
    with pytest.raises(InvalidInputError, match="'solo' has no owner part"):
        validate_store("solo")


@pytest.mark.parametrize("label", ["tabs", "build command", "ci:deploy-step", "über-config"])
def test_good_labels(label: str) -> None:
    assert validate_label(label) == label


@pytest.mark.parametrize(
    "label", ["", "  ", " x", "a/b", "..", "a\\b", "bell\x07", "x" * 121, "zero\u200bwidth"]
)
def test_bad_labels(label: str) -> None:
    with pytest.raises(InvalidInputError, match="label"):
        validate_label(label)


def test_branches() -> None:
    assert validate_branch(None) is None
    assert validate_branch("feature/login") == "feature/login"
    for bad in ("", "a..b", "has space", "semi;colon"):
        with pytest.raises(InvalidInputError, match="branch"):
            validate_branch(bad)
