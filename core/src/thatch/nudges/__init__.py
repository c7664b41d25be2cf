"""Nudges: what thatch adds to a prompt, and how it fits a character budget.

:mod:`~thatch.plugin.nudge` holds the record, :mod:`~thatch.nudges.compose`
fits nudges into the budget, :mod:`~thatch.nudges.recall`,
:mod:`~thatch.nudges.decisions` and :mod:`~thatch.nudges.reminder` write the
built-in texts, :mod:`~thatch.nudges.framing` marks the recorded text they
quote as data, :mod:`~thatch.nudges.delivery` formats the output. Nothing is
imported here, so the hook commands can use the delivery formats cheaply.
"""
