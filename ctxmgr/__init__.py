"""ctxmgr: compact saved LLM conversations offline.

The library API: the model and managers in :mod:`ctxmgr.state` (mirroring 10xGraph's
``tenxgraph.core.state``), formats in :mod:`ctxmgr.formats`, summarizers in
:mod:`ctxmgr.providers`, and the one-call helpers below.
"""

from typing import TYPE_CHECKING, Any

from ctxmgr.errors import CtxmgrError, InputError, ProviderError

if TYPE_CHECKING:
    from ctxmgr._pipeline import Outcome, acompact, compact

__version__ = "0.1.0"

__all__ = ["CtxmgrError", "InputError", "Outcome", "ProviderError", "__version__", "acompact", "compact"]


def __getattr__(name: str) -> Any:
    # The pipeline (and with it pydantic and every format) loads on first use, so
    # `import ctxmgr` and `ctxmgr --help` stay quick.
    if name in ("Outcome", "acompact", "compact"):
        from ctxmgr import _pipeline as pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'ctxmgr' has no attribute {name!r}")
