"""Load a user's own :class:`~ctxmgr.state.BaseContextManager` subclass by name.

``package.module:ClassName`` imports an importable module; ``path/to/file.py:ClassName``
loads that file. Either way this runs the named code, and only that code: loading a
conversation file never executes anything.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Any

from ctxmgr.errors import ManagerError, UsageError
from ctxmgr.state import BaseContextManager

__all__ = ["build_manager", "convert_option", "load_manager_class", "parse_options"]


def load_manager_class(spec: str) -> type[BaseContextManager[Any]]:
    """The class named by ``spec`` (``module:Class`` or ``file.py:Class``).

    A spec that names nothing usable (no such file, module or class, not a manager
    class) is a :class:`UsageError`; the named code failing as it is imported is a
    :class:`ManagerError`.
    """
    module_name, sep, class_name = spec.rpartition(":")
    if not sep or not module_name or not class_name:
        raise UsageError(f"--manager {spec!r}: expected 'package.module:ClassName' or 'path/to/file.py:ClassName'")
    try:
        module = _import(module_name)
    except (ManagerError, UsageError):
        raise
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise UsageError(f"--manager {spec}: no module named {exc.name}") from None
        raise ManagerError(f"--manager {spec}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    except Exception as exc:
        raise ManagerError(f"--manager {spec}: cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise UsageError(f"--manager {spec}: {module_name} has no attribute {class_name!r}")
    if not (isinstance(cls, type) and issubclass(cls, BaseContextManager)):
        raise UsageError(f"--manager {spec}: {class_name} is not a subclass of ctxmgr.state.BaseContextManager")
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
        raise UsageError(f"--manager {spec}: {class_name} is abstract (does not implement {missing})")
    return cls


def _import(module_name: str) -> types.ModuleType:
    if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
        path = Path(module_name)
        if not path.is_file():
            raise UsageError(f"--manager: no such file {module_name}")
        name = f"_ctxmgr_custom_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ManagerError(f"--manager: cannot load {module_name}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(module_name)


def parse_options(pairs: list[str]) -> dict[str, str]:
    """``["key=value", ...]`` as a dict; a pair without ``=`` is a usage error."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option {pair!r}: expected key=value")
        options[key.strip().replace("-", "_")] = value
    return options


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def convert_option(name: str, raw: str, annotation: Any) -> Any:
    """Convert the text ``raw`` to ``annotation`` (int, float, bool, str, Optional, Literal)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return _convert_union(name, raw, annotation)
    if origin is typing.Literal:
        return _convert_literal(name, raw, annotation)
    if annotation is bool:
        return _convert_bool(name, raw)
    if annotation in (int, float):
        try:
            return annotation(raw)
        except ValueError:
            raise UsageError(f"--option {name}: expected {annotation.__name__}, got {raw!r}") from None
    return raw


def _convert_union(name: str, raw: str, annotation: Any) -> Any:
    """The first arm of the union that takes ``raw``; 'none' is None when the union allows it."""
    arms = [a for a in typing.get_args(annotation) if a is not type(None)]
    if raw.lower() == "none" and len(arms) < len(typing.get_args(annotation)):
        return None
    errors: list[str] = []
    for arm in arms:
        try:
            return convert_option(name, raw, arm)
        except UsageError as exc:
            errors.append(str(exc))
    raise UsageError(errors[0] if errors else f"--option {name}: cannot convert {raw!r}")


def _convert_literal(name: str, raw: str, annotation: Any) -> Any:
    choices = typing.get_args(annotation)
    for choice in choices:
        if str(choice) == raw:
            return choice
    raise UsageError(f"--option {name}: must be one of {', '.join(map(str, choices))}, got {raw!r}")


def _convert_bool(name: str, raw: str) -> bool:
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise UsageError(f"--option {name}: expected true or false, got {raw!r}")


def build_manager(cls: type[BaseContextManager[Any]], options: dict[str, str]) -> BaseContextManager[Any]:
    """Instantiate ``cls`` with ``options`` converted by its ``__init__`` type hints."""
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:
        hints = {}
    parameters = inspect.signature(cls.__init__).parameters
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    kwargs: dict[str, Any] = {}
    for key, raw in options.items():
        if key not in parameters and not accepts_any:
            known = ", ".join(p for p in parameters if p != "self") or "none"
            raise UsageError(f"--option {key}: {cls.__name__} has no such parameter (parameters: {known})")
        kwargs[key] = convert_option(key, raw, hints.get(key, str))
    try:
        return cls(**kwargs)
    except Exception as exc:
        raise ManagerError(f"{cls.__name__}(...) failed: {type(exc).__name__}: {exc}") from None
