"""thatch-receptor: reads how the agent's work is going from its tool calls.

:mod:`thatch_receptor.plugin` registers under the ``thatch`` entry-point
group as ``receptor``. Nothing is imported here.
"""
