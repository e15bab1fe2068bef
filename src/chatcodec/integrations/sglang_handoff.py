"""One chatcodec parse for both of SGLang's stages of a request: a hand-off from reasoning to tools.

SGLang's chat serving (``serving_chat.py``, 0.5.23) runs a reasoning parser and a tool-call parser
per choice, as two objects that never see each other: the reasoning stage returns the text outside
reasoning ("normal text"), and the tool stage parses that text again. chatcodec's parser already
decided the tool calls and content while it parsed the reasoning, so a second parse is wasted work.
A :class:`Handoff` lets the tool stage read the reasoning stage's parse instead:

* the reasoning detector owns the hand-off and feeds every delta to its session (one
  :class:`~.session.Session` with ``track_outside``), handing on the raw text outside reasoning as
  before; once a tool stage reads from it, each step's content and tool-call entries wait in a
  queue, next to the raw text they came from;
* the tool detector built right after it in the same request (SGLang builds both lazily, the
  reasoning parser first, then the tool-call parser, for the same delta) takes the hand-off
  (:func:`offer` / :func:`take`: a context variable, so each request's task sees only its own) and,
  on its first call, :meth:`Handoff.claim`\\ s it with the request's tools. The session takes
  the tools as it stands (:meth:`.Session.adopt_tools`, :meth:`ResponseParser.set_tools`: one
  parse per request) while that is exact: no call region closed and no arguments streamed yet,
  the usual case after one delta, even when that delta opened a call (DeepSeek V3); otherwise a
  session with those tools is built from the text fed so far and used from then on only if it
  stands exactly where the first session stood;
* each later call :meth:`Handoff.read`\\ s the queued steps, after checking that the text it was
  given is the raw text they came from.

Whenever one of these checks fails (the stages were built or called in another order, only one of
them runs, SGLang changed the text between them) the tool detector parses the text it is given
with a parser of its own, as it did before the hand-off existed: the hand-off only ever saves work.
"""

from __future__ import annotations

import weakref
from contextvars import ContextVar
from typing import Any

from chatcodec.integrations.discovery import ServingTemplate
from chatcodec.integrations.session import Session, Step

__all__ = ["Handoff", "merge", "offer", "take"]

#: the hand-off of the reasoning detector built last in this context (an asyncio task per request)
_OFFERED: ContextVar[weakref.ref[Handoff] | None] = ContextVar("chatcodec_sglang_handoff", default=None)


def offer(handoff: Handoff) -> None:
    """Make ``handoff`` the one the next tool detector built in this context may take."""
    _OFFERED.set(weakref.ref(handoff))


def take(serving: ServingTemplate) -> Handoff | None:
    """The hand-off offered last in this context, for the same response template (the same loaded
    template: a :class:`ServingTemplate` is made anew per parser when the environment names the
    template) and not taken yet (it is taken: no other tool detector gets it); ``None`` otherwise."""
    ref = _OFFERED.get()
    if ref is None:
        return None
    _OFFERED.set(None)
    handoff = ref()
    if handoff is None or handoff.serving.template is not serving.template or handoff.taken:
        return None
    handoff.taken = True
    return handoff


def merge(steps: list[Step]) -> Step:
    """Several steps as one: their text, calls and parts in order (``outside`` included)."""
    if len(steps) == 1:  # the usual case: one delta per read
        return steps[0]
    merged = Step()
    for step in steps:
        merged.reasoning += step.reasoning
        merged.content += step.content
        merged.tool_calls += step.tool_calls
        merged.parts += step.parts
        merged.outside += step.outside
    return merged


