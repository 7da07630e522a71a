"""``ctxmgr config``'s report rendered for a terminal; the configuration itself is
:mod:`ctxmgr.config` (the files, their trust rules, what each command's settings are)."""

from __future__ import annotations

from typing import Any

from ctxmgr.cli.console import printable
from ctxmgr.config import toml_value

__all__ = ["render"]


def render(description: dict[str, Any]) -> list[str]:
    """``describe``'s report as Rich markup lines; every value and name printed literally."""
    from rich.markup import escape

    def text(value: object) -> str:
        return escape(printable(value))

    user = description["user_config"]
    lines = [f"user config: {text(user['path'])} ({'read' if user['found'] else 'not found'})"]
    project = description["project"]
    if project is None:
        lines.append(escape("project config: none (no [tool.ctxmgr] in a pyproject.toml, no ctxmgr.toml)"))
    else:
        lines.append(f"project config: {text(project['path'])} {escape(project['table'])}".rstrip())
        lines.append(f"  owner: {text(project['owner'])}")
        for passed_over in project["passed_over"]:
            lines.append(f"  [yellow]not used:[/] {text(passed_over)} (the ctxmgr.toml beside it wins)")
        if project["read"] and project["trusted"]:
            lines.append(f"  trusted: yes ({text(project['why'])})")
        elif project["read"]:
            lines.append(f"  trusted: no; {text(project['why'].removeprefix('not trusted: '))}")
    lines.append("precedence: command-line flag > environment > project config > user config > default")
    unused: dict[tuple[str, str], list[str]] = {}
    for item in description["overridden"]:
        unused.setdefault((item["command"], item["flag"]), []).append(
            f"[yellow]not used:[/] {text(toml_value(item['value']))} from {text(item['source'])}: "
            f"{text(item['because'])}"
        )
    for item in description["refused"]:
        unused.setdefault((item["command"], item["flag"]), []).append(
            f"[bold red]refused:[/] {text(toml_value(item['value']))} from {text(item['source'])}: "
            "a project file may not set this unless you trust the project"
        )
    for name, settings in description["commands"].items():
        lines.append(f"\n[bold]{escape(name)}[/]")
        for flag, entry in settings.items():
            source = entry["source"]
            if source == "default":
                label, style = "default", "dim"
            elif source.startswith(("environment ", "user config ")):
                label, style = source, "green"
            else:
                trusted = description["trusted"][name][flag]
                label, style = f"{source}; project, {'trusted' if trusted else 'not trusted'}", "green"
            lines.append(f"  {escape(flag)} = {text(toml_value(entry['value']))}  [{style}]({text(label)})[/]")
            lines.extend(f"      {line}" for line in unused.get((name, flag), ()))
    return lines
