"""Transforms: JSON-shaped templates that reshape a region's parsed value (SPEC §1.4).

A transform is any JSON value. A string that is exactly ``"{name}"`` or ``"{name.key.key}"`` is
replaced by the value it names, keeping its type; every other string, number, bool or null is a
literal; dicts and lists are walked. Variables are ``content`` (the parsed body), the named groups
of the field's open/close patterns and, with ``transform_each``, the keys of the current element.

Rules kept here: a string that mixes a placeholder with literal text is rejected when the template
loads (these are not f-strings), and so is a near-placeholder (``"{content"``, ``"content}"``,
``"{ name }"``, ``"{content.a?.b}"``, ``"{content[0]}"``: braces around names, dots, ``?``,
``[``/``]`` and spaces that make no whole placeholder), which would otherwise be
kept as a literal while the value it meant is lost; an unknown variable raises ``KeyError`` and a missing key
``ValueError`` when the region closes, never a silently malformed tool call.

An *optional* placeholder, ``"{name?}"`` or ``"{name.key?}"``, is the one opt-in exception: as the
value of an object key it leaves that key out when the variable is undefined or the last key is
missing (a tool call's ``id`` that the model may or may not write). Anywhere else (a list element,
the whole transform) it is a load error, since there is no key to leave out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

__all__ = [
    "PLACEHOLDER",
    "Build",
    "apply_transform",
    "apply_transform_each",
    "compile_transform",
    "validate_transform",
]

#: A whole-string placeholder: ``{name}`` or ``{name.key.key}`` (``\w`` is Unicode-aware); group 2 is the
#: ``?`` of an optional placeholder (``{name?}``).
PLACEHOLDER = regex.compile(r"\{(\w+(?:\.\w+)*)(\?)?\}")
#: A string that is a name with a brace or spaces too many or too few: almost a placeholder.
_NEAR_PLACEHOLDER = r"\s*(?=[{\w])\{?\s*\w+(?:\.\w+)*\s*\??\s*\}?\s*"
#: Braces around only names, dots, ``?``, ``[``/``]`` and spaces: a placeholder with a bad path
#: (``{a?.b}``, ``{content.}``, ``{content[0]}``) when it also holds a word character.
_NEAR_BRACED = r"\s*\{[\w.?\[\]\s]*\}\s*"
_ABSENT = object()  # what an optional placeholder names when the value is not there


def validate_transform(transform: Any, where: str, *, in_object: bool = False) -> None:
    """Reject strings that mix a ``{placeholder}`` with literal text, or that are near-placeholders.

    Args:
        transform: the field's ``transform`` value.
        where: the JSON path of ``transform`` in the template, for the message.
        in_object: ``transform`` is the value of an object key (where ``{name?}`` may stand).

    Raises:
        ValueError: the first mixed string, near-placeholder or misplaced optional placeholder
            found; the message names its path.
    """
    if isinstance(transform, dict):
        for key, value in transform.items():
            validate_transform(value, f"{where}.{key}", in_object=True)
    elif isinstance(transform, list):
        for index, value in enumerate(transform):
            validate_transform(value, f"{where}[{index}]")
    elif isinstance(transform, str) and _is_optional(transform) and not in_object:
        raise ValueError(
            f"{where}: {transform!r}: an optional placeholder ('{{id?}}') is only allowed as the value of an "
            "object key (the key is left out when the value is absent). Use a plain placeholder here"
        )
    elif (
        isinstance(transform, str)
        and PLACEHOLDER.search(transform) is not None
        and PLACEHOLDER.fullmatch(transform) is None
    ):
        raise ValueError(
            f"{where}: transform string {transform!r} mixes a {{placeholder}} with literal text; "
            'string interpolation is not supported. Use a whole-string placeholder such as "{content}" '
            "or a plain literal."
        )
    elif isinstance(transform, str) and _is_near_placeholder(transform):
        raise ValueError(
            f"{where}: transform string {transform!r} looks like a placeholder but is not one (a "
            'placeholder is exactly "{name}", "{name.key}" or, as an object value, "{name?}": no spaces, '
            "no [index], one ? at the end); as written it would be kept as literal text"
        )


def _is_near_placeholder(text: str) -> bool:
    if ("{" not in text and "}" not in text) or PLACEHOLDER.fullmatch(text) is not None:
        return False
    # compiled here (through regex's own cache), not at import: only a transform string with a
    # brace that is not a placeholder gets this far
    if regex.fullmatch(_NEAR_PLACEHOLDER, text) is not None:
        return True
    return regex.fullmatch(_NEAR_BRACED, text) is not None and regex.search(r"\w", text) is not None


def _is_optional(text: str) -> bool:
    whole = PLACEHOLDER.fullmatch(text)
    return whole is not None and whole.group(2) is not None


def _lookup(path: str, scope: Mapping[str, Any], optional: bool = False) -> Any:
    """The value ``path`` names; with ``optional``, ``_ABSENT`` for an undefined root or last key."""
    shown = f"{path}?" if optional else path
    root, *keys = path.split(".")
    if optional and root not in scope:
        return _ABSENT
    if root not in scope:
        raise KeyError(
            f"transform placeholder '{{{path}}}' is not defined. Available: {sorted(scope)}"
        )
    value = scope[root]
    for index, key in enumerate(keys):
        if not isinstance(value, dict):
            raise ValueError(
                f"transform placeholder '{{{shown}}}' cannot index into {type(value).__name__} at '{key}'"
            )
        if optional and key not in value and index == len(keys) - 1:
            return _ABSENT
        if key not in value:
            raise ValueError(
                f"transform placeholder '{{{shown}}}' is missing key '{key}'. Available: {sorted(value)}"
            )
        value = value[key]
    return value


def apply_transform(transform: Any, scope: Mapping[str, Any]) -> Any:
    """Build the output value from ``transform`` with the variables in ``scope``.

    Args:
        transform: the field's ``transform`` (validated at load).
        scope: the variables: ``content``, the pattern captures, element keys.

    Returns:
        A new structure; placeholder values are inserted as they are (not copied); the key of an
        optional placeholder (``{name?}``) whose value is absent is left out.

    Raises:
        KeyError: a placeholder's root variable is not in ``scope``.
        ValueError: a dotted path indexes into a non-object or names a missing key.
    """
    if isinstance(transform, dict):
        built = {key: apply_transform(value, scope) for key, value in transform.items()}
        return {key: value for key, value in built.items() if value is not _ABSENT}
    if isinstance(transform, list):
        return [apply_transform(value, scope) for value in transform]
    if isinstance(transform, str):
        whole = PLACEHOLDER.fullmatch(transform)
        if whole is not None:
            return _lookup(whole.group(1), scope, optional=whole.group(2) is not None)
    return transform


#: A compiled transform: the variables in, the built value out (:func:`compile_transform`).
Build: TypeAlias = "Callable[[Mapping[str, Any]], Any]"


def compile_transform(transform: Any) -> Build:
    """Compile ``transform`` once, at template load, into a function that builds its value.

    ``compile_transform(t)(scope)`` returns what :func:`apply_transform` ``(t, scope)`` returns and
    raises what it raises, but the placeholders are recognised once, not at every region close
    (a region close is the hot path of whole-text parsing).

    Args:
        transform: the field's ``transform`` (validated at load).

    Returns:
        ``build(scope) -> value``: a new structure on every call; placeholder values are inserted as
        they are, and the key of an absent optional placeholder is left out.
    """
    if isinstance(transform, dict):
        # the keys in order, each constant value already in place (a copy of this dict starts each
        # value, in C); only the others are built per call (``{"type": "function", "function":
        # "{content}"}``: one call per tool call, not two)
        skeleton = {key: value if _constant(value) else None for key, value in transform.items()}
        items = tuple((key, compile_transform(value)) for key, value in transform.items()
                      if not _constant(value))

        def build_object(scope: Mapping[str, Any]) -> dict[str, Any]:
            built = skeleton.copy()
            for key, part in items:
                value = part(scope)
                if value is _ABSENT:
                    del built[key]
                else:
                    built[key] = value
            return built

        return build_object
    if isinstance(transform, list):
        parts = tuple(compile_transform(value) for value in transform)
        return lambda scope: [part(scope) for part in parts]
    if isinstance(transform, str):
        whole = PLACEHOLDER.fullmatch(transform)
        if whole is not None:
            path, optional = whole.group(1), whole.group(2) is not None
            if "." not in path and not optional:
                def variable(scope: Mapping[str, Any]) -> Any:
                    return scope[path] if path in scope else _lookup(path, scope)

                return variable
            return lambda scope: _lookup(path, scope, optional=optional)
    return lambda scope: transform


def _constant(value: Any) -> bool:
    """Whether ``value`` of a transform builds itself: text that is not a placeholder, a number, a
    boolean or ``null`` (immutable, so one object serves every call); not a list or an object."""
    if isinstance(value, str):
        return PLACEHOLDER.fullmatch(value) is None
    return not isinstance(value, (dict, list))


def apply_transform_each(transform: Any, content: Any, captures: Mapping[str, str], *,
                         build: Build | None = None) -> list[Any]:
    """Apply ``transform`` to every element of the list ``content`` (``transform_each``).

    Each element's keys are the variables, over the pattern captures (element keys win).

    Args:
        transform: the field's ``transform``.
        content: the parsed body, a list of objects.
        captures: the named groups of the field's open/close patterns.
        build: ``transform`` compiled (:func:`compile_transform`), when the caller has it.

    Returns:
        One transformed value per element.

    Raises:
        ValueError: ``content`` is not a list of objects.
        KeyError: as :func:`apply_transform`.
    """
    if not isinstance(content, list):
        raise ValueError(
            f"transform_each requires the parsed content to be a list, got {type(content).__name__}"
        )
    out = []
    for item in content:
        if not isinstance(item, dict):
            raise ValueError(
                f"transform_each requires each list element to be an object, got {type(item).__name__}"
            )
        scope = {**captures, **item}
        out.append(apply_transform(transform, scope) if build is None else build(scope))
    return out
