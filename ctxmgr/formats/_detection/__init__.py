"""The light half of each format: what may run before, or instead of, its full reader.

Each module here (one per format, named in the format's registry entry,
:mod:`ctxmgr._format_registry`) holds the format's ``score(value)`` (NO, PLAUSIBLE or
CERTAIN), its ``clue(value)`` for files no format recognises, what its reader carries
into the model (``CARRIED``), its outline reader if it has one with the declaration both
of its readers follow (``DECLARATION``, see :mod:`ctxmgr.formats._declaration`), and the
constants it shares with the full reader. None of them imports pydantic or the model: every command
detects before anything else, and ``trim`` on plain OpenAI chat or native files never
needs the full reader at all (see :mod:`ctxmgr.formats._outlines`). Each is imported when
the registry first asks for it.
"""
