"""What a raised builtin exception becomes for the model, shared by FL300 (where the model loses or
misreads it) and FL309 (an author's guard sent verbatim but declared nowhere), DESIGN §13.3."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

from fusion_lint.facts.frameworks import Framework
from fusion_lint.facts.model import Raise
from fusion_lint.project.view import FunctionView, ResolvedDefinition
from fusion_lint.rules._shared import by_framework, caught_by, escapes_to

BUILTIN_EXCEPTIONS = frozenset(
    {
        "Exception",
        "RuntimeError",
        "ValueError",
        "KeyError",
        "LookupError",
        "OSError",
        "IOError",
        "PermissionError",
        "FileNotFoundError",
        "TimeoutError",
        "ConnectionError",
    }
)

#: A placeholder of ``Raise.sentence`` (``<invoice_id>``): what is left without them is the author's.
_HOLE = re.compile(r"<[^<>]*>")
_UNKNOWN_TOOL = re.compile(r"\s*unknown tool\b", re.I)


@dataclass(frozen=True, slots=True)
class Reaching:
    """One group of definitions a builtin raise escapes to, alike in what their framework makes of it."""

    framework: Framework
    masked: bool  # the server masks exceptions it did not raise (fastmcp ``mask_error_details=True``)
    guarded: bool  # under ``@contract``: the runtime masks it as INTERNAL_ERROR
    subjects: list[ResolvedDefinition]
    kind: str  # "tool", "resource" or "prompt"

    @property
    def loses_the_text(self) -> bool:
        """The model (or, for a resource or a prompt, the client) gets a masked error whatever the text
        says (DESIGN §12.2: MCPServer masks a tool's, not a prompt's; a resource's JSON-RPC error has none)."""
        if self.guarded or (self.framework == "fastmcp" and self.masked):
            return True
        if self.kind != "tool":
            return self.framework == "mcp2" and self.kind == "resource"
        return self.framework in ("mcp2", "mcp_fusion", "lowlevel2")


def builtin_raises(function: FunctionView) -> Iterator[tuple[Raise, list[Reaching]]]:
    """Each raise of a builtin exception in ``function`` that no enclosing ``try`` of it catches,
    with the groups of definitions it escapes to (a resource's or a prompt's apart from a tool's:
    the framework answers those with a JSON-RPC error, not a result)."""
    for site in function.function.raises:
        if site.kind not in ("call", "name") or site.exception not in BUILTIN_EXCEPTIONS:
            continue
        if caught_by(site.tries, site.exception):
            continue  # an enclosing try of this function catches it and does not re-raise it
        if is_the_protocols(site):
            continue
        groups = []
        for framework, masked, guarded, subjects in by_framework(escapes_to(function, site.exception)):
            for kind in ("tool", "resource", "prompt"):
                members = [d for d in subjects if d.kind == kind]
                if members:
                    # Definition.framework is a plain str in the facts; its values are Framework's.
                    groups.append(Reaching(cast(Framework, framework), masked, guarded, members, kind))
        if groups:
            yield site, groups


def unreadable_text(site: Raise) -> str | None:
    """Why the text a framework sends verbatim is no sentence the model can act on, or None when it
    reads as one. Only two shapes are: no message at all, and ``KeyError``'s quoted key. A message
    re-wrapping a caught exception's text, or held in a variable, was measured on the corpus (issue
    31's judged sample: 19 of 30 low value, 10 false) and reads as a sentence the model can act on
    (``Failed to list collections: Collection x does not exist``, a literal set on the line above):
    an undeclared failure, which FL208 drafts, not a loss."""
    if site.kind == "name" or site.message is None:
        return "it carries no message"
    if site.exception == "KeyError" and not (_has_words(site.sentence) or _has_words(site.text)):
        return "KeyError's text is the quoted key, not a sentence"
    return None


def written_here(site: Raise) -> bool:
    """The message is the author's own sentence: literal words (an f-string's around the values it
    names), or one ``UPPER_CASE`` constant, and nothing of a caught exception's text."""
    parts = site.message.parts if site.message is not None else ()
    caught = {clause.name for clause in site.clauses if clause.name}
    if any(_reads(part, caught) for part in parts):
        return False
    constant = len(parts) == 1 and parts[0][0] == "name" and parts[0][1].rpartition(".")[2].isupper()
    return constant or _has_words(site.sentence) or _has_words(site.text)


def is_the_protocols(site: Raise) -> bool:
    """``raise ValueError(f"Unknown tool: {name}")``: a low-level dispatcher's answer to a name it does
    not serve, which MCP answers with a JSON-RPC error (the model cannot call a tool it was not listed)."""
    return bool(site.sentence and _UNKNOWN_TOOL.match(site.sentence))


def _reads(part: tuple[str, str, str | None], names: set[str]) -> bool:
    """Whether one part of a message's ``Uses`` reads one of ``names`` (``e``, ``e.args``, ``str(e)``)."""
    _, used, argument = part
    return any(
        value is not None and (value == name or value.startswith(name + "."))
        for value in (used, argument)
        for name in names
    )


def _has_words(text: str | None) -> bool:
    return text is not None and any(character.isalpha() for character in _HOLE.sub("", text))
