"""The rule phase and the run (DESIGN §2.1): which rules run (selection), each file's scope,
the rules over the resolved project (``checking``), per-file ignores, suppressions, and the run itself
in named steps (``engine``), with the reuse of the rules' findings between runs.

Imports every stage before it: ``base``, ``discovery``, ``config``, ``memo``, ``facts``, ``source``,
``project``, ``rules``."""
