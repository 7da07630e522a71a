"""Engines that compact a dataset's lines somewhere other than this process.

The one-machine path (:mod:`ctxmgr.files`) reads, compacts and
writes a dataset here. An engine runs the same per-line compaction elsewhere and
gives back the same bytes, warnings, errors and counts:

- :mod:`ctxmgr.engines.ray` runs it as Ray Data tasks, on a local Ray or on a
  cluster (``--engine ray``; ``pip install 'ctxmgr[ray]'``).

Every engine reaches ctxmgr's compaction through one call,
:func:`ctxmgr.engines.compact_lines`: a list of dataset lines and the settings in,
output lines, warnings and counts out. It is public, so that any framework that maps
functions over lines (Spark's ``mapInPandas``, Dask's ``map_partitions``) can use it
too (see ``docs/distributed.md``). Nothing here imports Ray; ``ctxmgr.engines.ray``
imports it when it runs.
"""

from __future__ import annotations

from ctxmgr.engines._lines import CompactedLines, compact_lines

__all__ = ["CompactedLines", "compact_lines"]
