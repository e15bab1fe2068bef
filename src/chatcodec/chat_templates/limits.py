"""Resource limits of the chat-template sandbox, and the per-render state that enforces them.

Chat templates come from strangers. Jinja's sandbox stops them from reaching Python internals,
but not from burning memory or time (the reference adds no limit). Every limit below is a module
constant; change it by assigning the module attribute (it is read at each check). Each error
names its constant and value (:class:`ChatTemplateLimitError`).

What is bounded, and where it is enforced:

* time: the wall clock (:data:`MAX_RENDER_SECONDS`) is checked every :data:`CLOCK_CHECK_STEPS`
  *steps*. A step is a loop iteration, a call, an item a filter reads (``map``, ``select``,
  ``sort``, ``join``, ``list``, ...), or :data:`TEXT_CHARS_PER_STEP` characters of text a filter,
  ``str`` method or operator goes through, so the clock is read whatever a template spends its
  time on. :data:`MAX_TEMPLATE_STEPS` caps the steps too (a limit that does not depend on the
  machine's speed), set so high that the clock is what stops real templates. Work that renders
  many conversations can give all the renders of a block one deadline (:func:`render_deadline`);
* memory: every string a template builds (:data:`MAX_STRING_LENGTH`: operators, ``str`` methods,
  filters, ``{% set %}`` blocks and macros, checked before building wherever the size can be
  known first), the text any list or dict would print as (the same limit, estimated without
  building it, see :mod:`~chatcodec.chat_templates.sizes`), every list it builds or a filter
  reads into memory (:data:`MAX_LIST_LENGTH`), integers (:data:`MAX_INT_BITS`), padding widths
  (:data:`MAX_FORMAT_WIDTH`), and the rendered prompt itself (:data:`MAX_OUTPUT_LENGTH`); a
  ``MemoryError`` is reported as a limit error too;
* ``range()`` keeps Jinja's own ``MAX_RANGE`` (100,000 items; an ``OverflowError``);
* recursion: Python's recursion limit, reported as a limit error (``"recursion limit"``), also
  for templates nested too deeply to compile.

These bound the ways known to blow up a render; they are not a proof that no template can use
much memory (a process memory limit is the only such proof). A single filter call is not
interrupted: the clock is read before and after it. Run templates you do not trust in a process
with an OS memory limit if that matters to you.

This module keeps one rule: checks are cheap enough to run on every operation they guard.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chatcodec.chat_templates.errors import ChatTemplateError, ChatTemplateLimitError, ChatTemplateSyntaxError

if TYPE_CHECKING:
    from datetime import datetime

__all__ = [
    "CLOCK_CHECK_STEPS",
    "MAX_COMPARED_ITEMS",
    "MAX_FORMAT_WIDTH",
    "MAX_INT_BITS",
    "MAX_LIST_LENGTH",
    "MAX_OUTPUT_LENGTH",
    "MAX_RENDER_MEMORY",
    "MAX_RENDER_SECONDS",
    "MAX_STRING_LENGTH",
    "MAX_TEMPLATE_STEPS",
    "MAX_TEMPLATE_SYNTAX_TOKENS",
    "MAX_URLIZE_INPUT",
    "MAX_WORDWRAP_INPUT",
    "MEMORY_CHECK_SIZE",
    "MEMORY_CHECK_STEPS",
    "RENDER_TIME_HINT",
    "SIZED_TYPES",
    "TEXT_CHARS_PER_STEP",
    "UPFRONT_LOOP_ITEMS",
    "RenderState",
    "active_state",
    "charge_text",
    "check_items",
    "check_length",
    "check_size",
    "check_width",
    "compile_limit_error",
    "current_state",
    "enter_render",
    "exit_render",
    "limit_error",
    "memory_error",
    "process_memory",
    "recursion_error",
    "render_deadline",
]

#: Maximum steps in one render (see the module docstring for what a step is). A safety net for
#: when the clock is not enough (a raised MAX_RENDER_SECONDS); real templates stop at the clock
#: first: gemma-4's template, which scans the conversation backwards from every message, takes
#: about 5 million steps for 3,200 short messages.
MAX_TEMPLATE_STEPS = 1_000_000_000

#: Maximum wall-clock seconds one render may take (checked every ``CLOCK_CHECK_STEPS`` steps).
#: Generous, because real templates can be quadratic in the conversation: gemma-4's renders an
#: agent trace of 4,000 messages in about 5 seconds (the reference: about 30).
MAX_RENDER_SECONDS = 60.0

#: How the error for :data:`MAX_RENDER_SECONDS` tells a trusted template more time (``""``: raise the
#: constant, as every other limit says). The command line sets it while a command runs, since its
#: user sets the limit with ``--timeout SECONDS``, not in Python (``chatcodec.cli.options``).
RENDER_TIME_HINT = ""

#: How many steps pass between two checks of the clock.
CLOCK_CHECK_STEPS = 256

#: Characters of text counted as one step when a filter, ``str`` method or operator goes through
#: a long string (a 50-million-character ``|title`` is about 780,000 steps).
TEXT_CHARS_PER_STEP = 64

#: Loops over a list, tuple, dict, str or range of at most this many items are charged their
#: length up front and then run at full speed; longer loops (and loops over anything else) count
#: one step per item, so the clock is checked while they run.
UPFRONT_LOOP_ITEMS = 256

#: Maximum length, in characters, of any string a template builds.
MAX_STRING_LENGTH = 50_000_000

#: Maximum length of a string given to the filters that go through text word by word in Python
#: (``title``, ``striptags``; ``wordwrap`` and ``urlize`` have lower bounds of their own): one call
#: cannot be interrupted.
MAX_TEXT_FILTER_INPUT = 5_000_000

#: Maximum length of a string given to ``wordwrap``: its time grows with the square of a line's
#: length (a run of non-ASCII spaces wrapped at width 1: 40,000 characters take about 5 seconds),
#: and one call cannot be interrupted, so the bound keeps one call to about a second.
MAX_WORDWRAP_INPUT = 20_000

#: Maximum length of a string given to ``urlize`` (about a second per million characters of
#: addresses, and one call cannot be interrupted).
MAX_URLIZE_INPUT = 1_000_000

#: Maximum number of items a comparison (``==``, ``<``, ``in``, ...) or a hash (``|unique``, a dict
#: key, ``|groupby``, ``|sort``) of a list, tuple or dict may go through, counting a shared item as
#: often as it appears: ``(t, t)`` built 60 times over is 60 objects to build, 2**60 to compare.
MAX_COMPARED_ITEMS = 1_000_000

#: Maximum memory, in bytes, a render may add to the process (the resident set size, read at
#: least every ``MEMORY_CHECK_STEPS`` steps and whenever a string or list of ``MEMORY_CHECK_SIZE``
#: characters or items or more is built): what the template accumulates (strings, lists, the output)
#: beyond the limits on each value. Where the operating system does not report it (no
#: ``/proc/self/statm``), the process's peak resident set size is used.
MAX_RENDER_MEMORY = 1_000_000_000

#: Steps between two reads of the render's memory (see :data:`MAX_RENDER_MEMORY`).
MEMORY_CHECK_STEPS = 1024

#: A string (characters) or list (items) this big makes the render read its memory at once.
MEMORY_CHECK_SIZE = 262_144

#: Maximum number of items of any list a template builds (``+``, ``*``, ``batch``, ``slice``).
MAX_LIST_LENGTH = 1_000_000

#: Maximum length of the rendered prompt, in characters.
MAX_OUTPUT_LENGTH = 100_000_000

#: Maximum width or indent a template may ask for (``"%9999999d"``, ``ljust``, ``center``,
#: ``indent``, ``tojson(indent=...)``, ...).
MAX_FORMAT_WIDTH = 100_000

#: Maximum number of Jinja syntax tokens in a chat template (names, operators, literals, runs of
#: text; not whitespace or comments), counted before it is parsed: parsing and compiling are not
#: interrupted by the clock, and their time and memory grow with the tokens (a 200,000-item list
#: literal, 400,000 tokens in one tag, took 44 s and 1.5 GB). The largest corpus template
#: (gemma-4) has 2,350; templates just under the bound (6,000 ``{% if %}`` blocks, a 25,000-item
#: list) compiled in 2.5-3.5 s on a shared 2-core machine. Text outside tags is one token per run,
#: so a long system prompt written into the template costs nothing here.
MAX_TEMPLATE_SYNTAX_TOKENS = 50_000

#: How many loops CPython lets one function nest (its compiler's fixed limit; not a setting).
PYTHON_NESTED_BLOCKS = 20

#: Maximum size, in bits, of an integer computed with ``**`` or ``*``.
MAX_INT_BITS = 100_000


def limit_error(what: str, limit: str, value: float, hint: str = "") -> ChatTemplateLimitError:
    """Build the error for a limit that was hit.

    Args:
        what: what the template tried (``"a string of 60000000 characters"``).
        limit: the constant's name.
        value: the constant's value.
        hint: how to proceed, if the template is trusted.

    Returns:
        The error (not raised), its message naming the limit and how to raise it.
    """
    hint = hint or f"if the template is trusted, raise chatcodec.chat_templates.limits.{limit}"
    return ChatTemplateLimitError(
        f"chat template sandbox: {what} exceeds {limit} ({value:,}). {hint}", limit=limit, value=value
    )


def check_length(size: int, what: str = "string") -> None:
    """Raise when a template would build a string longer than :data:`MAX_STRING_LENGTH`.

    Args:
        size: the length of the string.
        what: what the string is, for the message.

    Raises:
        ChatTemplateLimitError: ``size`` is over the limit.
    """
    if size > MAX_STRING_LENGTH:
        raise limit_error(f"{_article(what)} {what} of {size:,} characters", "MAX_STRING_LENGTH",
                          MAX_STRING_LENGTH)
    if size >= MEMORY_CHECK_SIZE:
        _check_memory_now()


def check_items(size: int, what: str = "list") -> None:
    """Raise when a template would build a list longer than :data:`MAX_LIST_LENGTH`.

    Args:
        size: the length of the list.
        what: what the list is, for the message.

    Raises:
        ChatTemplateLimitError: ``size`` is over the limit.
    """
    if size > MAX_LIST_LENGTH:
        raise limit_error(f"{_article(what)} {what} of {size:,} items", "MAX_LIST_LENGTH", MAX_LIST_LENGTH)
    if size >= MEMORY_CHECK_SIZE:
        _check_memory_now()


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


def check_size(value: Any, what: str) -> None:
    """Raise when a string or list a template built is over its limit.

    Args:
        value: the string or list.
        what: what it is, for the message.

    Raises:
        ChatTemplateLimitError: ``value`` is too long.
    """
    if type(value) is str:
        check_length(len(value), what)
    else:
        check_items(len(value), what)


def recursion_error() -> ChatTemplateLimitError:
    """The error for a template that recursed past Python's recursion limit."""
    return limit_error("the depth of macro calls or recursive loops", "recursion limit",
                       sys.getrecursionlimit(), "the template recurses too deeply (possibly without end)")


