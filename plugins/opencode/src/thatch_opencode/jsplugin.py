"""The JS plugin opencode loads: rendered from the one template in this package.

opencode runs JS/TS files from ``.opencode/plugins/`` (project) or
``~/.config/opencode/plugins/`` (global). ``thatch.js.tmpl`` holds the whole
plugin; setup fills in how to run thatch and the environment it needs. The
values are written as JSON, which is valid JavaScript, so no command or
variable can break out of its string.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources

#: The template's file name inside the package.
TEMPLATE_NAME = "thatch.js.tmpl"

#: The file name setup gives the plugin in opencode's plugins folder.
PLUGIN_FILE_NAME = "thatch.js"

#: ``@@NAME@@`` markers in the template, replaced in one pass so that a value
#: holding a marker's text is never replaced again.
_PLACEHOLDER = re.compile(r"@@(TEMPLATE_ID|COMMAND|ENV)@@")

#: The line of a rendered plugin that holds the command, as JSON.
_COMMAND_LINE = re.compile(r"^const COMMAND = (?P<json>\[.*\]);$", re.MULTILINE)


@cache
def template() -> str:
    """The template's text, placeholders included."""
    return resources.files(__package__).joinpath(TEMPLATE_NAME).read_text(encoding="utf-8")


def template_id() -> str:
    """A short digest of the template; a rendered file names it in its first line.

    ``thatch setup`` problems compare it to spot a plugin file written by an
    older thatch-opencode.
    """
    return hashlib.sha256(template().encode("utf-8")).hexdigest()[:12]


def render(command: Sequence[str], env: Mapping[str, str]) -> str:
    """The plugin's source, running ``command`` (e.g. ``("thatch",)``) with ``env`` added.

    Raises ValueError when ``command`` is empty: the plugin would have nothing to run.
    """
    if not command:
        raise ValueError("the thatch command is empty; give the program to run, e.g. ('thatch',)")
    values = {
        "TEMPLATE_ID": template_id(),
        # ASCII escapes keep the file plain ASCII whatever the paths hold.
        "COMMAND": json.dumps(list(command), ensure_ascii=True),
        "ENV": json.dumps(dict(env), ensure_ascii=True, sort_keys=True),
    }
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], template())


def rendered_template_id(source: str) -> str | None:
    """The template digest a plugin file names, or None when it names none."""
    match = re.search(r"\(template ([0-9a-f]{12})\)", source.partition("\n")[0])
    return match.group(1) if match else None


def rendered_command(source: str) -> list[str] | None:
    """The command a rendered plugin runs, or None when the file holds none it can read."""
    match = _COMMAND_LINE.search(source)
    if match is None:
        return None
    try:
        command = json.loads(match.group("json"))
    except ValueError:
        return None
    if not (isinstance(command, list) and command and all(isinstance(p, str) for p in command)):
        return None
    return command
