"""``thatch setup``: what harness plugins ask to install, and the engine that installs it.

Harness plugins describe changes (:mod:`thatch.plugin.setup`); core applies
them idempotently, keeps a backup and a manifest, shows diffs on
``--dry-run`` and removes exactly what it added on ``--uninstall``.
"""
