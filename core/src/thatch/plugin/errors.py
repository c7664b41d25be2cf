"""Errors a user can meet. Each message names the input and the fix."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from thatch.plugin.records import Memory

#: How much of a stored memory's first line a refused save quotes.
QUOTED_LINE = 80


class ThatchError(Exception):
    """Base class: the CLI prints the message (never a traceback) and exits 1."""

    exit_code = 1


class InvalidInputError(ThatchError, ValueError):
    """Bad input: a name, a file line, a flag. Nothing was changed."""

    exit_code = 2


class LabelTakenError(InvalidInputError):
    """A save without overwrite found its label holding other content; nothing was written.

    Raised by core before a write and by a backend inside the write's
    transaction (two saves racing for one new label), with the same words:
    the stored text's first line, so the caller can judge, and the fix.
    """

    def __init__(self, current: Memory) -> None:
        #: The memory that holds the label.
        self.current = current
        lines = current.content.strip().splitlines() or [""]
        first = lines[0]
        if len(first) > QUOTED_LINE or len(lines) > 1:
            first = first[:QUOTED_LINE].rstrip() + "..."
        super().__init__(
            f"memory {current.label!r} already exists in store {current.store}: {first!r}; "
            "to replace it, save again with overwrite (--overwrite for 'thatch remember' and "
            "'thatch import', overwrite: true for memory_remember), or choose another label"
        )


class NotFoundError(ThatchError, LookupError):
    """The memory or store asked for does not exist."""


class ArchivedMemoryError(ThatchError):
    """An archived memory cannot be updated until it is unarchived."""


class PluginMissingError(ThatchError):
    """No loaded plugin provides something thatch needs (storage, embedder)."""


class PluginConflictError(ThatchError):
    """Two plugins provide the same harness, command, table or receptor part."""


class ConfigError(ThatchError):
    """The config file or an environment variable holds a value thatch cannot use."""


class StorageError(ThatchError):
    """The storage backend failed in a way the user must act on."""
