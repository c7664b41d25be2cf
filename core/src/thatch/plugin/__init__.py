"""The plugin contract: everything a thatch plugin may import.

A plugin imports from ``thatch.plugin`` (and its submodules) and, in its
tests, from ``thatch.testing``; every other module of thatch is internal and
may change in any release. ``tests/unit/test_plugin_boundary.py`` fails when
a module under ``plugins/`` imports anything else, and the import-linter
contracts in ``pyproject.toml`` keep this package from importing the rest of
thatch.

Submodules a plugin may also use: :mod:`thatch.plugin.fields` (payload field
readers), :mod:`thatch.plugin.jsonc` and :mod:`thatch.plugin.blocks` (the
files setup edits), :mod:`thatch.plugin.launcher` (how a harness runs
thatch), :mod:`thatch.plugin.sqlite` (SQLite that survives crashes and
concurrent writers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.heap import release_free_memory
from thatch.plugin.commands import Command, CommandContext, CommandRunner
from thatch.plugin.config import DEFAULT_BACKEND, DEFAULT_MODEL, Config
from thatch.plugin.decision_storage import ConfidenceRule, DecisionKind, DecisionStorage
from thatch.plugin.decisions import SIGNALS, Edge, Fire, Matcher, Prediction, Provenance, Signal
from thatch.plugin.embedder import DEFAULT_PREDICTION_THRESHOLD, Embedder, Thresholds
from thatch.plugin.errors import (
    ArchivedMemoryError,
    ConfigError,
    InvalidInputError,
    NotFoundError,
    PluginMissingError,
    StorageError,
    ThatchError,
)
from thatch.plugin.events import EVENT_KINDS, Event, EventKind, ToolCall, shared_identity
from thatch.plugin.fields import describe_value, optional_flag, optional_text, text_field
from thatch.plugin.harness import AnswerKind, Harness, HarnessBase, HookCommand, PayloadClaim
from thatch.plugin.nudge import TIERS, Nudge, plain_text
from thatch.plugin.prediction_log import LoggedPrediction, PredictionStorage
from thatch.plugin.receptor import (
    AXES,
    DELIVERY_MODES,
    Axis,
    DeliveryMode,
    EventHistory,
    FiringComposition,
    Interpretation,
    InterpretationRule,
    SignalReading,
    SignalSource,
    Window,
)
from thatch.plugin.records import (
    GLOBAL_STORE,
    DuplicatePair,
    Memory,
    NewMemory,
    RecallHit,
    Scope,
    ScoredId,
    StoreInfo,
    WriteResult,
)
from thatch.plugin.setup import (
    Change,
    Detection,
    JsonEntry,
    JsonListItem,
    OwnedFile,
    RetiredBlock,
    RetiredEntry,
    RetiredFile,
    RetiredItem,
    SetupContext,
    TextBlock,
)
from thatch.plugin.specs import ISOLATED_HOOKS, hookimpl
from thatch.plugin.storage import VERDICTS, MemoryStorage, Storage, Verdict
from thatch.plugin.tables import ConfigKey, ConfigTable
from thatch.plugin.tool import Tool, ToolContext, ToolHandler
from thatch.private import make_private_dirs

if TYPE_CHECKING:
    # What hooks and tools receive; internal classes, named here for annotations only.
    from thatch.api import Thatch
    from thatch.plugin.storage import Matrix, Vector
    from thatch.runtime import Runtime

__all__ = [
    "AXES",
    "DEFAULT_BACKEND",
    "DEFAULT_MODEL",
    "DEFAULT_PREDICTION_THRESHOLD",
    "DELIVERY_MODES",
    "EVENT_KINDS",
    "GLOBAL_STORE",
    "ISOLATED_HOOKS",
    "SIGNALS",
    "TIERS",
    "VERDICTS",
    "AnswerKind",
    "ArchivedMemoryError",
    "Axis",
    "Change",
    "Command",
    "CommandContext",
    "CommandRunner",
    "ConfidenceRule",
    "Config",
    "ConfigError",
    "ConfigKey",
    "ConfigTable",
    "DecisionKind",
    "DecisionStorage",
    "DeliveryMode",
    "Detection",
    "DuplicatePair",
    "Edge",
    "Embedder",
    "Event",
    "EventHistory",
    "EventKind",
    "Fire",
    "FiringComposition",
    "Harness",
    "HarnessBase",
    "HookCommand",
    "Interpretation",
    "InterpretationRule",
    "InvalidInputError",
    "JsonEntry",
    "JsonListItem",
    "LoggedPrediction",
    "Matcher",
    "Matrix",
    "Memory",
    "MemoryStorage",
    "NewMemory",
    "NotFoundError",
    "Nudge",
    "OwnedFile",
    "PayloadClaim",
    "PluginMissingError",
    "Prediction",
    "PredictionStorage",
    "Provenance",
    "RecallHit",
    "RetiredBlock",
    "RetiredEntry",
    "RetiredFile",
    "RetiredItem",
    "Runtime",
    "Scope",
    "ScoredId",
    "SetupContext",
    "Signal",
    "SignalReading",
    "SignalSource",
    "Storage",
    "StorageError",
    "StoreInfo",
    "TextBlock",
    "Thatch",
    "ThatchError",
    "Thresholds",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolHandler",
    "Vector",
    "Verdict",
    "Window",
    "WriteResult",
    "describe_value",
    "hookimpl",
    "make_private_dirs",
    "optional_flag",
    "optional_text",
    "plain_text",
    "release_free_memory",
    "shared_identity",
    "text_field",
]
