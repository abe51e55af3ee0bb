"""Reading a file (DESIGN §10, §11): the cheap pre-scan and its second look, decoding, the gate
(CPython's parser first: what it rejects is FL000), and the per-file pipeline — read → pre-scan → gate
→ parse once → ``facts.extract`` — run in isolated worker processes, with the per-file cache.

Imports ``base``, ``discovery``, ``config``, ``memo`` and ``facts``."""
