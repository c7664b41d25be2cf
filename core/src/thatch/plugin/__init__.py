"""The plugin contract: everything a thatch plugin may import.

A plugin imports from ``thatch.plugin`` (and its submodules) and, in its
tests, from ``thatch.testing``; every other module of thatch is internal and
may change in any release. ``tests/unit/test_plugin_boundary.py`` fails when
a module under ``plugins/`` imports anything else, and the import-linter
contracts in ``.importlinter`` keep this package from importing the rest of
thatch.

Submodules a plugin may also use: :mod:`thatch.plugin.fields` (payload field
readers), :mod:`thatch.plugin.jsonc` and :mod:`thatch.plugin.blocks` (the
files setup edits), :mod:`thatch.plugin.launcher` (how a harness runs
thatch), :mod:`thatch.plugin.sqlite` (SQLite that survives crashes and
concurrent writers), :mod:`thatch.plugin.quantized` (int8 codes of unit
vectors and their first-pass scan, for a backend that searches in memory),
:mod:`thatch.plugin.word_budget` (a query's words chosen rarest first within
a budget of postings), :mod:`thatch.plugin.sql_rows` (the records of the rows
an SQL backend reads, and the errors it raises for a row),
:mod:`thatch.plugin.per_config` (one open storage per config for all of a
backend's storage hooks).

Every name is imported on first use (PEP 562), so ``import thatch.plugin.errors``
or ``from thatch.plugin import hookimpl`` costs only that module: the hook
commands and the MCP relay stay on the standard library.
"""

from __future__ import annotations

# Not ``typing.TYPE_CHECKING``: importing typing costs the hook commands ~2 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    # What hooks and tools receive: internal classes, named for annotations only.
    from thatch.api import Thatch as Thatch
    from thatch.malloc_trim import release_free_memory
    from thatch.plugin.commands import Command, CommandContext, CommandRunner
    from thatch.plugin.config import (
        DEFAULT_BACKEND,
        DEFAULT_MODEL,
        STORAGE_PARTS,
        Config,
        StoragePart,
    )
    from thatch.plugin.decision_storage import ConfidenceRule, DecisionKind, DecisionStorage
    from thatch.plugin.decisions import SIGNALS, Edge, Fire, Matcher, Prediction, Provenance, Signal
    from thatch.plugin.embedder import DEFAULT_PREDICTION_THRESHOLD, Embedder, Thresholds
    from thatch.plugin.errors import (
        ArchivedMemoryError,
        ConfigError,
        InvalidInputError,
        LabelTakenError,
        NotFoundError,
        PluginMissingError,
        StorageError,
        ThatchError,
    )
    from thatch.plugin.events import EVENT_KINDS, Event, EventKind, ToolCall, shared_identity
    from thatch.plugin.fields import describe_value, optional_flag, optional_text, text_field
    from thatch.plugin.harness import (
        AnswerKind,
        ExtractionWorkflow,
        Harness,
        HarnessBase,
        HookCommand,
        PayloadClaim,
    )
    from thatch.plugin.nudge import TIERS, Nudge, plain_text
    from thatch.plugin.panels import PanelMark, PanelPoint, SessionPanel
    from thatch.plugin.prediction_log import (
        ACTUALS,
        SOURCES,
        Candidate,
        LoggedPrediction,
        PredictionStorage,
    )
    from thatch.plugin.privacy import redact_secrets
    from thatch.plugin.receptor import (
        AXES,
        DELIVERY_MODES,
        PATTERNS,
        WINDOW_SECONDS,
        WINDOWS,
        Axis,
        DeliveryMode,
        EventHistory,
        FiringComposition,
        Interpretation,
        InterpretationRule,
        SignalReading,
        SignalSource,
        Window,
        delta_key,
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
        Briefing,
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
        Workflow,
        compare_installed,
    )
    from thatch.plugin.specs import ISOLATED_HOOKS, hookimpl
    from thatch.plugin.storage import (
        VERDICTS,
        MemoryStorage,
        Verdict,
    )
    from thatch.plugin.storage import (
        Matrix as Matrix,
    )
    from thatch.plugin.storage import (
        Vector as Vector,
    )
    from thatch.plugin.tables import ConfigKey, ConfigTable
    from thatch.plugin.tool import Tool, ToolContext, ToolHandler
    from thatch.private import make_private_dirs
    from thatch.runtime import Runtime as Runtime

