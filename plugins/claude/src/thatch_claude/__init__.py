"""thatch-claude: thatch for Claude Code.

:mod:`thatch_claude.plugin` registers under the ``thatch`` entry-point group
as ``claude``. It turns Claude Code hook payloads into core events
(:mod:`~thatch_claude.events`), formats nudges as Claude Code reads them
(:mod:`~thatch_claude.delivery`) and tells ``thatch setup --claude`` what to
write (:mod:`~thatch_claude.target`). Nothing is imported here.
"""

from __future__ import annotations

#: The harness name: ``thatch hook claude EVENT``, ``thatch setup --claude``.
HARNESS = "claude"
