"""What a plugin does before it stores or shows text that came from the agent's tools."""

from __future__ import annotations


def redact_secrets(text: str) -> str:
    """``text`` with every secret (keys, tokens, passwords) replaced by ``[REDACTED:<kind>]``.

    The same redaction core applies to memories before they are stored: run
    it on anything a plugin keeps or injects from tool input or output.
    Idempotent, and linear in ``len(text)``.
    """
    from thatch.redact import redact

    return redact(text).text