def compile_limit_error(error: BaseException) -> ChatTemplateError:
    """The error for a template Python cannot compile: too deeply nested, or too big.

    Args:
        error: what compiling raised: a ``RecursionError`` (the parser or the code generator
            recursed too deeply), a ``SyntaxError`` from Python's compiler (more than 20 nested
            loops), or a ``MemoryError``.

    Returns:
        A :class:`ChatTemplateLimitError` (a :class:`ChatTemplateSyntaxError` for any other
        ``SyntaxError``).
    """
    if isinstance(error, RecursionError):
        return limit_error("the nesting depth of the template", "recursion limit", sys.getrecursionlimit(),
                           "The template nests too deeply to compile (parentheses, blocks or a chain of "
                           "operators); split it up")
    if isinstance(error, SyntaxError) and "statically nested blocks" in str(error.msg):
        return limit_error("the nesting of {% for %} loops", "Python's nested-block limit",
                           PYTHON_NESTED_BLOCKS,
                           "Nest fewer loops inside one another (a macro starts a new count)")
    if isinstance(error, MemoryError):
        return memory_error()
    return ChatTemplateSyntaxError(f"the template compiles to invalid Python: {error}",
                                   original_type=type(error).__name__)


def memory_error() -> ChatTemplateLimitError:
    """The error for a template that ran out of memory (``MemoryError``) despite the limits."""
    return ChatTemplateLimitError(
        "chat template sandbox: the render ran out of memory (MemoryError). Render templates you do not "
        "trust in a process with an operating-system memory limit", limit="memory", value=0,
    )


