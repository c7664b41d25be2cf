"""thatch-opencode: thatch for opencode.

opencode runs JS plugins, not hook commands, so setup installs a small JS
file (rendered from ``thatch.js.tmpl`` by :mod:`thatch_opencode.jsplugin`)
that runs ``thatch hook opencode EVENT`` for the events thatch reads and puts
the answer where opencode shows it to the model. :mod:`thatch_opencode.plugin`
is the entry point; :mod:`thatch_opencode.events` parses what the JS sends and
:mod:`thatch_opencode.target` is the ``thatch setup --opencode`` target.
Nothing heavy is imported here.
"""

#: The harness name on the command line (``thatch hook opencode ...``, ``--opencode``).
HARNESS = "opencode"
