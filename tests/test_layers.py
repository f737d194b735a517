"""The arrows between squad's packages run one way: each imports only from layers below it.

Every import counts, at the top of a module, inside a function or under ``TYPE_CHECKING``,
because a lazy import is still a dependency. A new package is placed in a layer here, or this
test says where it is missing.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "squad"

LAYERS: list[set[str]] = [
    {"errors", "lazy"},
    {"fsutil"},
    {
        "clock",
        "paths",
        "flock",
        "eventlines",
        "prompts",
        "diskfull",
        "cache_file",
        "pydantic_plugins",
        "deferred_init",
    },
    {"text", "spec", "views"},
    {"settings", "classifier", "telemetry"},
    {"model", "store", "workspace", "history", "scaffold"},
    {"memory", "checkpoints", "manager", "run_history"},
    {"extraction"},
    {"runtime", "jobqueue"},
    {"chat"},
    {"app"},
    {"scan"},
    {"daemon", "transfer"},
    {"cluster"},
    {"web"},
    {"mcp"},
    {"cli"},
    {"__main__"},
]
"""Lowest first. ``squad/__init__.py`` re-exports the public API lazily and stands above all."""
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def _unit(module: str) -> str:
    """``squad.memory.files`` -> ``memory``; ``squad.clock`` -> ``clock``."""
    return module.split(".")[1]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, squad module) of every absolute import of squad in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "squad":  # from squad import prompts
                found += [(node.lineno, f"squad.{alias.name}") for alias in node.names]
            elif node.module.startswith("squad."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("squad.")]
    return found


def _modules() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*.py")
        if "migrations" not in path.parts and path != ROOT / "__init__.py"
    )


def test_every_package_and_module_has_a_layer() -> None:
    units = {path.relative_to(ROOT).parts[0].removesuffix(".py") for path in _modules()}
    assert units - set(RANK) == set(), "place the new package in LAYERS"


def test_every_module_imports_only_from_layers_below_its_own() -> None:
    upward = []
    for path in _modules():
        own = path.relative_to(ROOT).parts[0].removesuffix(".py")
        upward += [
            f"{path.relative_to(ROOT)} ({own}, layer {RANK[own]}) line {line}: {module} "
            f"({_unit(module)}, layer {RANK.get(_unit(module))})"
            for line, module in _imports(path)
            if _unit(module) != own and RANK.get(_unit(module), 99) >= RANK[own]
        ]
    assert upward == [], "\n".join(["imports upward or sideways:", *upward])
