"""thatch's hook specifications: the whole contract between core and plugins.

A plugin is a module (or object) with functions named after these specs and
marked with :data:`hookimpl`, registered under the ``thatch`` entry-point
group::

    [project.entry-points.thatch]
    myplugin = "my_package.plugin"

Each hook is documented for plugin authors in ``docs/plugins.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from thatch.config import Config
    from thatch.embedding import Embedder
    from thatch.storage import Storage

PROJECT = "thatch"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec(firstresult=True)
def thatch_storage(config: Config) -> Storage | None:
    """Open the storage backend that keeps memories.

    The first plugin that returns an object wins, so a backend returns None
    unless ``config.storage_backend`` names it.

    :param config: the loaded settings; ``config.db_path`` is where an
        embedded backend keeps its file.
    :return: an object that implements :class:`thatch.storage.Storage`, or None.
    """


@hookspec(firstresult=True)
def thatch_embedder(config: Config) -> Embedder | None:
    """Provide the embedder that turns text into vectors.

    The first plugin that returns an object wins. Load the model lazily, on
    the first call that needs it: commands such as ``thatch list`` never embed.

    :param config: the loaded settings; ``config.model`` and
        ``config.model_path`` name the model the user chose.
    :return: an object that implements :class:`thatch.embedding.Embedder`, or None.
    """
