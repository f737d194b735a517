"""The docs site's generated reference pages, built from the code at every ``mkdocs build``.

A page asks for a reference with a marker line, ``<!-- reference: NAME -->``, and this hook
(``hooks:`` in ``mkdocs.yml``) replaces it with Markdown generated from the running code:

- ``cli``: every command of the Typer app, its arguments and options with their help;
- ``squad-yaml``: every key of the squad YAML format, from the JSON Schema ``squad schema``
  prints (the pydantic models and their field docstrings);
- ``settings``: every key of ``configs/settings.yaml``, from ``SettingsFile``;
- ``http-api``: every operation of the HTTP API, from the OpenAPI schema of the FastAPI app
  ``squad.web.app.create_app`` builds (on a throwaway home: nothing is opened or served).

Nothing is downloaded and no server is started, so the reference cannot go stale: a new
command, option, key or route is in the next build. The functions are importable, so tests
can check what they produce.
"""

from __future__ import annotations

import json
import re
import tempfile
import typing
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import Any

MARKER = re.compile(r"^<!-- reference: ([a-z-]+) -->$", re.MULTILINE)


# -- the hook -------------------------------------------------------------------------------


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each reference marker of a page with its generated Markdown."""

    def replace(match: re.Match[str]) -> str:
        name = match[1]
        if name not in GENERATORS:
            raise ValueError(f"unknown reference {name!r}; known: {', '.join(GENERATORS)}")
        return GENERATORS[name]()

    return MARKER.sub(replace, markdown)


# -- helpers --------------------------------------------------------------------------------


def _escape(text: str) -> str:
    """Angle brackets outside code spans as entities, so ``<run-id>`` is not read as HTML."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(
        part if part.startswith("`") else part.replace("<", "&lt;").replace(">", "&gt;")
        for part in parts
    )


def _cell(text: str | None) -> str:
    """Text fit for one Markdown table cell: one line, pipes escaped."""
    if not text:
        return ""
    flat = " ".join(line.strip() for line in text.replace("\b", "").splitlines() if line.strip())
    return _escape(flat).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def _paragraphs(text: str | None) -> str:
    """A docstring-like help text as Markdown paragraphs (typer's ``\\b`` markers dropped)."""
    if not text:
        return ""
    lines = [line.rstrip() for line in text.replace("\b", "").splitlines()]
    return _escape("\n".join(lines).strip())


# -- the CLI --------------------------------------------------------------------------------


