"""thatch-fastembed: thatch's default embedder, fastembed running all-MiniLM-L6-v2.

The default model is the installed int8 ONNX pack, so no download is needed.
Names are imported lazily: loading the plugin imports neither numpy nor fastembed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "DEFAULT_MODEL_ID",
    "DEFAULT_THRESHOLDS",
    "PACK_DIM",
    "FastEmbedder",
    "ModelPackError",
    "load_thresholds",
]

if TYPE_CHECKING:
    from thatch_fastembed.embedder import DEFAULT_THRESHOLDS, FastEmbedder, load_thresholds
    from thatch_fastembed.model_pack import DEFAULT_MODEL_ID, PACK_DIM, ModelPackError

_WHERE = {
    "DEFAULT_MODEL_ID": "model_pack",
    "PACK_DIM": "model_pack",
    "ModelPackError": "model_pack",
    "DEFAULT_THRESHOLDS": "embedder",
    "FastEmbedder": "embedder",
    "load_thresholds": "embedder",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'thatch_fastembed' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"thatch_fastembed.{module}"), name)
