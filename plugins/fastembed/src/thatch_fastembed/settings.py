"""``[embedder.fastembed]``: the default embedder's own settings."""

from __future__ import annotations

from typing import Literal, get_args

from thatch.plugin import ConfigKey, ConfigTable

#: How the query session computes the model's weight products.
QueryProducts = Literal["int8", "float32"]
QUERY_PRODUCTS: tuple[str, ...] = get_args(QueryProducts)


def _query_products(value: str) -> str | None:
    if value in QUERY_PRODUCTS:
        return None
    return 'use "int8" (queries run the weight products in integers, twice as fast) or "float32"'


FASTEMBED_TABLE = ConfigTable(
    name="embedder.fastembed",
    keys=(
        ConfigKey(
            "query_products",
            str,
            "int8",
            'how query embedding computes the model\'s int8 weight products: "int8" or "float32"',
            check=_query_products,
        ),
    ),
    help="the default embedder (fastembed)",
)
