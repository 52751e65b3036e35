"""A strict JSON codec and a JSON Schema generator over attrs classes.

Both walk the same field specs, so a decoder accepts exactly what the generated schema
allows. The annotation vocabulary is deliberately small:

- ``str``, ``bool``, ``int``, ``float`` (``float`` also takes a JSON integer, kept as int;
  an ``int`` lies within I-JSON's ±(2**53 - 1));
- ``Literal["a", "b"]`` of strings;
- ``X | None`` on a field whose default is ``None``: optional on the wire, omitted when
  ``None``; ``null`` is not accepted, absence is the only way to say "none";
- ``tuple[X, ...]`` (an array) and ``tuple[X, X, X, X]`` (an array of exactly four);
- ``Mapping[str, str]``: the one open object, a string map;
- an attrs class: an object, ``additionalProperties: false``, fields without a default
  required, fields with one carrying ``default``;
- a union of tagged attrs classes: each class names its tag as a ``ClassVar`` called
  ``by`` or ``kind`` (``by: ClassVar[Literal["role"]] = "role"``), which leads its object.

Field constraints come from ``attrs.field(metadata=limits(minimum=0))``: ``minimum``,
``maximum``, ``minLength`` and ``uniqueItems``.
"""

from __future__ import annotations

import functools
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union, get_args, get_origin

import attrs

from ._errors import DataError

JSONValue = None | bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_META_KEY = "semledger.wire"
_TAG_KEYS = ("by", "kind")
_LIMIT_KEYS = frozenset({"minimum", "maximum", "minLength", "uniqueItems"})
SAFE_INTEGER = 2**53 - 1
"""I-JSON's (RFC 7493) bound: beyond it an integer is not the same number to every parser,
and as milliseconds or a coordinate it overflowed a float inside the adapter."""


def limits(**constraints: object) -> dict[str, object]:
    """Field metadata carrying JSON Schema constraints the codec also enforces."""
    unknown = set(constraints) - _LIMIT_KEYS
    if unknown:
        raise TypeError(f"unsupported wire constraints: {sorted(unknown)}")
    return {_META_KEY: constraints}


@attrs.frozen
class _Field:
    name: str
    tp: Any
    required: bool
    omit_none: bool
    default: Any
    limits: Mapping[str, object]


def tag_of(cls: type) -> tuple[str, str] | None:
    """The ``(key, value)`` tag a union member declares, or None."""
    for key in _TAG_KEYS:
        value = cls.__dict__.get(key)
        if isinstance(value, str):
            return key, value
    return None


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType)


def _members(tp: Any) -> tuple[Any, ...]:
    return tuple(arg for arg in get_args(tp) if arg is not type(None))


@functools.cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    out: list[_Field] = []
    for field in attrs.fields(cls):
        tp = hints[field.name]
        default: Any = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            default = default.factory()
        required = default is attrs.NOTHING
        omit_none = default is None
        if omit_none:
            if not (_is_union(tp) and type(None) in get_args(tp)):
                raise TypeError(f"{cls.__name__}.{field.name}: a None default needs X | None")
            members = _members(tp)
            tp = members[0] if len(members) == 1 else Union[members]  # noqa: UP007
        field_limits = field.metadata.get(_META_KEY, {})
        out.append(_Field(field.name, tp, required, omit_none, default, field_limits))
    return tuple(out)


def _union_tags(tp: Any) -> tuple[str, dict[str, type]]:
    members = _members(tp)
    by_tag: dict[str, type] = {}
    keys: set[str] = set()
    for member in members:
        tag = tag_of(member) if isinstance(member, type) and attrs.has(member) else None
        if tag is None:
            raise TypeError(f"union member {member!r} is not a tagged attrs class")
        keys.add(tag[0])
        by_tag[tag[1]] = member
    if len(keys) != 1:
        raise TypeError(f"union members disagree on their tag key: {sorted(keys)}")
    return keys.pop(), by_tag


# -- decoding ---------------------------------------------------------------------------


def _type_name(obj: object) -> str:
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "boolean"
    if isinstance(obj, int | float):
        return "number"
    if isinstance(obj, str):
        return "string"
    if isinstance(obj, list | tuple):
        return "array"
    if isinstance(obj, Mapping):
        return "object"
    return type(obj).__name__


def _expected(what: str, obj: object, path: str) -> DataError:
    return DataError(f"expected {what}, got {_type_name(obj)}", path=path)


