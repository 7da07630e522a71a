"""ctxmgr: compact saved LLM conversations offline.

The library API: the model and managers in :mod:`ctxmgr.state` (mirroring 10xGraph's
``tenxgraph.core.state``), formats in :mod:`ctxmgr.formats`, summarizers in
:mod:`ctxmgr.providers`, whole files in :mod:`ctxmgr.files`, and the one-call helpers
below: :func:`compact` and :func:`acompact` for one conversation, :func:`compact_paths`
for files, folders and patterns as the command line runs them.
"""

from typing import TYPE_CHECKING, Any

from ctxmgr.errors import CtxmgrError, InputError, ProviderError

if TYPE_CHECKING:
    from ctxmgr._pipeline import Outcome, acompact, compact
    from ctxmgr.files._run import compact_paths

__version__ = "0.1.0"

__all__ = [
    "CtxmgrError",
    "InputError",
    "Outcome",
    "ProviderError",
    "__version__",
    "acompact",
    "compact",
    "compact_paths",
]


def __getattr__(name: str) -> Any:
    # The pipeline (and with it pydantic and every format) loads on first use, so
    # `import ctxmgr` and `ctxmgr --help` stay quick.
    if name in ("Outcome", "acompact", "compact"):
        from ctxmgr import _pipeline as pipeline

        return getattr(pipeline, name)
    if name == "compact_paths":
        from ctxmgr.files._run import compact_paths

        return compact_paths
    raise AttributeError(f"module 'ctxmgr' has no attribute {name!r}")
