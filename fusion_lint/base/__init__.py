"""What every stage may use, and nothing else: the results' data model (spans, edits, fixes,
diagnostics), module names from file paths, touching one file safely (bounded reads of regular files,
writes that keep owner, group and mode), and memory management while a run allocates in bulk.

Imports nothing of ``fusion_lint`` outside itself."""
