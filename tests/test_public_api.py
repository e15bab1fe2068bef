"""The public surface of ``chatcodec``: exactly these names, each importable, declared consistently.

``chatcodec/__init__.py`` names every public object three times on purpose: in ``_LAZY`` (what
``__getattr__`` imports at run time), in ``__all__`` (derived from ``_LAZY``) and in the
``TYPE_CHECKING`` block (what type checkers and IDEs see). These tests keep the three in step and
pin the list, so adding or removing a public name is a deliberate change to this file.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys

import pytest

import chatcodec

PUBLIC = [
    "ChatCodec",
    "ChatCodecError",
    "ChatTemplateError",
    "ChatTemplateLimitError",
    "ChatTemplateNotFoundError",
    "ControlTokenError",
    "ConversationError",
    "DocstringParsingException",
    "HubError",
    "MissingFieldError",
    "ModelStorageError",
    "ParserStateError",
    "RenderedChat",
    "ResponseParseError",
    "ResponseParser",
    "ResponseTemplate",
    "ResponseTemplateError",
    "ResponseTemplateNotFoundError",
    "TokenizerUnavailableError",
    "TypeHintParsingException",
    "UnknownPlaceholderError",
    "UnknownProfileError",
    "__version__",
    "get_json_schema",
    "load_chat_templates",
    "load_response_template",
    "parse_response",
    "parse_response_batch",
    "render_chat_request",
    "render_chat_template",
    "render_chat_template_with_spans",
    "save_chat_templates",
    "select_chat_template",
]


def _type_checking_imports() -> dict[str, str]:
    """``{public name: module}`` from the ``if TYPE_CHECKING:`` block of ``chatcodec/__init__.py``."""
    tree = ast.parse(inspect.getsource(chatcodec))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    found: dict[str, str] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom) and statement.module is not None
        for alias in statement.names:
            assert alias.asname == alias.name, f"{alias.name}: re-export it as 'import X as X'"
            found[alias.name] = statement.module
    return found


def test_all_is_exactly_the_public_names() -> None:
    assert chatcodec.__all__ == PUBLIC


def test_dir_lists_the_public_names() -> None:
    assert dir(chatcodec) == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_imports(name: str) -> None:
    value = getattr(chatcodec, name)
    assert value is not None
    if name != "__version__":
        assert getattr(importlib.import_module(chatcodec._LAZY[name]), name) is value


def test_lazy_table_and_type_checking_imports_agree() -> None:
    assert _type_checking_imports() == chatcodec._LAZY
    assert sorted([*chatcodec._LAZY, "__version__"]) == PUBLIC


def test_from_import_star_gives_the_public_names() -> None:
    probe = "ns = {}; exec('from chatcodec import *', ns); print(sorted(set(ns) - {'__builtins__'}))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == repr(PUBLIC)


def test_errors_a_caller_catches_are_public_and_keep_their_builtin_bases() -> None:
    assert issubclass(chatcodec.UnknownProfileError, (ValueError, LookupError, chatcodec.ChatCodecError))
    assert issubclass(chatcodec.UnknownPlaceholderError, chatcodec.ResponseParseError)
    assert issubclass(chatcodec.UnknownPlaceholderError, KeyError)
    assert issubclass(chatcodec.ConversationError, ValueError)
    assert issubclass(chatcodec.ConversationError, TypeError)
    assert issubclass(chatcodec.ChatTemplateLimitError, chatcodec.ChatTemplateError)


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'chatcodec' has no attribute 'nope'"):
        chatcodec.nope  # noqa: B018
