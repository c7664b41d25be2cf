"""``thatch setup`` (filled in once the setup engine lands)."""

from __future__ import annotations

import argparse


def setup(args: argparse.Namespace) -> int:
    raise NotImplementedError
