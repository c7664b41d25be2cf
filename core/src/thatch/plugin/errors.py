"""Errors a user can meet. Each message names the input and the fix."""

from __future__ import annotations


class ThatchError(Exception):
    """Base class: the CLI prints the message (never a traceback) and exits 1."""

    exit_code = 1


class InvalidInputError(ThatchError, ValueError):
    """Bad input: a name, a file line, a flag. Nothing was changed."""

    exit_code = 2


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
