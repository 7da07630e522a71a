"""ctxmgr: compact saved LLM conversations offline.

The library API: the model and managers in :mod:`ctxmgr.state` (mirroring 10xGraph's
``tenxgraph.core.state``), formats in :mod:`ctxmgr.formats`, summarizers in
:mod:`ctxmgr.providers`, and the one-call helpers below.
"""

from ctxmgr.errors import CtxmgrError, InputError, ProviderError
from ctxmgr.pipeline import Outcome, acompact, compact

__version__ = "0.1.0"

__all__ = ["CtxmgrError", "InputError", "Outcome", "ProviderError", "__version__", "acompact", "compact"]
