"""Validation of store names and labels: no path tricks, no control characters, no secrets."""

from __future__ import annotations

import re
import unicodedata

from thatch.plugin.errors import InvalidInputError
from thatch.plugin.records import GLOBAL_STORE
from thatch.redact import redact

MAX_LABEL = 120
MAX_STORE = 100
MAX_BRANCH = 200
#: Where stores are read, ``all`` means every store, so no store may be named so.
EVERY_STORE = "all"
_STORE_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_BRANCH = re.compile(r"[A-Za-z0-9._/+@-]+")


def _has_control(text: str) -> bool:
    return any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in text)


def validate_store(name: str) -> str:
    """Return ``name`` if it is ``global`` or ``owner/name``; raise a clear error otherwise."""
    fix = "use 'global' or 'owner/name' made of letters, digits, '.', '_', '-'"
    if not name:
        raise InvalidInputError(f"store name is empty; {fix}")
    if _has_control(name):
        raise InvalidInputError(f"store name {name!r} has a control character; {fix}")
    if len(name) > MAX_STORE:
        raise InvalidInputError(f"store name {name!r} is over {MAX_STORE} characters; {fix}")
    if name == GLOBAL_STORE:
        return name
    if name == EVERY_STORE:
        raise InvalidInputError(
            f"store name {name!r} is reserved: it means every store where stores are read; {fix}"
        )
    parts = name.split("/")
    if ".." in parts or "." in parts or any(part.startswith(".") for part in parts):
        raise InvalidInputError(f"store name {name!r} has a '.' path part; {fix}")
    if len(parts) == 1:
        raise InvalidInputError(f"store name {name!r} has no owner part; {fix}")
    if len(parts) > 2 or not all(_STORE_PART.fullmatch(part) for part in parts):
        raise InvalidInputError(f"store name {name!r} is not valid; {fix}")
    # A store name is stored and printed everywhere, so one that holds a
    # token (pasted in the wrong argument) must not be written. The message
    # shows the name redacted: it may end up in logs.
    redaction = redact(name)
    if redaction.count:
        raise InvalidInputError(
            f"store name {redaction.text!r} looks like it holds a secret "
            f"({', '.join(redaction.kinds)}); use the repository's 'owner/name', "
            "e.g. 'acme/shop', and keep the token out of it"
        )
    return name


def validate_label(label: str) -> str:
    """Return ``label`` if it is a usable memory label; raise a clear error otherwise."""
    fix = f"use 1 to {MAX_LABEL} printable characters with no '/' or '\\', e.g. 'build-command'"
    if not label or not label.strip():
        raise InvalidInputError(f"label is empty; {fix}")
    if _has_control(label):
        raise InvalidInputError(f"label {label!r} has a control character; {fix}")
    if label != label.strip():
        raise InvalidInputError(f"label {label!r} starts or ends with a space; {fix}")
    if len(label) > MAX_LABEL:
        raise InvalidInputError(f"label {label[:40]!r}... is over {MAX_LABEL} characters; {fix}")
    if "/" in label or "\\" in label or label in (".", ".."):
        raise InvalidInputError(f"label {label!r} looks like a path; {fix}")
    return label


def validate_branch(branch: str | None) -> str | None:
    """Return ``branch`` (None allowed) if it looks like a git branch name."""
    if branch is None:
        return None
    fix = "use a git branch name such as 'main' or 'feature/login'"
    if not branch or len(branch) > MAX_BRANCH or not _BRANCH.fullmatch(branch) or ".." in branch:
        raise InvalidInputError(f"branch {branch!r} is not a valid branch name; {fix}")
    return branch
