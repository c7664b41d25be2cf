"""thatch-cursor: thatch's integration with the Cursor agent.

:mod:`thatch_cursor.plugin` registers it under the ``thatch`` entry-point
group. It turns Cursor hook payloads into core events
(:mod:`thatch_cursor.payloads`), formats what the hook prints back
(:mod:`thatch_cursor.delivery`) and tells ``thatch setup`` what to write into
``.cursor/`` (:mod:`thatch_cursor.target`). Nothing heavy is imported here.
"""

#: The harness name on the command line: ``thatch hook cursor EVENT``.
HARNESS = "cursor"
