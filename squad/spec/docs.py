"""The docstring under each field of squad's YAML models, read when a description is wanted.

The settings and squad models document each field with a string under it. pydantic's
``use_attribute_docstrings`` would read those as each class is made: on Python before 3.13
it finds a class's source by walking the import's frames and tokenizing, some 5 ms a class,
paid by every command that reads settings. Here a module's source is parsed once, when a
description is first asked for: by the JSON Schemas (``squad schema``, the reference pages)
and by the hint of a missing key. The rule is pydantic's: a string statement right after an
annotated assignment documents it; an explicit ``Field(description=...)`` wins.
"""

from __future__ import annotations

import ast
import inspect
import sys
from functools import cache
from itertools import pairwise
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

__all__ = ["Documented", "field_doc", "json_schema"]


@cache
def _module_docs(module: str) -> dict[str, dict[str, str]]:
    """``{class qualname: {field: docstring}}`` for every class of ``module``."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module]))
    except (KeyError, OSError, TypeError, SyntaxError):
        return {}
    found: dict[str, dict[str, str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                found[name] = _class_docs(node.body)
                visit(node.body, name + ".")

    visit(tree.body, "")
    return found


def _class_docs(body: list[ast.stmt]) -> dict[str, str]:
    docs: dict[str, str] = {}
    for before, node in pairwise(body):
        if (
            isinstance(before, ast.AnnAssign)
            and isinstance(before.target, ast.Name)
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            docs[before.target.id] = inspect.cleandoc(node.value.value)
    return docs


def field_doc(model: type[BaseModel], name: str) -> str | None:
    """The description of ``model``'s field ``name``: its ``Field(description=...)``, else
    the docstring under it (in the class that declares it), else None."""
    field = model.model_fields.get(name)
    if field is None:
        return None
    if field.description is not None:
        return field.description
    for klass in model.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            return _module_docs(klass.__module__).get(klass.__qualname__, {}).get(name)
    return None


class Documented(GenerateJsonSchema):
    """pydantic's JSON Schema, each property described by its field's docstring."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json = super().model_schema(schema)
        model = schema["cls"]
        properties = json.get("properties") if isinstance(json, dict) else None
        if isinstance(properties, dict) and issubclass(model, BaseModel):
            for name, node in properties.items():
                doc = field_doc(model, name)
                if doc is not None and isinstance(node, dict) and "description" not in node:
                    node["description"] = doc
        return json


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema (validation), its fields described (:class:`Documented`)."""
    return model.model_json_schema(schema_generator=Documented)
