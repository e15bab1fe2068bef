"""chatcodec: chat templates in, assistant messages out.

* **Encoding** (:mod:`chatcodec.chat_templates`): a Jinja chat template turns messages, tools and
  documents into the exact prompt a model was trained on.
* **Decoding** (:mod:`chatcodec.response_templates`): a declarative response template turns the
  text a model generates back into ``{"role": "assistant", "reasoning_content", "content",
  "tool_calls"}``, whole or as a stream of events.
* **Models** (:mod:`chatcodec.model`): :class:`ChatCodec` joins both halves for a model directory
  or a bundled profile (:mod:`chatcodec.profiles`).

Every public name is imported lazily on first access (PEP 562), so ``import chatcodec`` costs
almost nothing and the decoding path never imports jinja2, rich or tokenizers.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: Public name -> module that defines it. Every name here is in ``__all__``.
_LAZY: dict[str, str] = {
    # decoding
    "ResponseParser": "chatcodec.response_templates.engine",
    "ResponseTemplate": "chatcodec.response_templates.template",
    "load_response_template": "chatcodec.response_templates.template",
    "parse_response": "chatcodec.response_templates.api",
    "parse_response_batch": "chatcodec.response_templates.api",
    # encoding
    "render_chat_request": "chatcodec.chat_templates.requests",
    "render_chat_template": "chatcodec.chat_templates.render",
    "render_chat_template_with_spans": "chatcodec.chat_templates.render",
    "RenderedChat": "chatcodec.chat_templates.render",
    "select_chat_template": "chatcodec.chat_templates.selection",
    "get_json_schema": "chatcodec.tool_schemas",
    # model directories
    "ChatCodec": "chatcodec.model.codec",
    "load_chat_templates": "chatcodec.model.storage",
    "save_chat_templates": "chatcodec.model.storage",
    # errors
    "ChatCodecError": "chatcodec.errors",
    "ChatTemplateNotFoundError": "chatcodec.errors",
    "ControlTokenError": "chatcodec.errors",
    "DocstringParsingException": "chatcodec.errors",
    "HubError": "chatcodec.errors",
    "MissingFieldError": "chatcodec.errors",
    "ModelStorageError": "chatcodec.errors",
    "ParserStateError": "chatcodec.errors",
    "ResponseParseError": "chatcodec.errors",
    "ResponseTemplateError": "chatcodec.errors",
    "ResponseTemplateNotFoundError": "chatcodec.errors",
    "TokenizerUnavailableError": "chatcodec.errors",
    "TypeHintParsingException": "chatcodec.errors",
    "UnknownPlaceholderError": "chatcodec.errors",
    "UnknownProfileError": "chatcodec.errors",
    "ChatTemplateError": "chatcodec.chat_templates.errors",
    "ChatTemplateLimitError": "chatcodec.chat_templates.errors",
    "ConversationError": "chatcodec.chat_templates.inputs",
}

__all__ = sorted([*_LAZY, "__version__"])

TYPE_CHECKING = False
if TYPE_CHECKING:  # the names mypy and IDEs see; at run time __getattr__ imports them on first use
    from chatcodec.chat_templates.errors import ChatTemplateError as ChatTemplateError
    from chatcodec.chat_templates.errors import ChatTemplateLimitError as ChatTemplateLimitError
    from chatcodec.chat_templates.inputs import ConversationError as ConversationError
    from chatcodec.chat_templates.render import RenderedChat as RenderedChat
    from chatcodec.chat_templates.render import render_chat_template as render_chat_template
    from chatcodec.chat_templates.render import (
        render_chat_template_with_spans as render_chat_template_with_spans,
    )
    from chatcodec.chat_templates.requests import render_chat_request as render_chat_request
    from chatcodec.chat_templates.selection import select_chat_template as select_chat_template
    from chatcodec.errors import ChatCodecError as ChatCodecError
    from chatcodec.errors import ChatTemplateNotFoundError as ChatTemplateNotFoundError
    from chatcodec.errors import ControlTokenError as ControlTokenError
    from chatcodec.errors import DocstringParsingException as DocstringParsingException
    from chatcodec.errors import HubError as HubError
    from chatcodec.errors import MissingFieldError as MissingFieldError
    from chatcodec.errors import ModelStorageError as ModelStorageError
    from chatcodec.errors import ParserStateError as ParserStateError
    from chatcodec.errors import ResponseParseError as ResponseParseError
    from chatcodec.errors import ResponseTemplateError as ResponseTemplateError
    from chatcodec.errors import ResponseTemplateNotFoundError as ResponseTemplateNotFoundError
    from chatcodec.errors import TokenizerUnavailableError as TokenizerUnavailableError
    from chatcodec.errors import TypeHintParsingException as TypeHintParsingException
    from chatcodec.errors import UnknownPlaceholderError as UnknownPlaceholderError
    from chatcodec.errors import UnknownProfileError as UnknownProfileError
    from chatcodec.model.codec import ChatCodec as ChatCodec
    from chatcodec.model.storage import load_chat_templates as load_chat_templates
    from chatcodec.model.storage import save_chat_templates as save_chat_templates
    from chatcodec.response_templates.api import parse_response as parse_response
    from chatcodec.response_templates.api import parse_response_batch as parse_response_batch
    from chatcodec.response_templates.engine import ResponseParser as ResponseParser
    from chatcodec.response_templates.template import ResponseTemplate as ResponseTemplate
    from chatcodec.response_templates.template import load_response_template as load_response_template
    from chatcodec.tool_schemas import get_json_schema as get_json_schema


#: Subpackages reachable as attributes without an explicit import (``chatcodec.profiles.names()``).
_SUBMODULES = frozenset({"profiles"})


if TYPE_CHECKING:  # not at run time: importing `typing` costs a third of a bare interpreter's start
    from typing import Any


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"chatcodec.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'chatcodec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
