"""The ``thatch`` entry point of thatch-fastembed: provides the default embedder.

Importing this module is cheap: the embedder class (and numpy) is imported only
when the hook is called, and fastembed only when a vector is first needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from thatch.plugin import hookimpl

if TYPE_CHECKING:
    from thatch.plugin import Config, ConfigTable

    from thatch_fastembed.embedder import FastEmbedder


@hookimpl
def thatch_config_tables() -> tuple[ConfigTable, ...]:
    """``[embedder.fastembed]`` (:mod:`thatch_fastembed.settings`)."""
    from thatch_fastembed.settings import FASTEMBED_TABLE

    return (FASTEMBED_TABLE,)


# trylast: this is the fallback. It answers for any model name (it cannot tell an
# unknown name without importing fastembed), so a third-party embedder that
# claims config.model must be asked first.
@hookimpl(trylast=True)
def thatch_embedder(config: Config) -> FastEmbedder:
    """The embedder ``config.model`` / ``config.model_path`` name; it loads on first use."""
    from thatch_fastembed.embedder import FastEmbedder

    return FastEmbedder.from_config(config)
