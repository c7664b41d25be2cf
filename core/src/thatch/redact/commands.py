"""Passwords given to commands and in ``.netrc``: ``mysql -p…``, ``curl -u user:pass``.

These have no ``NAME=value`` separator, so the assignment rule cannot see
them; each regex here is anchored on the command or keyword and reads a
bounded number of arguments after it, so a line costs at most a constant
amount of work per anchor.
"""

from __future__ import annotations

import re

from thatch.redact.common import Hit, is_placeholder

__all__ = ["command_passwords", "netrc_passwords"]

# One shell argument (bounded), an escaped character counting as part of it;
# arguments are separated by blanks or a "\" line continuation. The scan of a
# command's arguments stops at the next command of the same name, which is
# matched on its own, so a run of commands is not read over and over.
_ARG = r"(?:[^\s|;&\\]|\\[^\r\n]){1,256}+"
_SEP = r"(?:[ \t]|\\\r?\n)++"
# A value, quoted ("…", '…', \"…\" in JSON) or bare; the quotes stay.
_VALUE = (
    r"(?:\\\"(?P<escaped>[^\"\\\r\n]{1,256}+)\\\""
    r"|\"(?P<double>[^\"\\\r\n]{1,256}+)\""
    r"|'(?P<single>[^'\r\n]{1,256}+)'"
    r"|(?P<bare>[^\s\"'\\|;&]{1,256}+))"
)
_VALUE_GROUPS = ("escaped", "double", "single", "bare")
# The left word edge of a command or keyword, as a look-behind after it (so
# the regex still starts with a literal): no word character before it, or an
# escaped line break (tool output is queued as JSON). A "/" may come before
# it: /usr/bin/mysql.
_EDGE = r"(?:(?<![A-Za-z0-9_.-]{0})|(?<=\\[nrt]{0}))"

# mysql (and mysqldump, mariadb...) takes its password glued to -p: "-psecret".
# "-p" alone prompts, and "-P" is the port.
_MYSQL = re.compile(
    r"(?:mysql|mariadb)"
    + _EDGE.format("mysql")
    + _EDGE.format("mariadb")
    + r"[a-z-]{0,12}+(?:"
    + _SEP
    + r"(?!-p|mysql|mariadb)"
    + _ARG
    + r"){0,24}+"
    + _SEP
    + r"-p"
    + _VALUE
)
# curl -u user:password, --user user:password, --user=user:password.
_CURL = re.compile(
    r"curl"
    + _EDGE.format("curl")
    + r"(?:"
    + _SEP
    + r"(?!-u|--user[= \t]|curl)"
    + _ARG
    + r"){0,32}+"
    + _SEP
    + r"(?:-u[ \t]*+|--user(?:=|[ \t]++))(?:\\?[\"'])?"
    r"[^\s:\"'\\]{0,256}+:(?P<password>[^\s\"'\\]{1,256}+)"
)


def command_passwords(text: str, folded: str) -> list[Hit]:
    """Find the password of ``mysql -p<password>`` and ``curl -u user:<password>``."""
    hits: list[Hit] = []
    if "mysql" in folded or "mariadb" in folded:
        for match in _MYSQL.finditer(text):
            group = next(name for name in _VALUE_GROUPS if match[name] is not None)
            if not is_placeholder(match[group]):
                hits.append((match.start(group), match.end(group), "cli-password"))
    if "curl" in folded:
        for match in _CURL.finditer(text):
            if not is_placeholder(match["password"]):
                hits.append((match.start("password"), match.end("password"), "cli-password"))
    hits.sort()
    return hits


# .netrc: "machine HOST [login L] [account A] password P", on one line or
# several, also with "\n" escapes (a .netrc written by a tool). "default"
# entries need a login first, so prose like "the default password is" stays.
_NETRC_SEP = r"(?:[ \t\r\n]|\\{1,4}[nrt])++"
_NETRC_WORD = r"[^\s\\]{1,256}+"


def _netrc_args(keywords: str) -> str:
    """One ``KEYWORD value`` pair of a .netrc entry, for these keywords."""
    return r"(?:" + _NETRC_SEP + r"(?:" + keywords + r")" + _NETRC_SEP + _NETRC_WORD + r")"


_NETRC = re.compile(
    r"(?:machine"
    + _EDGE.format("machine")
    + _NETRC_SEP
    + _NETRC_WORD
    + _netrc_args("login|account|port")
    + r"{0,3}+|default"
    + _EDGE.format("default")
    + _netrc_args("login|account")
    + r"{1,2}+)"
    + _NETRC_SEP
    + r"password"
    + _NETRC_SEP
    + r"(?P<password>"
    + _NETRC_WORD
    + r")"
)


def netrc_passwords(text: str, folded: str) -> list[Hit]:
    """Find the passwords of ``.netrc`` entries."""
    if "password" not in text:
        return []
    return [
        (match.start("password"), match.end("password"), "netrc-password")
        for match in _NETRC.finditer(text)
        if not is_placeholder(match["password"])
    ]
