""" "Did you mean" for names (FL401's tool suggestions) without comparing every name with every token.

``difflib`` over every tool of the project for every unknown token is quadratic in the size of a
project (3,000 modules: 24,000 tools, a few hundred findings). A close match shares most of its
character trigrams with the token, so candidates come from a trigram index — rarest trigrams first,
within a budget of postings read — and only the few that share the most are compared with
``difflib``, with the same length window and cutoff as before. Each token is answered once.
"""

from __future__ import annotations

import difflib
import heapq
from collections import Counter
from collections.abc import Iterable

#: A typo keeps about the length: only names within this many characters are compared.
LENGTH_WINDOW = 3
CUTOFF = 0.75
#: How many of the best-sharing candidates ``difflib`` compares.
CANDIDATES = 64
#: Postings read per token beyond the rarest trigram: common trigrams (``get``, ``_id``) are read
#: only while they fit, so a token costs about the same in a project of 300 or 30,000 names.
POSTINGS_BUDGET = 8192


def _trigrams(name: str) -> set[str]:
    padded = f"\0{name}\0"
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class NameIndex:
    """The names (sorted, as ``difflib`` saw them before) and their trigram postings."""

    def __init__(self, names: Iterable[str]):
        self.names = sorted(set(names))
        self.postings: dict[str, list[int]] = {}
        for number, name in enumerate(self.names):
            for gram in _trigrams(name):
                self.postings.setdefault(gram, []).append(number)
        self._answers: dict[str, str | None] = {}

    def close_match(self, token: str) -> str | None:
        """The closest name ``difflib`` accepts (ratio ≥ 0.75, length within 3), or None."""
        if token not in self._answers:
            self._answers[token] = self._close_match(token)
        return self._answers[token]

    def candidates(self, token: str) -> list[str]:
        """The names sharing the most trigrams with ``token`` (at most ``CANDIDATES``, ties kept
        in name order), within the length window."""
        grams = _trigrams(token)
        lists = sorted((self.postings[g] for g in grams if g in self.postings), key=len)
        shared: Counter[int] = Counter()
        read = 0
        for number, posting in enumerate(lists):
            if number and read + len(posting) > POSTINGS_BUDGET:
                break
            shared.update(posting)
            read += len(posting)
        # Ranked by the trigrams' Dice coefficient (a trigram set has len + 2 members, padding included).
        near = [
            (2 * count / (len(grams) + len(self.names[n]) + 2), -n)
            for n, count in shared.items()
            if abs(len(self.names[n]) - len(token)) <= LENGTH_WINDOW
        ]
        best = heapq.nlargest(CANDIDATES, near)
        return [self.names[-n] for _, n in sorted(best, key=lambda pair: -pair[1])]

    def _close_match(self, token: str) -> str | None:
        close = difflib.get_close_matches(token, self.candidates(token), n=1, cutoff=CUTOFF)
        return close[0] if close else None
