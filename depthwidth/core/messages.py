"""Typed messages: the warnings and notes of a plan, a config's assumptions, a fit's verdict. Each
carries what it says (``kind``), the values it names (``fields``) and the sentence people read (``text``).

A ``Message`` is its text (a ``str``): JSON, CSV and stderr print the sentence as before, and
code that only shows messages needs nothing else. Code that selects messages reads ``kind`` and
``fields`` instead of searching the sentence: ``fields["shape"]`` names which of a plan's shapes a
message concerns, ``"threshold"`` (the minimal-depth shape) or ``"recommended"``, or is absent for
the plan as a whole (``cli/commands/plan.py`` prints a message under ``--field`` by it); ``inspect``
prints a config's ``"assumed"`` notes on stderr, and ``fit``'s table words its ``"no-law"`` note itself.
Made where it happens; in ``core`` because every layer that says something (``hf``, ``advice``, ``loop``) does.
"""
from __future__ import annotations

# what a message says, one word each: a plan's warnings, then its notes, then the notes other commands select
WARNING_KINDS = ("off-budget", "past-evidence", "outside-band", "rule-clamped", "pipeline-imbalance", "pipeline-deepened",
                 "multiple-above-width", "unsharded", "guard")
NOTE_KINDS = ("threshold", "position-table", "past-threshold", "consensus", "rule", "rule-file", "band", "deep-stack",
              "on-threshold", "tokens-assumed", "gpus-assumed", "over-memory", "pipeline-shallow", "left-out", "loss-model",
              "days", "smallest-cluster", "no-cluster")
KINDS = WARNING_KINDS + NOTE_KINDS + ("assumed", "no-law")


class Message(str):
    """A message: the text, with ``kind`` (one of ``KINDS``) and ``fields`` (a dict of what it names)."""

    def __new__(cls, kind: str, text: str, **fields):
        if kind not in KINDS:
            raise ValueError(f"message kind {kind!r} is not one of {', '.join(KINDS)}")
        message = super().__new__(cls, text)
        message.kind, message.fields = kind, fields
        return message

    @property
    def text(self) -> str:
        return str.__str__(self)

    def __reduce__(self):
        return _rebuild, (self.kind, self.text, self.fields)


def _rebuild(kind: str, text: str, fields: dict) -> Message:
    return Message(kind, text, **fields)


def concerns(message: str) -> str | None:
    """The plan shape a message concerns ("threshold", "recommended"), or None: the whole plan (or a plain string)."""
    return getattr(message, "fields", {}).get("shape")