def _check_limits(value: Any, field_limits: Mapping[str, object], path: str) -> None:
    minimum = field_limits.get("minimum")
    if isinstance(minimum, int | float) and value < minimum:
        raise DataError(f"must be at least {minimum}, got {value!r}", path=path)
    maximum = field_limits.get("maximum")
    if isinstance(maximum, int | float) and value > maximum:
        raise DataError(f"must be at most {maximum}, got {value!r}", path=path)
    min_length = field_limits.get("minLength")
    if isinstance(min_length, int) and len(value) < min_length:
        raise DataError(f"must have at least {min_length} character(s)", path=path)
    if field_limits.get("uniqueItems"):
        seen: list[Any] = []
        for index, item in enumerate(value):
            if item in seen:
                raise DataError(f"duplicate item {item!r}", path=f"{path}[{index}]")
            seen.append(item)


def decode_value(tp: Any, obj: object, path: str) -> Any:
    """Decode the JSON value ``obj`` as ``tp``, raising DataError naming ``path``."""
    if tp is str:
        if not isinstance(obj, str):
            raise _expected("string", obj, path)
        return obj
    if tp is bool:
        if not isinstance(obj, bool):
            raise _expected("boolean", obj, path)
        return obj
    if tp is int:
        if isinstance(obj, float) and math.isfinite(obj) and obj.is_integer():
            obj = int(obj)
        if isinstance(obj, bool) or not isinstance(obj, int):
            raise _expected("integer", obj, path)
        if abs(obj) > SAFE_INTEGER:
            raise DataError(
                f"expected an integer from {-SAFE_INTEGER} to {SAFE_INTEGER}, got one beyond",
                path=path,
            )
        return obj
    if tp is float:
        if isinstance(obj, bool) or not isinstance(obj, int | float):
            raise _expected("number", obj, path)
        if not math.isfinite(obj if isinstance(obj, float) else _as_float(obj)):
            raise DataError("expected a finite number", path=path)
        return obj
    origin = get_origin(tp)
    if origin is Literal:
        allowed = get_args(tp)
        if not isinstance(obj, str) or obj not in allowed:
            choices = ", ".join(repr(a) for a in allowed)
            raise DataError(f"expected one of {choices}, got {obj!r}", path=path)
        return obj
    if origin is tuple:
        if not isinstance(obj, list | tuple):
            raise _expected("array", obj, path)
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item_types: tuple[Any, ...] = (args[0],) * len(obj)
        else:
            if len(obj) != len(args):
                raise DataError(f"expected {len(args)} items, got {len(obj)}", path=path)
            item_types = args
        return tuple(
            decode_value(item_tp, item, f"{path}[{index}]")
            for index, (item_tp, item) in enumerate(zip(item_types, obj, strict=True))
        )
    if origin is Mapping or origin is dict:
        if not isinstance(obj, Mapping):
            raise _expected("object", obj, path)
        value_tp = get_args(tp)[1]
        out: dict[str, Any] = {}
        for key, item in obj.items():
            if not isinstance(key, str):
                raise DataError(f"keys must be strings, got {key!r}", path=path)
            out[key] = decode_value(value_tp, item, f"{path}[{key!r}]")
        return out
    if _is_union(tp):
        return _decode_union(tp, obj, path)
    if isinstance(tp, type) and attrs.has(tp):
        return decode_object(tp, obj, path)
    raise TypeError(f"unsupported wire type {tp!r}")


def _as_float(number: int) -> float:
    try:
        return float(number)
    except OverflowError:
        return math.inf


def _json_form(instance: object, path: str) -> JSONValue:
    try:
        return encode_value(instance)
    except TypeError as exc:  # a field holding what the wire has no form for
        raise DataError(str(exc), path=path) from None


def _decode_union(tp: Any, obj: object, path: str) -> Any:
    members = _members(tp)
    if isinstance(obj, members):
        obj = _json_form(obj, path)
    if not isinstance(obj, Mapping):
        raise _expected("object", obj, path)
    key, by_tag = _union_tags(tp)
    if key not in obj:
        raise DataError("required field missing", path=f"{path}.{key}")
    tag = obj[key]
    if not isinstance(tag, str) or tag not in by_tag:
        choices = ", ".join(sorted(by_tag))
        raise DataError(f"unknown {key} {tag!r}; expected one of {choices}", path=f"{path}.{key}")
    return decode_object(by_tag[tag], obj, path)


def decode_object(cls: type, obj: object, path: str) -> Any:
    """Decode a JSON object as the attrs class ``cls``. An instance is decoded from its
    JSON form: attrs checks no types or limits, and one given by a caller in Python reached
    the adapter with a negative wait or a string for a number."""
    if isinstance(obj, cls):
        obj = _json_form(obj, path)
    if not isinstance(obj, Mapping):
        raise _expected("object", obj, path)
    specs = _fields(cls)
    names = {spec.name for spec in specs}
    tag = tag_of(cls)
    for key in obj:
        if not isinstance(key, str):
            raise DataError(f"field names must be strings, got {key!r}", path=path)
        if key not in names and (tag is None or key != tag[0]):
            raise DataError("unknown field", path=f"{path}.{key}")
    if tag is not None:
        if tag[0] not in obj:
            raise DataError("required field missing", path=f"{path}.{tag[0]}")
        if obj[tag[0]] != tag[1]:
            raise DataError(f"expected {tag[1]!r}, got {obj[tag[0]]!r}", path=f"{path}.{tag[0]}")
    kwargs: dict[str, Any] = {}
    for spec in specs:
        field_path = f"{path}.{spec.name}"
        if spec.name not in obj:
            if spec.required:
                raise DataError("required field missing", path=field_path)
            continue
        raw = obj[spec.name]
        if raw is None and spec.omit_none:
            raise DataError("expected a value, got null (omit the field instead)", path=field_path)
        value = decode_value(spec.tp, raw, field_path)
        _check_limits(value, spec.limits, field_path)
        kwargs[spec.name] = value
    return cls(**kwargs)