def check_width(width: object, what: str) -> None:
    """Raise when an integer width or indent is larger than :data:`MAX_FORMAT_WIDTH`.

    Args:
        width: the width (an int) or the indent (a string); other values are not checked.
        what: what it is, for the message.

    Raises:
        ChatTemplateLimitError: ``width`` is over the limit.
    """
    if isinstance(width, int) and width > MAX_FORMAT_WIDTH:
        raise limit_error(f"{what} of {width:,}", "MAX_FORMAT_WIDTH", MAX_FORMAT_WIDTH)
    if isinstance(width, str) and len(width) > MAX_FORMAT_WIDTH:
        raise limit_error(f"{what} of {len(width):,} characters", "MAX_FORMAT_WIDTH", MAX_FORMAT_WIDTH)


@dataclass(slots=True)
class RenderState:
    """What one render needs beyond the template variables (a context variable holds it).

    Attributes:
        now: the time ``strftime_now()`` reports; ``None`` means the current local time, read once.
        steps_left: steps the render may still take.
        deadline: ``time.monotonic()`` value after which the render fails.
        track_spans: whether ``{% generation %}`` blocks record spans.
        span_markers: the two characters that wrap generation output in a marked render (blocks
            not written directly to the output, see :mod:`chatcodec.chat_templates.generation`);
            ``None`` to record spans from the output offset.
        offset: characters written to the output so far (direct span tracking).
        spans: the character spans recorded so far.
    """

    now: datetime | None = None
    steps_left: int = field(default_factory=lambda: MAX_TEMPLATE_STEPS)
    deadline: float = field(default_factory=lambda: _first_deadline())
    memory_base: int = field(default_factory=lambda: process_memory())
    memory_next: int = field(default_factory=lambda: MAX_TEMPLATE_STEPS - MEMORY_CHECK_STEPS)
    #: items a comparison or hash of a container goes through, by ``id`` (the container is kept,
    #: so its id is not reused during the render; template values never change)
    compared: dict[int, tuple[Any, int]] = field(default_factory=dict)
    track_spans: bool = False
    span_markers: tuple[str, str] | None = None
    offset: int = 0
    spans: list[tuple[int, int]] = field(default_factory=list)

    def step(self) -> None:
        """Count one step; raise when the step or time budget is spent."""
        left = self.steps_left - 1
        self.steps_left = left
        if left < 0 or not left % CLOCK_CHECK_STEPS:
            self.check_budget(left)

    def check_budget(self, left: int) -> None:
        """Raise when the steps are spent (``left < 0``) or the render has run out of time.

        Raises:
            ChatTemplateLimitError: for ``MAX_TEMPLATE_STEPS`` or ``MAX_RENDER_SECONDS``.
        """
        if left < 0:
            raise limit_error("the number of loop iterations and calls", "MAX_TEMPLATE_STEPS",
                              MAX_TEMPLATE_STEPS)
        self.check_clock()
        if left <= self.memory_next:
            self.memory_next = left - MEMORY_CHECK_STEPS
            self.check_memory()

    def check_memory(self) -> None:
        """Raise when the process holds more than :data:`MAX_RENDER_MEMORY` bytes more than when the
        render started.

        Raises:
            ChatTemplateLimitError: for ``MAX_RENDER_MEMORY``.
        """
        grown = process_memory() - self.memory_base
        if grown > MAX_RENDER_MEMORY:
            raise limit_error(f"the memory the render holds ({grown:,} bytes more than when it started)",
                              "MAX_RENDER_MEMORY", MAX_RENDER_MEMORY)

    def check_clock(self) -> None:
        """Raise when the render has run longer than :data:`MAX_RENDER_SECONDS`.

        Raises:
            ChatTemplateLimitError: the deadline has passed.
        """
        if time.monotonic() > self.deadline:
            shared = _DEADLINE.get()
            if shared is not None and shared[0] == self.deadline:
                _, limit, seconds, what, hint = shared
                raise limit_error(what, limit, seconds, hint)
            raise limit_error("the render time", "MAX_RENDER_SECONDS", MAX_RENDER_SECONDS, RENDER_TIME_HINT)

    def charge(self, steps: int) -> None:
        """Count ``steps`` steps at once (a loop over a sized iterable is charged when it starts)."""
        before = self.steps_left
        left = before - steps
        self.steps_left = left
        if left < 0 or before // CLOCK_CHECK_STEPS != left // CLOCK_CHECK_STEPS:
            self.check_budget(left)

    def guard(self, iterable: Iterable[Any]) -> Iterable[Any]:
        """What a ``{% for %}`` iterates: sized built-ins are charged up front and returned as they
        are (no cost per item); anything else is wrapped to count one step per item.

        Args:
            iterable: the loop's iterable.

        Returns:
            ``iterable`` itself, or a generator over it that counts steps.
        """
        if type(iterable) in SIZED_TYPES and len(iterable) <= UPFRONT_LOOP_ITEMS:  # type: ignore[arg-type]
            self.charge(len(iterable))  # type: ignore[arg-type]
            return iterable
        return self._counted(iterable)

    def capped(self, iterable: Iterable[Any], what: str) -> Iterable[Any]:
        """What a filter that reads all of its input into memory (``list``, ``sort``, ``join``, ...)
        iterates: like :meth:`guard`, and never more than :data:`MAX_LIST_LENGTH` items.

        Args:
            iterable: the filter's input.
            what: what the filter builds, for the message.

        Returns:
            ``iterable`` itself (a sized built-in, charged its length), or a generator over it that
            counts steps and stops with an error past the limit.

        Raises:
            ChatTemplateLimitError: a sized input is already over the limit (from the generator:
                an unsized one goes over it).
        """
        if type(iterable) in SIZED_TYPES:
            check_items(len(iterable), what)  # type: ignore[arg-type]
            self.charge(len(iterable))  # type: ignore[arg-type]
            return iterable
        return self._counted(iterable, MAX_LIST_LENGTH, what)

    def _counted(self, iterable: Iterable[Any], cap: int | None = None, what: str = "") -> Iterator[Any]:
        count = 0
        for item in iterable:
            left = self.steps_left - 1
            self.steps_left = left
            if left < 0 or not left % CLOCK_CHECK_STEPS:
                self.check_budget(left)
            if cap is not None:
                count += 1
                if count > cap:
                    check_items(count, what)
            yield item

    def current_time(self) -> datetime:
        """The time for ``strftime_now``: ``now`` if given, else the local time at the first call."""
        if self.now is None:
            from datetime import datetime  # here: most templates never ask for the time

            self.now = datetime.now()
        return self.now


