"""Option values converted without pydantic where the conversion is plain (start-up memory and time).

Typer 0.29 converts every option value with a pydantic ``TypeAdapter`` built
for the option: a command that takes a string or a path imports pydantic and
builds its schemas, about 8 MB of memory and 50 ms before the command starts
(``bench/README.md``: ``parse``'s peak against the plain loop's). The options of
this command line are strings, whole numbers (some with a least or greatest
value), numbers, flags, paths, choices and lists of strings or paths. For a
value of the plain form each of these takes (a string; a whole number written
as digits within its bounds; a decimal number; a non-empty path, as a string
or a ``Path`` such as the default ``Path(".")``, not standing for standard
input; one of the choices) :class:`PlainParam` gives what the adapter gives,
with the same checks of a path. Anything else (a value out of range, not a
number, not a choice, an option of another kind) goes to Typer's own adapter,
so the error and its wording are Typer's and pydantic is imported only then.
``tests/cli/test_coerce.py`` checks every option of every command against the
adapter on plain and unusual values, and that no option (nor its default) is
of a kind left to the adapter.

This leans on Typer's internals: its coercion classes here (``typer._coercion``,
``typer._param_types``) and, in :mod:`replicate.cli.help`, the private
``typer.core._TyperParameter`` (imported unguarded) and a parameter's
``_runtime_param`` and ``type_descriptor``. The pin ``typer>=0.29,<0.30`` in
pyproject is what keeps them there. Under another Typer, this module alone
would fall back to Typer's adapter for every value (:data:`RuntimeParam` is
None), but importing :mod:`replicate.cli.help` would fail (an ``ImportError``
if ``_TyperParameter`` is gone), and with it the whole command line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePath
from typing import Any, cast, get_args, get_origin

try:  # Typer 0.29's internals (pinned; without them no value is converted here, and replicate.cli.help fails)
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer._param_types import coerce_cli_choice, coerce_cli_path
except ImportError:  # pragma: no cover - another Typer
    RuntimeParam = None  # type: ignore[assignment,misc]

#: Whole numbers and decimal numbers in their plain written forms (anything else goes to Typer).
_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,18}(\.[0-9]{1,18})?([eE]-?[0-9]{1,3})?")


class _Declined(Exception):
    """The value is not of the plain form: Typer's adapter converts it (or says what is wrong)."""


def _leaf(annotation: Any, descriptor: Any) -> Any:
    """The converter of one value of ``annotation`` (raises :class:`_Declined`), or None when the
    annotation is not one of the plain kinds."""
    info = descriptor.parameter_info
    if info.parser is not None or getattr(info, "click_type", None) is not None:
        return None
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        choices, case_sensitive = tuple(annotation), info.case_sensitive

        def choice(value: Any, param: Any, ctx: Any) -> Any:
            try:
                return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
            except ValueError:
                raise _Declined from None

        return choice
    if annotation is str:
        return _str
    if annotation is bool:
        return _bool
    if annotation is int:
        low, high = info.min, info.max
        if getattr(info, "clamp", False):
            return None

        def whole(value: Any, param: Any, ctx: Any) -> int:
            if type(value) is int:
                got = value
            elif type(value) is str and _INT.fullmatch(value):
                got = int(value)
            else:
                raise _Declined
            if (low is not None and got < low) or (high is not None and got > high):
                raise _Declined
            return got

        return whole
    if annotation is float:
        if info.min is not None or info.max is not None:
            return None
        return _float
    if annotation is Path and info.path_type is None and not info.allow_dash and not info.resolve_path:

        def path(value: Any, param: Any, ctx: Any) -> Path:
            if isinstance(value, PurePath):  # a default such as Path(".")
                value = os.fspath(value)
            if type(value) is not str or not value or "\x00" in value:
                raise _Declined
            # the value stays a string through Typer's checks of a path (as the adapter's string is), then Path
            return Path(cast(str, coerce_cli_path(value, info, path_type=None, param=param, ctx=ctx)))

        return path
    return None


def _str(value: Any, param: Any, ctx: Any) -> str:
    if type(value) is not str:
        raise _Declined
    return value


def _bool(value: Any, param: Any, ctx: Any) -> bool:
    if type(value) is not bool:
        raise _Declined
    return value


def _float(value: Any, param: Any, ctx: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is int or (type(value) is str and _FLOAT.fullmatch(value)):
        return float(value)
    raise _Declined


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class PlainParam(RuntimeParam):
        """A parameter's values converted by ``convert`` when they are plain, by Typer's own adapter otherwise."""

        convert: Any
        many: bool
        descriptor: TypeDescriptor

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                if not self.many:
                    return self.convert(value, param, ctx)
                items = value if isinstance(value, (list, tuple)) else [value]
                return [self.convert(v, param, ctx) for v in items]
            except _Declined:
                return _typer_param(self.descriptor, param)._coerce_value(value, param=param, ctx=ctx)


def _typer_param(descriptor: Any, param: Any) -> Any:
    """Typer's own converter of ``param`` (built once: it imports pydantic)."""
    built = getattr(param, "_typer_runtime_param", None)
    if built is None:
        built = build_runtime_param(descriptor)
        param._typer_runtime_param = built
    return built


def plain_param(descriptor: Any) -> Any:
    """A :class:`PlainParam` for an option of a plain kind (see the module's docstring), else None."""
    if RuntimeParam is None or descriptor.file_annotation is not None:
        return None
    annotation, many = descriptor.annotation, False
    if get_origin(annotation) is list:
        args = get_args(annotation)
        if len(args) != 1:
            return None
        annotation, many = args[0], True
    elif get_origin(annotation) is not None:
        return None
    convert = _leaf(annotation, descriptor)
    if convert is None:
        return None
    return PlainParam(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation, convert=convert,
                      many=many, descriptor=descriptor)