# -- encoding ---------------------------------------------------------------------------


def encode_value(value: object) -> JSONValue:
    """The JSON form of a wire value: objects lead with their tag, ``None`` optionals are
    omitted, tuples become arrays."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, tuple | list):
        return [encode_value(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): encode_value(item) for key, item in value.items()}
    cls = type(value)
    if attrs.has(cls):
        out: dict[str, JSONValue] = {}
        tag = tag_of(cls)
        if tag is not None:
            out[tag[0]] = tag[1]
        for spec in _fields(cls):
            item = getattr(value, spec.name)
            if item is None and spec.omit_none:
                continue
            out[spec.name] = encode_value(item)
        return out
    raise TypeError(f"cannot encode {type(value).__name__} on the wire")


# -- schema -----------------------------------------------------------------------------


def _describe(cls: type) -> str | None:
    doc = cls.__doc__
    if not doc or doc.startswith(f"{cls.__name__}("):
        return None
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(first.split()).replace("``", "`")


class _SchemaBuilder:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}

    def ref(self, cls: type) -> dict[str, Any]:
        name = cls.__name__
        if name not in self.defs:
            self.defs[name] = {}
            self.defs[name] = self.object_schema(cls)
        return {"$ref": f"#/$defs/{name}"}

    def object_schema(self, cls: type) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object"}
        description = _describe(cls)
        if description:
            schema["description"] = description
        properties: dict[str, Any] = {}
        required: list[str] = []
        tag = tag_of(cls)
        if tag is not None:
            properties[tag[0]] = {"const": tag[1]}
            required.append(tag[0])
        for spec in _fields(cls):
            field_schema = dict(self.type_schema(spec.tp))
            field_schema.update(spec.limits)
            if spec.required:
                required.append(spec.name)
            elif not spec.omit_none:
                field_schema["default"] = encode_value(spec.default)
            properties[spec.name] = field_schema
        schema["properties"] = properties
        schema["required"] = required
        schema["additionalProperties"] = False
        return schema

    def type_schema(self, tp: Any) -> dict[str, Any]:
        if tp is str:
            return {"type": "string"}
        if tp is bool:
            return {"type": "boolean"}
        if tp is int:
            return {"type": "integer", "minimum": -SAFE_INTEGER, "maximum": SAFE_INTEGER}
        if tp is float:
            return {"type": "number"}
        origin = get_origin(tp)
        if origin is Literal:
            values = list(get_args(tp))
            if len(values) == 1:
                return {"type": "string", "const": values[0]}
            return {"type": "string", "enum": values}
        if origin is tuple:
            args = get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.type_schema(args[0])}
            if len(set(args)) != 1:
                raise TypeError(f"only homogeneous fixed tuples are supported, not {tp!r}")
            return {
                "type": "array",
                "items": self.type_schema(args[0]),
                "minItems": len(args),
                "maxItems": len(args),
            }
        if origin is Mapping or origin is dict:
            key_tp, value_tp = get_args(tp)
            if key_tp is not str:
                raise TypeError(f"map keys must be str, not {key_tp!r}")
            return {"type": "object", "additionalProperties": self.type_schema(value_tp)}
        if _is_union(tp):
            _union_tags(tp)
            return {"oneOf": [self.ref(member) for member in _members(tp)]}
        if isinstance(tp, type) and attrs.has(tp):
            return self.ref(tp)
        raise TypeError(f"unsupported wire type {tp!r}")


def schema_document(tp: Any, *, title: str) -> dict[str, Any]:
    """A standalone draft 2020-12 schema for ``tp`` (an attrs class or a tagged union),
    nested classes under ``$defs``."""
    builder = _SchemaBuilder()
    document: dict[str, Any] = {"$schema": SCHEMA_DIALECT, "title": title}
    if isinstance(tp, type) and attrs.has(tp):
        document.update(builder.object_schema(tp))
    else:
        document.update(builder.type_schema(tp))
    if builder.defs:
        document["$defs"] = dict(sorted(builder.defs.items()))
    return document
