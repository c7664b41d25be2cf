"""What thatch tells the agent: the instructions (:mod:`.agent`), the reminders the hooks print
(:mod:`.reminders`, standard library only) and the workflows (:mod:`.workflows`).

Nothing is imported here: the hook commands import :mod:`.reminders` alone.
"""
