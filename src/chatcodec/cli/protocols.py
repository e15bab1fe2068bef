"""The two protocols of ``chatcodec parse``'s output: the parser it drives (:class:`StreamingParser`,
which :class:`~chatcodec.model.responses.ModelResponseParser` implements) and the views that show
its events (:class:`View`, which every view of :mod:`chatcodec.cli.view` implements).

Annotations only: :mod:`chatcodec.cli.view` imports this module for type checking, so ``chatcodec
parse`` never imports :mod:`typing` to define them.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["StreamingParser", "View"]


class StreamingParser(Protocol):
    """The one parser protocol of the command line (``ModelResponseParser`` implements it): text in
    pieces, events out, and whether an end-of-sequence token ended the generation."""

    @property
    def initial_events(self) -> list[dict[str, Any]]:
        """Events the prefix produced."""

    @property
    def ended(self) -> bool:
        """Whether the generation ended (later pieces are not output)."""

    def feed(self, step: str) -> list[dict[str, Any]]:
        """Feed the next piece of output; returns its events."""

    def finalize(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """End the generation; returns the message and the last events."""


class View(Protocol):
    """What ``chatcodec parse --stream`` drives (every view of :mod:`chatcodec.cli.view` implements
    these four)."""

    def on_event(self, event: dict[str, Any]) -> None:
        """Show one event (``region_open``, ``region_chunk`` or ``region_close``) as it arrives."""

    def flush(self) -> None:
        """Bring what the events so far show to the screen (:func:`~chatcodec.cli.view.play` calls it
        between pieces)."""

    def close(self, message: dict[str, Any]) -> None:
        """Finish the view and show the final message."""

    def abort(self) -> None:
        """Stop the view after an error, leaving the terminal usable (no message follows)."""