class Handoff:
    """The reasoning stage's parse of one request, readable by its tool stage.

    Args:
        serving: the model's response template.
        prefix: the prompt the reasoning detector parses from (``inferred_prefix``).
    """

    def __init__(self, serving: ServingTemplate, prefix: str) -> None:
        self.serving = serving
        self.prefix = prefix
        self.taken = False  # a tool detector took it (it may still decline it on its first call)
        #: "open" (a tool stage may still claim it: the text fed and handed on is kept),
        #: "shared" (claimed: steps are queued for the tool stage), "alone" (no tool stage reads)
        self.state = "open"
        self._session: Session | None = None
        self._fed: list[str] = []  # while open: the deltas fed
        self._steps: list[Step] = []  # while open: the steps returned
        self._feeds = 0
        #: while shared: the steps the tool stage has not read are ``_queue`` then ``_next``
        self._queue: list[Step] = []
        self._next: Step | None = None
        self._reader: weakref.ref[Any] | None = None

    @property
    def session(self) -> Session:
        """The session the reasoning stage feeds (built on first use)."""
        if self._session is None:  # arguments streamed from the start, for a tool stage to come
            self._session = Session(self.serving, self.prefix, None, track_outside=True)
        return self._session

    def feed(self, text: str) -> Step:
        """Feed one delta (the reasoning stage's call)."""
        if self.state == "shared":  # the usual call: the step waits for the tool stage
            step = self._session.feed(text)  # type: ignore[union-attr]
            if self._next is None:  # the usual case: the tool stage read the step before
                self._next = step
            else:
                self._enqueue(step)
            return step
        if self.state == "open" and self._feeds:
            self._close()  # no tool stage claimed it with the first delta: none will read
        self._feeds += 1
        if self.state == "open":
            self._fed.append(text)
        session = self._session or self.session
        return self._keep(session.feed(text))

    def finish(self) -> Step:
        """End the output (the reasoning stage's call; idempotent)."""
        return self._keep(self.session.finish())

    def _keep(self, step: Step) -> Step:
        if self.state == "shared":  # the usual case once a tool stage reads
            if self._next is None:
                self._next = step
            else:
                self._enqueue(step)
            return step
        if self.state == "open":
            self._steps.append(step)
        return step

    def _enqueue(self, step: Step) -> None:
        """A step while one waits already: both wait in order, while the tool stage lives."""
        if self._reader is None or self._reader() is None:  # no tool stage reads any more
            self.state, self._next, self._queue = "alone", None, []
            return
        self._queue.append(self._next)  # type: ignore[arg-type]
        self._next = step

    def _close(self) -> None:
        self.state = "alone"
        self._fed, self._steps = [], []

    def claim(self, reader: Any, tools: list[dict[str, Any]], received: str) -> bool:
        """The tool stage's first call: share the parse if it can be shared.

        Args:
            reader: the tool detector (held weakly; steps are queued only while it lives).
            tools: the request's tools as chat tool dicts.
            received: the text the tool stage was given with this call.

        Returns:
            Whether the tool stage reads from here (then :meth:`read` it): only while the hand-off
            is open, when ``received`` is all the reasoning stage handed on so far, and when the
            session takes ``tools`` as it stands or one rebuilt with ``tools`` from the text fed so
            far stands where the first one does and handed on the same text and reasoning.
        """
        steps = self._steps
        handed = steps[0].outside if len(steps) == 1 else "".join(step.outside for step in steps)
        if self.state != "open" or handed != received:
            self._close()
            return False
        first = self.session
        if first.adopt_tools(tools):  # the usual case: the parse goes on, with the tools
            self._close()
            self._share(reader, merge(steps) if steps else Step())
            return True
        shared = Session(self.serving, self.prefix, tools, track_outside=True)
        steps = [shared.feed("".join(self._fed))]
        if first.finished:
            steps.append(shared.finish())
        replay = merge(steps)
        same = (
            replay.outside == received
            and replay.reasoning == "".join(step.reasoning for step in steps)
            and shared.position == first.position
        )
        self._close()
        if same:
            self._session = shared
            self._share(reader, replay)
        return same

    def _share(self, reader: Any, pending: Step) -> None:
        """From now on, queue each step for ``reader``; ``pending`` is what it has not read yet."""
        self.state = "shared"
        self._reader = weakref.ref(reader)
        self._queue, self._next = [], pending

    def read(self, received: str) -> Step | None:
        """The steps queued since the last read, merged, if ``received`` is the raw text they
        handed on; else ``None`` (the stages did not pass the text on as expected; nothing is
        read). Their reasoning is in the step, but the reasoning stage returned it already."""
        step = self._next
        if self._queue:
            step = merge([*self._queue, step]) if step is not None else merge(self._queue)
        elif step is None:  # nothing waits
            step = Step()
        if step.outside != received:
            return None
        self._queue, self._next = [], None
        return step

    def finish_for_reader(self) -> Step | None:
        """The tool stage's end of stream: the steps still queued, as :meth:`read` gives them but
        with their reasoning left out, then what the end decides if the reasoning stage did not
        end the output first (its reasoning kept: no stage returned it); ``None`` when steps whose
        text the tool stage never received wait (see :meth:`read`)."""
        pending = self.read("")
        if pending is None:
            return None
        pending = pending.without_reasoning()
        if self.session.finished:
            return pending
        end = self.session.finish()
        self._queue, self._next = [], None
        return merge([pending, end])
