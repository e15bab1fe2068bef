"""The value scanner of ``x-json-calls``: JSON tool calls, one or many, as they are written.

The region holds JSON values (objects, or arrays of objects) separated by whitespace and the
``separators``; :class:`~.json_scan.JsonReader` reads each one, and this module turns the raw JSON
deltas into deltas of the parser's value, a list of ``{"id"?, "name", "arguments"}`` (with
``single``: the one call). A call object's keys are read as :mod:`..ext_json_calls` reads them:
the name (one of ``name_keys``, a string) and the id (one of ``id_keys``, a string) stream as
strings, the arguments (one of ``arguments_keys``) stream as the object they are, or, written as a
JSON *string* (Granite 4), are held and ``set`` decoded when the string ends; ``"type":
"function"`` is checked and says nothing more; with ``name_as_key`` the one key is the name and its
value the arguments. A call without arguments gets ``{}`` when its object ends (unless
``require_arguments``). Anything the parser would refuse (another key, a second name, a value
that is not a call) stops the scanner.

``complete``: after a value, the first character that is not whitespace, a separator or the start
of another value (``{`` or ``[``) ends the calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcodec.response_templates.lax_json import loads_json
from chatcodec.response_templates.scanners.json_scan import STRING_WATCH, JsonReader
from chatcodec.response_templates.scanners.protocol import Delta, Path
from chatcodec.response_templates.scanners.text_run import TextRun

__all__ = ["JsonCallsScanner", "json_calls_scanner"]

_NAME_KEYS = ["name"]
_ARGUMENTS_KEYS = ["arguments", "parameters"]
_ID_KEYS = ["id", "tool_call_id", "call_id"]


class _Call:
    """The keys of one call object seen so far."""

    __slots__ = ("arguments", "encoded", "id", "name", "type_text")

    def __init__(self) -> None:
        self.name = False
        self.arguments = False
        self.id = False
        self.encoded: list[str] | None = None  # text of arguments written as a JSON string
        self.type_text: list[str] | None = None  # text of "type", checked when it ends


class JsonCallsScanner:
    """See the module docstring."""

    def __init__(self, args: Mapping[str, Any]) -> None:
        self._name_keys = frozenset(args.get("name_keys", _NAME_KEYS))
        self._arguments_keys = frozenset(args.get("arguments_keys", _ARGUMENTS_KEYS))
        self._id_keys = frozenset(args.get("id_keys", _ID_KEYS))
        self._name_as_key = bool(args.get("name_as_key"))
        self._require = bool(args.get("require_arguments"))
        self._single = bool(args.get("single"))
        self._separators = list(args.get("separators", [";"]))
        self._reader: JsonReader | None = None
        self._array = False  # the value being read is an array of calls
        self._calls: dict[int, _Call] = {}  # raw item index (or -1 for a bare object) -> its call
        self._count = 0  # calls begun before the value being read
        self._values = 0  # values read completely
        self._carry = ""  # the start of a separator cut off by the chunk end
        self._offset = 0
        self._dead = False
        self._started = False
        self._text_raw: Path | None = None  # the raw path of the last text delta, and where it went
        self._text_out: Path = ()
        self.complete: int | None = None

    @property
    def refuted(self) -> bool:
        """The text can never be read as calls."""
        reader = self._reader
        return (self._dead and not (reader is not None and reader.dead and not reader.refuted)) \
            or self.complete is not None

    # -- the text between values --------------------------------------------------------------------

    def feed(self, text: str) -> list[Delta]:
        out: list[Delta] = []
        if not self._started:
            self._started = True
            if not self._single:
                out.append(("begin", (), "array"))
        offset = self._offset - len(self._carry)  # where the text read now starts in the region
        self._offset += len(text)
        if self._dead or self.complete is not None:
            return out
        text, self._carry = self._carry + text, ""
        i, n = 0, len(text)
        while i < n and not self._dead:
            if self._reader is not None:
                i = self._read(text, i, out)
                continue
            i = self._between(text, i)
            if i < 0:
                break
            if i >= n:
                break
            if text[i] not in "{[":
                if self._values:
                    self.complete = offset + i
                else:
                    self._dead = True
                break
            if self._single and self._count:
                self._dead = True
                break
            self._array = text[i] == "["
            self._reader = JsonReader()
        return out

    def _between(self, text: str, i: int) -> int:
        """Skip whitespace and separators; ``-1`` when the text ends inside a separator (kept)."""
        n = len(text)
        while i < n:
            if text[i].isspace():
                i += 1
                continue
            for separator in self._separators:
                if text.startswith(separator, i):
                    i += len(separator)
                    break
            else:
                rest = text[i:]
                if any(len(s) > len(rest) and s.startswith(rest) for s in self._separators):
                    self._carry = rest
                    return -1
                return i
        return i

    def _read(self, text: str, i: int, out: list[Delta]) -> int:
        reader = self._reader
        assert reader is not None
        i = reader.feed(text, i)
        raw, reader.out = reader.out, []
        for delta in raw:
            self._call_delta(delta, out)
            if self._dead:
                return len(text)
        if reader.dead:
            self._dead = True
        elif reader.done:
            self._reader = None
            self._values += 1
            self._count += len(self._calls)
            self._calls = {}
        return i

    def text_run(self) -> TextRun | None:
        """The short path (``scanners.text_run``) inside a call's string whose text goes out as
        it comes (a name, an id, a string argument): its plain text is more of the string the last
        text went to."""
        reader = self._reader
        if reader is None or self._dead or self.complete is not None or self._carry \
                or self._text_raw is None or reader.plain_string() != self._text_raw:
            return None
        return STRING_WATCH, self._text_out

    def skip(self, text: str) -> None:
        """Take ``text``, plain chunks of the last :meth:`text_run` (their text was emitted)."""
        self._offset += len(text)

    @property
    def held(self) -> int:
        """Characters read but not decided on: the start of a separator after a complete value."""
        return len(self._carry) if self._values and self._reader is None and self.complete is None else 0

    def end(self) -> list[Delta]:
        out: list[Delta] = []
        if self._carry and self._values and self._reader is None and self.complete is None:
            self.complete = self._offset - len(self._carry)  # the text ended inside no separator
        if self._reader is not None and not self._dead:
            self._reader.finish()
            for delta in self._reader.out:
                self._call_delta(delta, out)
        if not self._started and not self._single:
            out.insert(0, ("begin", (), "array"))
        return out

    # -- raw JSON deltas -> call deltas ------------------------------------------------------------

    def _call_delta(self, delta: Delta, out: list[Delta]) -> None:
        op, path, payload = delta
        if op == "text" and path == self._text_raw:
            out.append(("text", self._text_out, payload))  # more of the string the last text went to
            return
        self._text_raw = None
        size = len(out)
        self._map_delta(op, path, payload, out)
        if op == "text" and len(out) == size + 1:
            self._text_raw, self._text_out = path, out[-1][1]

    def _map_delta(self, op: str, path: Path, payload: Any, out: list[Delta]) -> None:
        if self._array:
            if not path:
                return  # the array itself (an empty one adds no call)
            index, rest = path[0], path[1:]
        else:
            index, rest = -1, path
        assert isinstance(index, int)
        base: Path = () if self._single else (self._count + (index if index >= 0 else 0),)
        if not rest:
            if op == "begin" and payload == "object":
                self._calls[index] = _Call()
                out.append(("begin", base, "object"))
            elif op == "end" and index in self._calls:
                self._end_call(self._calls[index], base, out)
            else:
                self._dead = True  # not a call object
            return
        call = self._calls[index]
        key = rest[0]
        below = rest[1:]
        if self._name_as_key:
            self._named_delta(call, key, below, op, payload, base, out)
            return
        if not below and op in ("begin", "set"):
            if not self._take_key(call, key, op, payload, base, out):
                self._dead = True
            return
        if key in self._name_keys:
            out.append((op, (*base, "name", *below), payload))
        elif key in self._id_keys:
            out.append((op, (*base, "id", *below), payload))
        elif key in self._arguments_keys:
            self._arguments_delta(call, below, op, payload, base, out)
        elif key == "type":
            self._type_delta(call, op, payload)

    def _take_key(self, call: _Call, key: Any, op: str, payload: Any, base: Path, out: list[Delta]) -> bool:
        """The first delta of ``key``'s value: classify the key and start its value."""
        is_string = op == "begin" and payload == "string"
        if key in self._name_keys:
            if call.name or not (is_string or (op == "set" and isinstance(payload, str))):
                return False
            call.name = True
            out.append((op, (*base, "name"), payload))
        elif key in self._id_keys:
            if call.id or not (is_string or (op == "set" and isinstance(payload, str))):
                return False
            call.id = True
            out.append((op, (*base, "id"), payload))
        elif key in self._arguments_keys:
            if call.arguments:
                return False
            call.arguments = True
            if is_string:
                call.encoded = []
            elif op == "begin" and payload == "object":
                out.append((op, (*base, "arguments"), payload))
            elif op == "set" and payload is None and not self._require:
                out.append(("set", (*base, "arguments"), {}))
            else:
                return False
        elif key == "type":
            if not is_string:
                return False
            call.type_text = []
        else:
            return False
        return True

    def _arguments_delta(self, call: _Call, below: Path, op: str, payload: Any, base: Path,
                         out: list[Delta]) -> None:
        if call.encoded is None:
            out.append((op, (*base, "arguments", *below), payload))
        elif op == "text":
            call.encoded.append(payload)
        elif op == "end":
            try:
                decoded = loads_json("".join(call.encoded))
            except (ValueError, RecursionError):
                decoded = None
            if not isinstance(decoded, dict):
                self._dead = True
                return
            out.append(("set", (*base, "arguments"), decoded))

    def _type_delta(self, call: _Call, op: str, payload: Any) -> None:
        if call.type_text is None:
            return
        if op == "text":
            call.type_text.append(payload)
        elif op == "end" and "".join(call.type_text) != "function":
            self._dead = True

    def _named_delta(self, call: _Call, key: Any, below: Path, op: str, payload: Any, base: Path,
                     out: list[Delta]) -> None:
        """``{NAME: {arguments}}``: the one key is the name, its value the arguments."""
        if not below and op in ("begin", "set"):
            if call.name:
                self._dead = True
                return
            call.name = call.arguments = True
            out.append(("set", (*base, "name"), key))
            if op == "begin" and payload == "string":
                call.encoded = []
            elif op == "begin" and payload == "object":
                out.append((op, (*base, "arguments"), payload))
            else:
                self._dead = True
            return
        self._arguments_delta(call, below, op, payload, base, out)

    def _end_call(self, call: _Call, base: Path, out: list[Delta]) -> None:
        if not call.name:
            self._dead = True
            return
        if not call.arguments:
            if self._require:
                self._dead = True
                return
            out.append(("set", (*base, "arguments"), {}))
        out.append(("end", base, None))


def json_calls_scanner(args: Mapping[str, Any]) -> JsonCallsScanner | None:
    """The scanner of an ``x-json-calls`` region, or ``None`` when its key lists overlap."""
    lists = [args.get("name_keys", _NAME_KEYS), args.get("arguments_keys", _ARGUMENTS_KEYS),
             args.get("id_keys", _ID_KEYS)]
    keys = [key for keys in lists for key in keys]
    if len(keys) != len(set(keys)) or "type" in keys:
        return None
    return JsonCallsScanner(args)
