"""One ``chatcodec doctor`` finding, and how it prints.

The JSON form (``chatcodec doctor --json``) is ``{"check", "severity", "message", "line",
"conversation"}``: ``check`` names what found it (:data:`CHECKS`), ``severity`` is ``error`` (the
template is wrong), ``warning`` (it works here but breaks somewhere real: another engine, a reused
KV cache, a caller's argument form) or ``info``; ``line`` is the chat template's line (or
``null``); ``conversation`` is the render input that shows it (``{"messages", "tools",
"add_generation_prompt", "kwargs"}``), or ``null`` for findings read from the text alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CHECKS", "SEVERITIES", "Finding"]

#: The checks, in the order ``chatcodec doctor`` runs them.
CHECKS = ("lint", "round-trip", "prefix-stability", "tool-call-forms", "cross-engine:minijinja",
          "cross-engine:hf-jinja")

#: Severities, most serious first.
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """What one check found.

    Attributes:
        check: one of :data:`CHECKS`.
        severity: one of :data:`SEVERITIES`.
        message: what is wrong, why it matters and what to change.
        line: the chat template line, or ``None``.
        conversation: the render input that shows it, or ``None``.
    """

    check: str
    severity: str
    message: str
    line: int | None = None
    conversation: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.check not in CHECKS:
            raise ValueError(f"Finding: unknown check {self.check!r}; one of {', '.join(CHECKS)}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"Finding: unknown severity {self.severity!r}; one of {', '.join(SEVERITIES)}")

    def to_json(self) -> dict[str, Any]:
        """The finding as ``chatcodec doctor --json`` prints it."""
        return {"check": self.check, "severity": self.severity, "message": self.message, "line": self.line,
                "conversation": self.conversation}

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{self.severity} [{self.check}] {where}{self.message}"
