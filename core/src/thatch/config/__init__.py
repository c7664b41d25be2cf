"""Reading the config file beyond the contract's :class:`~thatch.plugin.config.Config`: folders
(:mod:`.paths`), the runtime's tables (:mod:`.settings`), core's schema (:mod:`.schema`) and the
tables plugins declare (:mod:`.plugin_tables`).
"""
