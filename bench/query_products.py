"""``--query-products``: run a bench's queries with int8 or float32 weight products.

The default embedder computes query embeddings with the model's int8 weight
products (``[embedder.fastembed] query_products``, thatch_fastembed.int8_products);
a bench that takes this option writes the setting into its own home's config
file before opening it, so the two can be measured side by side.
"""

from __future__ import annotations

import argparse
import os

from homes import append_config
from thatch_fastembed.settings import QUERY_PRODUCTS


def add_option(parser: argparse.ArgumentParser) -> None:
    """The ``--query-products`` option (default: the shipped setting, int8)."""
    parser.add_argument(
        "--query-products",
        choices=QUERY_PRODUCTS,
        default=None,
        help="how queries compute the model's weight products (default: as shipped, int8)",
    )


def configure(home: str | os.PathLike[str], products: str | None) -> None:
    """Write ``products`` into the config file of the thatch home ``home`` (None: leave it)."""
    if products is None:
        return
    append_config(home, "embedder.fastembed", {"query_products": f'"{products}"'})
