"""Fix builders that need more than one span: kept out of the rules so each rule stays small."""
from __future__ import annotations

from typing import Optional, Sequence

from .diagnostics import Edit, Fix
from .model import Construction, FileFacts


def _is_runtime(qname: str, runtime_modules: Sequence[str]) -> bool:
    return any(qname == m or qname.startswith(m + ".") for m in runtime_modules)


def factory_fix(
    facts: Optional[FileFacts], made: Construction, factory: str, runtime_modules: Sequence[str]
) -> Optional[Fix]:
    """FL301: ``McpError(JsonRpcErrorCode.X, msg)`` → ``x(msg)``, referring to the factory the way
    the file already refers to the runtime (an imported name, a module alias, or a new name added
    to its ``from <runtime> import ...``)."""
    if facts is None or made.code_span is None:
        return None
    edits: list[Edit] = []
    reference = None
    for local, qname in sorted(facts.imports.items()):
        if qname.rpartition(".")[2] == factory and _is_runtime(qname, runtime_modules):
            reference = local
            break
    if reference is None:
        for local, qname in sorted(facts.imports.items()):
            if qname in runtime_modules or qname in {f"{m}.errors" for m in runtime_modules}:
                reference = f"{local}.{factory}"
                break
    if reference is None:
        if facts.runtime_import is None:
            return None
        _, last = facts.runtime_import
        edits.append(Edit(last.end, last.end, f", {factory}"))
        reference = factory
    if made.next_arg_span is not None:
        edits.append(Edit(made.func_span.start, made.next_arg_span.start, f"{reference}("))
    else:
        edits.append(Edit(made.func_span.start, made.span.end, f"{reference}()"))
    return Fix(f"Use {factory}(...)", edits, "safe")