#: Iterable types whose length is known before iterating (their loops are charged up front).
SIZED_TYPES = frozenset({list, tuple, dict, str, range})

_STATE: contextvars.ContextVar[RenderState | None] = contextvars.ContextVar("chatcodec_render_state",
                                                                            default=None)

#: The deadline :func:`render_deadline` sets for every render of its block: ``(time.monotonic()
#: value, the limit's name, its seconds, what runs out of time, the hint)``.
_DEADLINE: contextvars.ContextVar[tuple[float, str, float, str, str] | None] = contextvars.ContextVar(
    "chatcodec_render_deadline", default=None)


def _first_deadline() -> float:
    """A new render's deadline: :data:`MAX_RENDER_SECONDS` from now, or the block's deadline of
    :func:`render_deadline` when that comes first."""
    own = time.monotonic() + MAX_RENDER_SECONDS
    shared = _DEADLINE.get()
    return own if shared is None else min(own, shared[0])


@contextlib.contextmanager
def render_deadline(seconds: float, limit: str, what: str, hint: str = "") -> Iterator[float]:
    """Within the block, every render must end within ``seconds`` of the block's start, besides
    :data:`MAX_RENDER_SECONDS` each: for work that renders many conversations (deriving a response
    template while a model loads), whose total time one render's limit does not bound. The
    deadline holds in this thread or task only (a context variable), never in another render.

    Args:
        seconds: the time the block's renders may take together.
        limit: the constant that holds ``seconds``, named by the error.
        what: what runs out of time, for the message (``"the time of the derivation's renders"``).
        hint: how to proceed, if the template is trusted (default: raise the constant, as if it
            were one of this module's).

    Yields:
        The deadline, a ``time.monotonic()`` value (the caller may check it after the block).

    Raises:
        ChatTemplateLimitError: (from a render in the block) the deadline has passed; its ``limit``
            is ``limit``.
    """
    deadline = time.monotonic() + seconds
    token = _DEADLINE.set((deadline, limit, seconds, what, hint))
    try:
        yield deadline
    finally:
        _DEADLINE.reset(token)


