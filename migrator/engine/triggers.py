"""Which of many trigger strings occur in a text, searching the text fewer times.

The prefilter asks, for every file, which of about 130 trigger strings occur in it; one substring
search per trigger reads the whole text each time. A trigger that contains another one
(``import xformers`` contains ``xformers``, ``cuda.amp`` contains ``cuda``) can only occur where
that one does, so it is searched for only in texts holding it: the answer is the same set, and
most files hold none of the short triggers at the roots.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TriggerSearch:
    """Triggers arranged so that each is searched only where a trigger it contains occurs."""

    #: triggers that contain no other trigger: searched in every text
    roots: tuple[str, ...]
    #: trigger -> the triggers searched next when it occurs (each contains it)
    children: dict[str, tuple[str, ...]]

    @classmethod
    def build(cls, triggers: Iterable[str]) -> TriggerSearch:
        """Each trigger hangs under the longest other trigger it contains (the rarest, as a
        rule); one that contains none is a root."""
        unique = sorted(set(triggers))
        children: dict[str, list[str]] = {}
        roots: list[str] = []
        for trigger in unique:
            inside = [other for other in unique if other != trigger and other in trigger]
            if inside:
                parent = max(inside, key=lambda other: (len(other), other))
                children.setdefault(parent, []).append(trigger)
            else:
                roots.append(trigger)
        return cls(tuple(roots), {key: tuple(value) for key, value in children.items()})

    def present(self, text: str) -> set[str]:
        """Every trigger that occurs in ``text`` (``{t for t in triggers if t in text}``)."""
        found: set[str] = set()
        pending = [trigger for trigger in self.roots if trigger in text]
        while pending:
            trigger = pending.pop()
            found.add(trigger)
            pending.extend(child for child in self.children.get(trigger, ()) if child in text)
        return found
