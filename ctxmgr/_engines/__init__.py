"""Engines that compact a dataset's lines somewhere other than this process.

The one-machine path (:mod:`ctxmgr.files`) reads, compacts and writes a dataset here.
An engine runs the same per-line compaction elsewhere and gives back the same bytes,
warnings, errors and counts:

- :mod:`ctxmgr._engines.ray` runs it as Ray Data tasks, on a local Ray or on a
  cluster (``--engine ray``; ``pip install 'ctxmgr[ray]'``).

An engine compacts each stretch of lines with the library's one call for a batch of
dataset lines, :func:`ctxmgr.files.compact_lines`, which any framework that maps
functions over lines (Spark's ``mapInPandas``, Dask's ``map_partitions``) can use too
(see ``docs/distributed.md``). This package exports nothing itself. Nothing here
imports Ray; ``ctxmgr._engines.ray`` imports it when it runs.
"""

from __future__ import annotations

__all__: list[str] = []