def active_state() -> RenderState | None:
    """The state of the render in progress, or ``None`` outside a render."""
    return _STATE.get()


def current_state() -> RenderState:
    """The state of the render in progress (a fresh one when called outside a render)."""
    state = _STATE.get()
    return RenderState() if state is None else state


def _check_memory_now() -> None:
    state = _STATE.get()
    if state is not None:
        state.check_memory()


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: ``/proc/self/statm`` kept open (a read then costs one ``pread``; opening it costs ten times more);
#: ``None`` before the first read, ``-1`` where it does not exist. Forgotten in a forked child.
_statm: int | None = None


def _forget_statm() -> None:
    global _statm
    _statm = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_statm)


def process_memory() -> int:
    """The process's resident set size in bytes (``/proc/self/statm``), or its peak resident set size
    where that file does not exist, or 0 when neither is known."""
    global _statm
    if _statm is None:
        try:
            _statm = os.open("/proc/self/statm", os.O_RDONLY)
        except OSError:
            _statm = -1
    if _statm >= 0:
        try:
            return int(os.pread(_statm, 128, 0).split()[1]) * _PAGE_SIZE
        except (OSError, ValueError, IndexError):
            pass
    try:
        import resource
    except ImportError:  # Windows: not measured
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def charge_text(length: int) -> None:
    """Count the steps of going through ``length`` characters of text (see :data:`TEXT_CHARS_PER_STEP`).

    Raises:
        ChatTemplateLimitError: the step or time budget is spent.
    """
    if length >= TEXT_CHARS_PER_STEP:
        state = _STATE.get()
        if state is not None:
            state.charge(length // TEXT_CHARS_PER_STEP)


def enter_render(state: RenderState) -> contextvars.Token[RenderState | None]:
    """Make ``state`` the current render state; pass the token to :func:`exit_render`."""
    return _STATE.set(state)


def exit_render(token: contextvars.Token[RenderState | None]) -> None:
    """Restore the render state that was current before :func:`enter_render`."""
    _STATE.reset(token)
