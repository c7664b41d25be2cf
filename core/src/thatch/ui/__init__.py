"""``thatch ui``: a local web page to see and tend memories and the decision model.

- :mod:`thatch.ui.guard` keeps the page to its user: the URL's token, the
  cookie it becomes, the CSRF token of every change and the headers that
  forbid inline script and framing.
- :mod:`thatch.ui.memories`, :mod:`thatch.ui.duplicates`,
  :mod:`thatch.ui.hygiene`, :mod:`thatch.ui.decisions` and
  :mod:`thatch.ui.plugins` answer the pages, reading and writing through
  :class:`thatch.api.Thatch` as the CLI does, so any storage backend works;
  :mod:`thatch.ui.context` is what they share (the API object, one call at
  a time, the templates, where a change may send the browser back to).
- :mod:`thatch.ui.app` puts the routes behind the guard;
  :mod:`thatch.ui.server` binds the loopback interface and runs uvicorn.

Templates and assets ship inside this package: the page works offline.
"""