def _commands(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command under ``command``, depth first in the order ``--help`` lists them."""
    yield path, command
    subcommands = getattr(command, "commands", None)
    if subcommands:
        for name, sub in subcommands.items():
            if not getattr(sub, "hidden", False):
                yield from _commands(sub, (*path, name))


def _type_name(annotation: Any) -> str:
    """What a value of this parameter looks like, for a reader."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " \\| ".join(str(value) for value in typing.get_args(annotation))
    if origin in (list, tuple):
        (inner, *_) = typing.get_args(annotation) or (str,)
        return _type_name(inner)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " \\| ".join(str(member.value) for member in annotation)
    names = {str: "text", int: "integer", float: "number", Path: "path", bool: "flag"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _repeatable(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (list, tuple)


def cli_commands() -> list[tuple[str, ...]]:
    """The path of every command of the ``squad`` CLI, groups included (``("squad", "ws")``)."""
    import typer.main

    from squad.cli.app import app

    root = typer.main.get_command(app)
    return [path for path, _ in _commands(root, ("squad",))]


def cli_markdown() -> str:
    """The CLI reference: one section per command, with its usage, help and parameters."""
    import typer.main

    from squad.cli.app import app

    root = typer.main.get_command(app)
    out: list[str] = []
    for path, command in _commands(root, ("squad",)):
        name = " ".join(path)
        group = bool(getattr(command, "commands", None))
        level = "#" * min(len(path) + 1, 4)
        out.append(f"{level} `{name}` {{#{_anchor(*path)}}}\n")
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        options = [p for p in command.params if p.param_type_name == "option"]
        usage = [name]
        if group:
            usage.append("COMMAND [ARGS]...")
        else:
            if options:
                usage.append("[OPTIONS]")
            for argument in arguments:
                shown = argument.name.upper()
                if _repeatable(argument.type_descriptor.annotation):
                    shown += "..."
                usage.append(shown if argument.required else f"[{shown}]")
        out.append(f"```text\n{' '.join(usage)}\n```\n")
        if command.help:
            out.append(_paragraphs(command.help) + "\n")
        if arguments:
            out.append("| argument | type | required | what |\n|---|---|---|---|")
            for argument in arguments:
                annotation = argument.type_descriptor.annotation
                kind = _type_name(annotation) + (", one or more" if _repeatable(annotation) else "")
                out.append(
                    f"| {_code(argument.name.upper())} | {kind} | "
                    f"{'yes' if argument.required else 'no'} | {_cell(argument.help)} |"
                )
            out.append("")
        if options:
            out.append("| option | value | default | what |\n|---|---|---|---|")
            for option in options:
                annotation = option.type_descriptor.annotation
                flag = bool(getattr(option, "is_flag", False))
                names = ", ".join(_code(o) for o in (*option.opts, *option.secondary_opts))
                value = "" if flag else _type_name(annotation)
                if _repeatable(annotation):
                    value += " (repeatable)"
                default = option.default
                shown = (
                    ""
                    if default is None or default is False or default == () or default == []
                    else _code(str(default.value if isinstance(default, Enum) else default))
                )
                if option.required:
                    shown = "required"
                out.append(f"| {names} | {value} | {shown} | {_cell(option.help)} |")
            out.append("")
        if group:
            out.append("| command | what |\n|---|---|")
            for sub_name, sub in command.commands.items():
                if not getattr(sub, "hidden", False):
                    summary = _cell((sub.help or "").split("\n\n")[0])
                    out.append(f"| [`{name} {sub_name}`](#{_anchor(name, sub_name)}) | {summary} |")
            out.append("")
    return "\n".join(out)


def _anchor(*words: str) -> str:
    """The id mkdocs' toc extension gives a heading such as ``squad memory show``."""
    return "-".join(" ".join(words).split())


# -- JSON-Schema-driven tables (squad YAML, settings) ---------------------------------------


def _schema_type(node: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in node:
        name = _ref_name(node["$ref"])
        return f"[{name}](#{_schema_anchor(name)})"
    if "anyOf" in node:
        kinds = [_schema_type(n, defs) for n in node["anyOf"] if n.get("type") != "null"]
        return " or ".join(dict.fromkeys(kinds))
    if "enum" in node:
        return " \\| ".join(_code(json.dumps(v)) for v in node["enum"])
    if "const" in node:
        return _code(json.dumps(node["const"]))
    kind = node.get("type", "any")
    if kind == "array":
        return f"list of {_schema_type(node.get('items', {}), defs)}"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"mapping of name to {_schema_type(node['additionalProperties'], defs)}"
    names = {"string": "text", "integer": "integer", "number": "number", "boolean": "true/false"}
    return names.get(kind, str(kind)) if isinstance(kind, str) else str(kind)


def _limits(node: dict[str, Any]) -> str:
    """The bounds a value must keep, from the schema's keywords (on the node or its anyOf)."""
    parts: list[str] = []
    nodes = [node, *node.get("anyOf", [])]
    for n in nodes:
        for key, text in (
            ("minimum", ">= {}"),
            ("exclusiveMinimum", "> {}"),
            ("maximum", "<= {}"),
            ("exclusiveMaximum", "< {}"),
            ("minLength", "at least {} characters"),
            ("maxLength", "at most {} characters"),
            ("minItems", "at least {} items"),
            ("maxItems", "at most {} items"),
        ):
            if key in n:
                parts.append(text.format(n[key]))
        if "pattern" in n:
            parts.append(f"matches {_code(n['pattern'])}")
    return "; ".join(dict.fromkeys(parts))


def _ref_name(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _default(node: dict[str, Any]) -> str:
    if "default" not in node:
        return ""
    value = node["default"]
    if value is None:
        return "none"
    if value in ({}, []):
        return _code(json.dumps(value))
    if isinstance(value, dict):
        return "see below"
    return _code(json.dumps(value) if not isinstance(value, str) or not value else value)


def _object_table(node: dict[str, Any], defs: dict[str, Any]) -> str:
    required = set(node.get("required", ()))
    rows = ["| key | type | default | what |", "|---|---|---|---|"]
    for key, field in node.get("properties", {}).items():
        kind = _schema_type(field, defs)
        limits = _limits(field)
        if limits:
            kind += f" ({limits})"
        default = "required" if key in required else _default(field)
        rows.append(f"| {_code(key)} | {kind} | {default} | {_cell(field.get('description'))} |")
    return "\n".join(rows)


def _schema_markdown(schema: dict[str, Any], root_title: str) -> str:
    defs = schema.get("$defs", {})
    out = [f"### {root_title}\n", _paragraphs(schema.get("description")) + "\n"]
    out.append(_object_table(schema, defs) + "\n")
    for name, node in defs.items():
        if node.get("type") != "object" or "properties" not in node:
            continue
        out.append(f"### {name} {{#{_schema_anchor(name)}}}\n")
        if node.get("description"):
            out.append(_paragraphs(node["description"]) + "\n")
        out.append(_object_table(node, defs) + "\n")
    return "\n".join(out)


def squad_yaml_schema() -> dict[str, Any]:
    """The JSON Schema of the squad YAML format, as ``squad schema`` prints it."""
    from squad.spec.docs import json_schema
    from squad.spec.models import SquadSpec

    return json_schema(SquadSpec)


def squad_yaml_markdown() -> str:
    """Every key of a squad definition: the top level, then each nested mapping."""
    return _schema_markdown(squad_yaml_schema(), "SquadSpec (the top level)")


def settings_schema() -> dict[str, Any]:
    from squad.settings import SettingsFile
    from squad.spec.docs import json_schema

    return json_schema(SettingsFile)


def settings_markdown() -> str:
    """Every key of ``configs/settings.yaml``: the top level, then each section."""
    return _schema_markdown(settings_schema(), "SettingsFile (the top level)")


# -- the HTTP API ---------------------------------------------------------------------------


class _NoRuns:
    """The run control of a web app that is only asked for its schema: never submits."""

    mode: typing.Literal["daemon", "dashboard"] = "dashboard"

    def submit(self, request: object) -> bool:
        raise RuntimeError("the reference build starts no run")

    def close(self) -> None:
        """Nothing to stop."""


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI schema the dashboard serves at ``/api/v1/openapi.json``, built from the same
    ``create_app`` on a throwaway squad home (``App.open`` opens nothing until asked)."""
    from squad.app import App
    from squad.settings import Settings
    from squad.web.app import create_app

    with tempfile.TemporaryDirectory(prefix="squad-docs-") as tmp:
        settings = Settings.load(environ={"SQUAD_HOME": str(Path(tmp) / "home")}, cwd=Path(tmp))
        with App.open(settings) as app:
            guard = create_app(app, _NoRuns(), token="docs-build")  # type: ignore[arg-type]
            schema: dict[str, Any] = guard.app.openapi()  # type: ignore[attr-defined]
    return schema


def _resolve(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = schema
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def _api_type(node: dict[str, Any]) -> str:
    if "$ref" in node:
        name = _ref_name(node["$ref"])
        return f"[{name}](#{_schema_anchor(name)})"
    if "anyOf" in node:
        kinds = [_api_type(n) for n in node["anyOf"] if n.get("type") != "null"]
        nullable = any(n.get("type") == "null" for n in node["anyOf"])
        return " or ".join(dict.fromkeys(kinds)) + (" or null" if nullable else "")
    if "enum" in node:
        return " \\| ".join(_code(json.dumps(v)) for v in node["enum"])
    if node.get("type") == "array":
        return f"list of {_api_type(node.get('items', {}))}"
    if node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"mapping to {_api_type(node['additionalProperties'])}"
    return str(node.get("type", "any"))


def http_api_markdown() -> str:
    """Every operation of the JSON API, grouped by path, then the schemas they use."""
    schema = openapi_schema()
    out = [
        f"The schema below is {_code(schema['info']['title'])} "
        f"{_code(schema['info']['version'])}, OpenAPI {schema['openapi']}.\n",
        "| method | path | what |",
        "|---|---|---|",
    ]
    operations: list[tuple[str, str, dict[str, Any]]] = []
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            operations.append((method.upper(), path, operation))
    for method, path, operation in operations:
        anchor = _operation_anchor(method, path)
        out.append(f"| {method} | [{_code(path)}](#{anchor}) | {_cell(operation.get('summary'))} |")
    out.append("")
    for method, path, operation in operations:
        out.append(f"### {method} {_code(path)} {{#{_operation_anchor(method, path)}}}\n")
        if operation.get("description"):
            out.append(_paragraphs(operation["description"]) + "\n")
        parameters = operation.get("parameters", [])
        if parameters:
            out.append("| parameter | in | type | required | what |\n|---|---|---|---|---|")
            for parameter in parameters:
                kind = _api_type(parameter.get("schema", {}))
                limits = _limits(parameter.get("schema", {}))
                if limits:
                    kind += f" ({limits})"
                out.append(
                    f"| {_code(parameter['name'])} | {parameter['in']} | {kind} | "
                    f"{'yes' if parameter.get('required') else 'no'} | "
                    f"{_cell(parameter.get('description'))} |"
                )
            out.append("")
        body = operation.get("requestBody", {}).get("content", {})
        for media, content in body.items():
            out.append(f"Request body ({_code(media)}): {_api_type(content.get('schema', {}))}\n")
        responses = operation.get("responses", {})
        if responses:
            out.append("| status | answer |\n|---|---|")
            for status, response in responses.items():
                answer = _cell(response.get("description"))
                for media, content in response.get("content", {}).items():
                    if content.get("schema"):
                        answer += f": {_api_type(content['schema'])} ({_code(media)})"
                out.append(f"| {status} | {answer} |")
            out.append("")
    out.append("## Schemas\n")
    for name, node in schema.get("components", {}).get("schemas", {}).items():
        out.append(f"### {name} {{#{_schema_anchor(name)}}}\n")
        if node.get("description"):
            out.append(_paragraphs(node["description"]) + "\n")
        properties = node.get("properties")
        if properties:
            required = set(node.get("required", ()))
            out.append("| field | type | required | what |\n|---|---|---|---|")
            for key, field in properties.items():
                out.append(
                    f"| {_code(key)} | {_api_type(field)} | "
                    f"{'yes' if key in required else 'no'} | {_cell(field.get('description'))} |"
                )
            out.append("")
        elif "enum" in node:
            out.append(f"One of {_api_type(node)}.\n")
    return "\n".join(out)


def _operation_anchor(method: str, path: str) -> str:
    return (method.lower() + re.sub(r"[^a-z0-9]+", "-", path.lower())).strip("-")


def _schema_anchor(name: str) -> str:
    """An explicit heading id for a schema (``attr_list``), so links never depend on slugs."""
    return "schema-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_markdown,
    "squad-yaml": squad_yaml_markdown,
    "settings": settings_markdown,
    "http-api": http_api_markdown,
}
