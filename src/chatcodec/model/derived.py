"""A response template derived from a model's chat template, when the model has no other.

What lives here: deriving one for a model directory that has neither a ``response_template`` nor
a chat template a bundled profile matches (:func:`derive_for_model`, called by
:mod:`chatcodec.model.loading`), and the warning a parse gives when its message uses a capability
the derivation did not verify (:func:`warn_unverified`, once per capability and model). It never
imports the codec: the codec hands it plain values (its name, the labels, the capabilities already
warned about).

Rules kept: a derived template is attached only when its ``content`` round trip was verified
(otherwise the model has no response template, and the error that says so names the reason);
``codec.response_template_source`` is ``"derived"`` and ``codec.response_template_capabilities``
holds the labels of :mod:`chatcodec.analysis.derive`; a parse never fails because a capability is
unverified, it warns (:class:`UnverifiedCapabilityWarning`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatcodec.model.responses import ModelResponseParser

__all__ = ["DERIVED_SOURCE", "MAX_DERIVE_SECONDS", "MAX_DERIVE_TOKEN_CHARS", "Derivation",
           "UnverifiedCapabilityWarning", "derive_for_model", "long_token_problem", "warn_unverified",
           "watch_parser"]


#: ``codec.response_template_source`` of a derived response template.
DERIVED_SOURCE = "derived"

#: Most seconds the renders of one derivation may take together while a model loads. Deriving
#: renders over a hundred conversations, each allowed ``MAX_RENDER_SECONDS``: a chat template that
#: worked 1.6 s on every render and then raised kept ``from_pretrained`` busy for 190 s (one that
#: worked 59 s would have for nearly two hours). Real templates derive in a few seconds. Read at
#: each call.
MAX_DERIVE_SECONDS = 60.0

#: Longest special token a response template is derived with, in characters. The derivation
#: compiles patterns around each token it finds, and its time grows faster than the token: a
#: 10,000-character ``eos_token`` took 4 s in ``from_pretrained``, a 100,000-character one over 100 s.
#: Real special tokens are a few dozen characters. Read at each call.
MAX_DERIVE_TOKEN_CHARS = 1_000


class UnverifiedCapabilityWarning(UserWarning):
    """A message was parsed with a derived response template whose capability it used is not verified."""


@dataclass(frozen=True)
class Derivation:
    """The outcome of deriving for a model.

    Attributes:
        template: the derived response template, or ``None`` when its content was not verified.
        capabilities: capability name -> ``{"status", "reason", "applicable"}``.
        reason: why no template was attached (empty when one was).
    """

    template: dict[str, Any] | None
    capabilities: dict[str, dict[str, Any]]
    reason: str


def long_token_problem(variables: Mapping[str, Any]) -> str | None:
    """Why a response template cannot be derived with these template variables: one of them (a
    special token) is a string longer than :data:`MAX_DERIVE_TOKEN_CHARS`; ``None`` when none is.

    Args:
        variables: the special tokens (and any other template variables) the derivation renders with.

    Returns:
        ``"its special token eos_token is 100,000 characters long, more than ..."``, or ``None``.
    """
    for name, token in variables.items():
        if isinstance(token, str) and len(token) > MAX_DERIVE_TOKEN_CHARS:
            return (f"its special token {name} is {len(token):,} characters long, more than "
                    f"MAX_DERIVE_TOKEN_CHARS ({MAX_DERIVE_TOKEN_CHARS:,}) allows deriving with (real special "
                    "tokens are a few dozen characters)")
    return None


def derive_for_model(templates: str | Mapping[str, str], special_tokens: Mapping[str, Any],
                     where: str) -> Derivation:
    """Derive a response template from a model's chat template (``tool_use`` when it has one).

    Args:
        templates: the model's chat template, or its named templates.
        special_tokens: the model's special tokens (``eos_token`` ends each output).
        where: the model's path, for the log.

    Returns:
        The :class:`Derivation`; a template that cannot be analysed (one that does not compile, or
        runs out of render time on the plain conversation: one render, then the derivation stops),
        whose renders take longer than :data:`MAX_DERIVE_SECONDS` together, or a special token
        longer than :data:`MAX_DERIVE_TOKEN_CHARS`, gives no template and the reason.
    """
    too_long = long_token_problem(special_tokens)
    if too_long is not None:
        return Derivation(None, {}, too_long)
    import time

    from chatcodec.analysis.derive import derive_response_template
    from chatcodec.chat_templates.errors import ChatTemplateError
    from chatcodec.chat_templates.limits import render_deadline
    from chatcodec.chat_templates.selection import select_chat_template
    from chatcodec.errors import ChatCodecError

    out_of_time = Derivation(None, {}, "deriving one from its chat template took longer than "
                                       f"MAX_DERIVE_SECONDS ({MAX_DERIVE_SECONDS:g} s of renders); run "
                                       "`chatcodec derive` on it")
    deadline = time.monotonic() + MAX_DERIVE_SECONDS
    try:
        template = select_chat_template(templates, None, [{"type": "function"}])
        budget = render_deadline(
            MAX_DERIVE_SECONDS, "MAX_DERIVE_SECONDS", "the time of the derivation's renders",
            "if the template is trusted, raise chatcodec.model.derived.MAX_DERIVE_SECONDS")
        with budget as deadline:
            derived = derive_response_template(template, variables=dict(special_tokens))
    except ChatTemplateError as error:  # one line: the reason goes inside parse_response's error
        if time.monotonic() > deadline:  # the renders were cut short, whatever the error says
            return out_of_time
        line = "" if error.lineno is None else f", line {error.lineno} of the chat template"
        return Derivation(None, {}, f"its chat template could not be analysed ({error.message}{line})")
    except ChatCodecError as error:
        if time.monotonic() > deadline:
            return out_of_time
        return Derivation(None, {}, f"its chat template could not be analysed ({error})")
    if time.monotonic() > deadline:  # renders were cut short: what was derived is not verified
        return out_of_time
    labels = {name: label.to_json() for name, label in derived.capabilities.items()}
    content = derived.capabilities["content"]
    if content.status != "verified":
        return Derivation(None, labels, f"a response template derived from its chat template does not "
                                        f"verify its content ({content.reason})")
    unverified = ", ".join(f"{name} {label.status}" for name, label in derived.capabilities.items()
                           if label.status != "verified")
    import logging  # here, not at module level: logging (with traceback, textwrap) is ~4 ms of every start

    logging.getLogger("chatcodec").info(
        "%s has no response_template and no bundled profile matched its chat template; using one derived "
        "from the chat template (%s)", where, unverified or "every capability verified")
    return Derivation(derived.response_template, labels, "")


def _used_capabilities(message: Mapping[str, Any]) -> list[str]:
    used = []
    if message.get("content"):
        used.append("content")
    if message.get("reasoning_content"):
        used.append("reasoning")
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        used.append("one_call" if len(calls) == 1 else "parallel_calls")
    return used


def warn_unverified(where: str, labels: Mapping[str, Mapping[str, Any]] | None, warned: set[str],
                    messages: Iterable[Mapping[str, Any]]) -> None:
    """Warn once per capability when parsed messages use one the derivation did not verify.

    Args:
        where: the model (its ``name_or_path``), for the message.
        labels: the derived template's labels (``codec.response_template_capabilities``); ``None``
            or empty: nothing to check.
        warned: the capabilities already warned about for this model (updated).
        messages: the parsed messages.
    """
    if not labels:
        return
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        for name in _used_capabilities(message):
            label = labels.get(name)
            if label is None or label["status"] == "verified" or name in warned:
                continue
            warned.add(name)
            reason = f": {label['reason']}" if label.get("reason") else ""
            warnings.warn(f"{where}: the response template was derived from the chat template "
                          f"and its {name} capability is {label['status']}{reason}; check this message, or "
                          "give the model a response template", UnverifiedCapabilityWarning, stacklevel=3)


def watch_parser(parser: ModelResponseParser, where: str, labels: Mapping[str, Mapping[str, Any]],
                 warned: set[str]) -> None:
    """Make ``parser.finalize`` warn as :func:`warn_unverified` does, for its final message."""

    def warn(message: dict[str, Any]) -> None:
        warn_unverified(where, labels, warned, [message])

    parser.finalize_hook = warn
