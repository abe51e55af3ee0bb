"""Every public import path of every installed framework's server classes is one the linter knows
(DESIGN §13.3, issue 31: never silent). The paths are derived from the installed frameworks' own
modules, not listed by hand: each package of ``mcp`` and ``fastmcp`` (the CLI aside) is imported and
every name bound to a server class is collected where it is public — in the module that defines the
class, or in a package that re-exports it under its own name (``from mcp.server import FastMCP``,
1.x). ``tests/framework_matrix.sh`` runs this in every supported environment, both ends of each line.
"""

from __future__ import annotations

import importlib
import pkgutil
import warnings

import pytest

from fusion_lint.facts.frameworks import SERVER_CLASSES


def server_classes() -> dict[type, str]:
    """The installed server classes, with the framework the linter must call each."""
    found: dict[type, str] = {}
    for module, name, framework in (
        ("mcp.server.fastmcp", "FastMCP", "mcp1"),
        ("mcp.server.mcpserver", "MCPServer", "mcp2"),
        ("mcp.server.lowlevel.server", "Server", "lowlevel1"),
        ("fastmcp", "FastMCP", "fastmcp"),
    ):
        try:
            found[getattr(importlib.import_module(module), name)] = framework
        except ImportError:
            continue
    return found


def public_paths(classes: dict[type, str]) -> dict[str, str]:
    """``module.Name`` -> framework, for every public binding of these classes."""
    paths: dict[str, str] = {}
    stack = ["mcp", "fastmcp"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated modules still import, and still count
        while stack:
            name = stack.pop()
            try:
                module = importlib.import_module(name)
            except BaseException:  # noqa: BLE001 - an optional extra missing (and mcp.cli exits)
                continue
            for info in pkgutil.iter_modules(getattr(module, "__path__", []), name + "."):
                last = info.name.rpartition(".")[2]
                if not last.startswith("_") and last != "cli":
                    stack.append(info.name)
            package = hasattr(module, "__path__")
            for attr in set(vars(module)) | set(getattr(module, "__all__", ())):
                if attr.startswith("_"):
                    continue
                try:
                    value = getattr(module, attr)
                except BaseException:  # noqa: BLE001 - a lazy attribute that fails to load
                    continue
                if isinstance(value, type) and value in classes:
                    if value.__module__ == name or (package and attr == value.__name__):
                        paths[f"{name}.{attr}"] = classes[value]
    return paths


def test_every_public_path_of_an_installed_server_class_is_recognised() -> None:
    classes = server_classes()
    if not classes:
        pytest.skip("no MCP framework is installed here")
    paths = public_paths(classes)
    assert paths, "no public path found: the walk itself is broken"
    missing = {path: framework for path, framework in paths.items() if SERVER_CLASSES.get(path) != framework}
    assert not missing, f"import paths the linter does not recognise as servers (or as another framework): {missing}"


def test_a_server_subclassing_the_1x_re_export_is_recognised() -> None:
    """The issue's server: ``from mcp.server import FastMCP`` (mcp 1.x's re-export), subclassed."""
    from harness import lint_sources

    source = (
        "from mcp.server import FastMCP\n\n\nclass Billing(FastMCP):\n    pass\n\n\napp = Billing('billing')\n\n\n"
        "@app.tool()\ndef lookup(key: str) -> str:\n    raise KeyError(key)\n"
    )
    report = lint_sources({"app.py": source})
    assert report.definitions == {"tool": 1}
    (message,) = [d.message for d in report.diagnostics if d.code == "FL300"]
    assert "(mcp 1.x FastMCP)" in message