#: Where each exported name lives.
_HOMES = {
    "AXES": "thatch.plugin.receptor",
    "AnswerKind": "thatch.plugin.harness",
    "ArchivedMemoryError": "thatch.plugin.errors",
    "Axis": "thatch.plugin.receptor",
    "Briefing": "thatch.plugin.setup",
    "Change": "thatch.plugin.setup",
    "Command": "thatch.plugin.commands",
    "CommandContext": "thatch.plugin.commands",
    "CommandRunner": "thatch.plugin.commands",
    "ConfidenceRule": "thatch.plugin.decision_storage",
    "Config": "thatch.plugin.config",
    "ConfigError": "thatch.plugin.errors",
    "ConfigKey": "thatch.plugin.tables",
    "ConfigTable": "thatch.plugin.tables",
    "DEFAULT_BACKEND": "thatch.plugin.config",
    "DEFAULT_MODEL": "thatch.plugin.config",
    "DEFAULT_PREDICTION_THRESHOLD": "thatch.plugin.embedder",
    "DELIVERY_MODES": "thatch.plugin.receptor",
    "DecisionKind": "thatch.plugin.decision_storage",
    "DecisionStorage": "thatch.plugin.decision_storage",
    "DeliveryMode": "thatch.plugin.receptor",
    "Detection": "thatch.plugin.setup",
    "DuplicatePair": "thatch.plugin.records",
    "EVENT_KINDS": "thatch.plugin.events",
    "Edge": "thatch.plugin.decisions",
    "Embedder": "thatch.plugin.embedder",
    "Event": "thatch.plugin.events",
    "EventHistory": "thatch.plugin.receptor",
    "EventKind": "thatch.plugin.events",
    "ExtractionWorkflow": "thatch.plugin.harness",
    "Fire": "thatch.plugin.decisions",
    "FiringComposition": "thatch.plugin.receptor",
    "GLOBAL_STORE": "thatch.plugin.records",
    "Harness": "thatch.plugin.harness",
    "HarnessBase": "thatch.plugin.harness",
    "HookCommand": "thatch.plugin.harness",
    "ISOLATED_HOOKS": "thatch.plugin.specs",
    "Interpretation": "thatch.plugin.receptor",
    "InterpretationRule": "thatch.plugin.receptor",
    "InvalidInputError": "thatch.plugin.errors",
    "JsonEntry": "thatch.plugin.setup",
    "JsonListItem": "thatch.plugin.setup",
    "LabelTakenError": "thatch.plugin.errors",
    "LoggedPrediction": "thatch.plugin.prediction_log",
    "Matcher": "thatch.plugin.decisions",
    "Memory": "thatch.plugin.records",
    "MemoryStorage": "thatch.plugin.storage",
    "NewMemory": "thatch.plugin.records",
    "NotFoundError": "thatch.plugin.errors",
    "Nudge": "thatch.plugin.nudge",
    "OwnedFile": "thatch.plugin.setup",
    "PanelMark": "thatch.plugin.panels",
    "PanelPoint": "thatch.plugin.panels",
    "PATTERNS": "thatch.plugin.receptor",
    "PayloadClaim": "thatch.plugin.harness",
    "PluginMissingError": "thatch.plugin.errors",
    "Prediction": "thatch.plugin.decisions",
    "PredictionStorage": "thatch.plugin.prediction_log",
    "Provenance": "thatch.plugin.decisions",
    "RecallHit": "thatch.plugin.records",
    "RetiredBlock": "thatch.plugin.setup",
    "RetiredEntry": "thatch.plugin.setup",
    "RetiredFile": "thatch.plugin.setup",
    "RetiredItem": "thatch.plugin.setup",
    "SIGNALS": "thatch.plugin.decisions",
    "STORAGE_PARTS": "thatch.plugin.config",
    "Scope": "thatch.plugin.records",
    "ScoredId": "thatch.plugin.records",
    "SessionPanel": "thatch.plugin.panels",
    "SetupContext": "thatch.plugin.setup",
    "Signal": "thatch.plugin.decisions",
    "SignalReading": "thatch.plugin.receptor",
    "SignalSource": "thatch.plugin.receptor",
    "StorageError": "thatch.plugin.errors",
    "StoragePart": "thatch.plugin.config",
    "StoreInfo": "thatch.plugin.records",
    "TIERS": "thatch.plugin.nudge",
    "TextBlock": "thatch.plugin.setup",
    "ThatchError": "thatch.plugin.errors",
    "Thresholds": "thatch.plugin.embedder",
    "Tool": "thatch.plugin.tool",
    "ToolCall": "thatch.plugin.events",
    "ToolContext": "thatch.plugin.tool",
    "ToolHandler": "thatch.plugin.tool",
    "VERDICTS": "thatch.plugin.storage",
    "Verdict": "thatch.plugin.storage",
    "WINDOWS": "thatch.plugin.receptor",
    "WINDOW_SECONDS": "thatch.plugin.receptor",
    "Window": "thatch.plugin.receptor",
    "Workflow": "thatch.plugin.setup",
    "WriteResult": "thatch.plugin.records",
    "compare_installed": "thatch.plugin.setup",
    "delta_key": "thatch.plugin.receptor",
    "describe_value": "thatch.plugin.fields",
    "ACTUALS": "thatch.plugin.prediction_log",
    "SOURCES": "thatch.plugin.prediction_log",
    "Candidate": "thatch.plugin.prediction_log",
    "hookimpl": "thatch.plugin.specs",
    "make_private_dirs": "thatch.private",
    "optional_flag": "thatch.plugin.fields",
    "optional_text": "thatch.plugin.fields",
    "plain_text": "thatch.plugin.nudge",
    "redact_secrets": "thatch.plugin.privacy",
    "release_free_memory": "thatch.malloc_trim",
    "shared_identity": "thatch.plugin.events",
    "text_field": "thatch.plugin.fields",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'thatch.plugin' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ACTUALS",
    "AXES",
    "DEFAULT_BACKEND",
    "DEFAULT_MODEL",
    "DEFAULT_PREDICTION_THRESHOLD",
    "DELIVERY_MODES",
    "EVENT_KINDS",
    "GLOBAL_STORE",
    "ISOLATED_HOOKS",
    "PATTERNS",
    "SIGNALS",
    "SOURCES",
    "STORAGE_PARTS",
    "TIERS",
    "VERDICTS",
    "WINDOWS",
    "WINDOW_SECONDS",
    "AnswerKind",
    "ArchivedMemoryError",
    "Axis",
    "Briefing",
    "Candidate",
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
    "ExtractionWorkflow",
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
    "LabelTakenError",
    "LoggedPrediction",
    "Matcher",
    "Memory",
    "MemoryStorage",
    "NewMemory",
    "NotFoundError",
    "Nudge",
    "OwnedFile",
    "PanelMark",
    "PanelPoint",
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
    "Scope",
    "ScoredId",
    "SessionPanel",
    "SetupContext",
    "Signal",
    "SignalReading",
    "SignalSource",
    "StorageError",
    "StoragePart",
    "StoreInfo",
    "TextBlock",
    "ThatchError",
    "Thresholds",
    "Tool",
    "ToolCall",
    "ToolContext",
    "ToolHandler",
    "Verdict",
    "Window",
    "Workflow",
    "WriteResult",
    "compare_installed",
    "delta_key",
    "describe_value",
    "hookimpl",
    "make_private_dirs",
    "optional_flag",
    "optional_text",
    "plain_text",
    "redact_secrets",
    "release_free_memory",
    "shared_identity",
    "text_field",
]
