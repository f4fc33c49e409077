"""Choice points: every nondeterministic decision of a run is asked of a :class:`Chooser`.

* :class:`ScriptedChooser` replays recorded answers (trace replay, exhaustive DFS prefixes).
* :class:`HypothesisChooser` draws answers from hypothesis' data, so failures shrink: index 0 is
  always the least surprising option (step the first runnable actor), and hypothesis shrinks
  towards it.
* :class:`FirstChooser` always takes option 0 (the fault-free, in-order schedule).

Nothing in the model calls ``random``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # test machinery: hypothesis is imported only when a test draws from it
    from hypothesis.strategies import DataObject


class Chooser(Protocol):
    def choose(self, label: str, options: Sequence[str]) -> int:
        """Pick one of ``options`` (their descriptions, for traces); return its index."""
        ...


class FirstChooser:
    def choose(self, label: str, options: Sequence[str]) -> int:
        return 0


class ScriptedChooser:
    """Answer from a recorded list; past its end, defer to ``then`` (default: option 0)."""

    def __init__(self, answers: Sequence[int], then: Chooser | None = None) -> None:
        self.answers = list(answers)
        self.position = 0
        self.then = then or FirstChooser()

    def choose(self, label: str, options: Sequence[str]) -> int:
        if self.position < len(self.answers):
            answer = self.answers[self.position]
            self.position += 1
            if not 0 <= answer < len(options):
                raise ValueError(f"scripted answer {answer} out of range for {label}: {options}")
            return answer
        self.position += 1
        return self.then.choose(label, options)


class HypothesisChooser:
    """Draw each answer from hypothesis ``data`` (``st.data()``), so runs shrink."""

    def __init__(self, data: DataObject) -> None:
        from hypothesis import strategies as st  # test machinery: imported only when used

        self._data = data
        self._st = st

    def choose(self, label: str, options: Sequence[str]) -> int:
        if len(options) == 1:
            return 0
        return self._data.draw(self._st.integers(0, len(options) - 1), label=label)


class RecordingChooser:
    """Another chooser's answers, kept in ``taken`` (so a run it drove can be replayed)."""

    def __init__(self, inner: Chooser) -> None:
        self.inner = inner
        self.taken: list[int] = []

    def choose(self, label: str, options: Sequence[str]) -> int:
        index = self.inner.choose(label, options)
        self.taken.append(index)
        return index


class SteeredChooser:
    """A schedule written as patterns over move descriptions, for showing one run on purpose.

    ``once``: regexes taken in order, each as soon as an option matches it; otherwise the first
    option matching the highest-priority ``prefer`` regex; otherwise option 0 (the plain in-order
    schedule).  ``taken`` lists the ``once`` moves made; ``unmet`` those never possible."""

    def __init__(self, once: Sequence[str] = (), prefer: Sequence[str] = ()) -> None:
        import re

        self.once = [re.compile(p) for p in once]
        self.prefer = [re.compile(p) for p in prefer]
        self.taken: list[str] = []

    @property
    def unmet(self) -> list[str]:
        return [p.pattern for p in self.once]

    def choose(self, label: str, options: Sequence[str]) -> int:
        if self.once:
            for i, option in enumerate(options):
                if self.once[0].search(option):
                    self.once.pop(0)
                    self.taken.append(option)
                    return i
        for pattern in self.prefer:
            for i, option in enumerate(options):
                if pattern.search(option):
                    return i
        return 0
