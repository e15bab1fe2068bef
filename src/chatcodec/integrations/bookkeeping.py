"""The engines' record of what a tool parser has streamed, kept in step with what was sent.

vLLM and SGLang both read four attributes of a tool parser (vLLM's ``ToolParser``, SGLang's
``BaseFormatDetector``): ``prev_tool_call_arr`` (one dict per call, with ``name`` and
``arguments``), ``streamed_args_for_tool`` (the argument text sent per call), ``current_tool_id``
and ``current_tool_name_sent``. At the end of a stream each engine sends "the arguments parsed but
not yet streamed": the text of ``prev_tool_call_arr[-1]["arguments"]`` beyond
``streamed_args_for_tool[-1]`` (vLLM's ``ToolParser.get_remaining_unstreamed_args``, SGLang's
``_check_for_unstreamed_tool_args``). A plugin that records parsed arguments but not what it sent
gets its arguments sent twice; one that records nothing gets nothing appended.

chatcodec sends every fragment itself, so :func:`record` keeps both records equal to what was sent:
``prev_tool_call_arr[i]["arguments"]`` is the argument text sent for call ``i`` (a string, which
both engines compare as is), ``streamed_args_for_tool[i]`` the same text. The remainder is then
always empty: nothing is sent twice, and nothing is missing because the stream itself ends every call.
"""

from __future__ import annotations

from typing import Any

__all__ = ["add_arguments", "forget", "record", "reset", "start_call", "take_back"]


def reset(parser: Any) -> None:
    """Empty the records (a parser starts, or starts over)."""
    parser.prev_tool_call_arr = []
    parser.streamed_args_for_tool = []
    parser.current_tool_id = -1
    parser.current_tool_name_sent = False


def record(parser: Any, entries: list[dict[str, Any]]) -> None:
    """Add Chat Completions ``delta.tool_calls`` entries that are being sent to the records.

    Args:
        parser: the engine's tool parser object (its four attributes are updated in place).
        entries: entries in sending order; an entry with ``function.name`` starts call ``index``.
    """
    calls: list[dict[str, Any]] = parser.prev_tool_call_arr
    sent: list[str] = parser.streamed_args_for_tool
    for entry in entries:
        index = entry["index"]
        function = entry.get("function") or {}
        while True:  # (no len() per entry: a call's first delta runs this)
            try:
                call = calls[index]
                break
            except IndexError:
                calls.append({"name": None, "arguments": ""})
                sent.append("")
        if function.get("name"):
            call["name"] = function["name"]
            parser.current_tool_id = index
            parser.current_tool_name_sent = True
        fragment = function.get("arguments")
        if fragment:
            sent[index] += fragment
            call["arguments"] = sent[index]


def add_arguments(parser: Any, index: int, fragment: str) -> None:
    """:func:`record` of one entry that carries only an argument fragment (the usual entry), in
    fewer steps: the same records.

    Args:
        parser: the engine's tool parser object.
        index: the call's index.
        fragment: the argument text being sent (not empty).
    """
    sent: list[str] = parser.streamed_args_for_tool
    try:
        text = sent[index] = sent[index] + fragment
    except IndexError:  # a call recorded nowhere yet: record's own way
        record(parser, [{"index": index, "function": {"arguments": fragment}}])
        return
    parser.prev_tool_call_arr[index]["arguments"] = text


def start_call(parser: Any, index: int, name: str, fragment: str) -> None:
    """:func:`record` of a call's first entry followed by an entry with its first argument
    fragment (the delta that starts a call), in fewer steps: the same records.

    Args:
        parser: the engine's tool parser object.
        index: the call's index.
        name: the call's function name.
        fragment: its first argument text being sent (``""``: none in this delta).
    """
    calls: list[dict[str, Any]] = parser.prev_tool_call_arr
    if index != len(calls) or not name:  # not the next call (recorded already, or one skipped), or
        # a name record() does not count as one: record()'s own way
        record(parser, [{"index": index, "function": {"name": name, "arguments": ""}},
                        {"index": index, "function": {"arguments": fragment}}])
        return
    calls.append({"name": name, "arguments": fragment})
    parser.streamed_args_for_tool.append(fragment)
    parser.current_tool_id = index
    parser.current_tool_name_sent = True


def take_back(parser: Any, entries: list[dict[str, Any]]) -> None:
    """Remove argument fragments from the records: entries :func:`record` recorded last that end
    up not sent after all (vLLM's last Responses delta, ``vllm_parsers._Request.send``).

    Args:
        parser: the engine's tool parser object.
        entries: argument entries (no ``function.name``), each among the last recorded for its call.
    """
    for entry in reversed(entries):
        index, fragment = entry["index"], (entry.get("function") or {}).get("arguments") or ""
        sent: list[str] = parser.streamed_args_for_tool
        if fragment and sent[index].endswith(fragment):
            sent[index] = sent[index][: len(sent[index]) - len(fragment)]
            parser.prev_tool_call_arr[index]["arguments"] = sent[index]


def forget(parser: Any, first: int) -> None:
    """Remove calls ``first`` and later from the records: calls :func:`record` recorded that end up
    not sent at all (vLLM's last Chat Completions delta, ``vllm_parsers._Request.send``).

    Args:
        parser: the engine's tool parser object.
        first: the index of the first call to remove.
    """
    del parser.prev_tool_call_arr[first:]
    del parser.streamed_args_for_tool[first:]
    parser.current_tool_id = min(parser.current_tool_id, first - 1)
    parser.current_tool_name_sent = parser.current_tool_id >= 0
