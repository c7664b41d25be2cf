"""An example receptor plugin: a signal source and an interpretation rule of a third party's own.

The source, ``recurring-error``, reads frustration from one error coming back
across failed calls, whatever the agent tries; the rule of the same name
offers what is known about that error. Both import only ``thatch.plugin``.
See ``README.md`` for how this plugin is put together.
"""

#: The name of the source and of the rule (both may share one: they are named apart).
NAME = "recurring-error"
