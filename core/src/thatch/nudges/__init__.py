"""Nudges: what thatch adds to a prompt, and how it fits a character budget.

:mod:`~thatch.plugin.nudge` holds the record, :mod:`~thatch.nudges.compose`
fits nudges into the budget, :mod:`~thatch.nudges.recall`,
:mod:`~thatch.decisions.nudge` and :mod:`~thatch.nudges.reminder` write the
built-in texts, :mod:`~thatch.nudges.framing` marks the recorded text they
quote as data. Each harness formats the output its own way
(``Harness.deliver``, in its plugin). Nothing is imported here.
"""
