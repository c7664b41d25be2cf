"""Validation of store names, labels and branches.

No path tricks, no control characters, no secrets; branches by git's rules.
"""

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
#: What git refuses anywhere in a ref name (``git help check-ref-format``):
#: ASCII controls, space, ``~^:?*[\``, and the sequences ``..`` and ``@{``.
_NOT_IN_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{")


def _has_control(text: str) -> bool:
    return any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in text)


def refuse_secret(what: str, text: str, fix: str) -> None:
    """Raise if ``text`` (a name: ``what`` says which) looks like it holds a token or key.

    Names are stored and printed everywhere, unredacted, so one that holds a
    token (pasted in the wrong argument) must not be written. The message
    shows the text redacted: it may end up in logs.
    """
    redaction = redact(text)
    if redaction.count:
        raise InvalidInputError(
            f"{what} {redaction.text!r} looks like it holds a secret "
            f"({', '.join(redaction.kinds)}); {fix}, and keep the token out of it"
        )


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
    refuse_secret("store name", name, "use the repository's 'owner/name', e.g. 'acme/shop'")
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
    refuse_secret("label", label, "use a plain name such as 'api-auth'")
    return label


def validate_branch(branch: str | None) -> str | None:
    """Return ``branch`` (None allowed) if git takes it as a branch name and it holds no secret.

    The rules are git's (``git check-ref-format --branch``), and two of
    thatch's: no Unicode control or format character (invisible, or turning
    text around, where a branch is printed) and at most :data:`MAX_BRANCH`
    characters.
    """
    if branch is None:
        return None
    fix = "use a git branch name such as 'main' or 'feature/login'"
    problem = _branch_problem(branch)
    if problem:
        raise InvalidInputError(f"branch {branch!r} is not a valid branch name: {problem}; {fix}")
    refuse_secret("branch", branch, fix)
    return branch


def _branch_problem(branch: str) -> str | None:
    """What git (or thatch, for the two rules of its own) finds wrong with ``branch``."""
    found = _NOT_IN_REF.search(branch)
    parts = branch.split("/")
    checks = (
        (not branch, "it is empty"),
        (len(branch) > MAX_BRANCH, f"it is over {MAX_BRANCH} characters"),
        (found is not None, f"git refuses {found.group()!r} in a ref" if found else ""),
        (_has_control(branch), "it has a control character"),
        (branch.startswith("-"), "it starts with '-'"),
        (branch in ("@", "HEAD"), f"{branch!r} is git's name for the current commit"),
        ("" in parts, "it starts or ends with '/', or has '//'"),
        (any(part.startswith(".") for part in parts), "a part starts with '.'"),
        (any(part.endswith(".lock") for part in parts), "a part ends with '.lock'"),
        (branch.endswith("."), "it ends with '.'"),
    )
    return next((problem for failed, problem in checks if failed), None)
