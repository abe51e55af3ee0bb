"""The per-file facts: what the code is (DESIGN §2.1). ``extract`` turns a libcst module into ``FileFacts``."""
