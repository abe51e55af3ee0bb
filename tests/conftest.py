"""Shared by both suites: this folder is on ``sys.path`` (for ``budget``)."""

import signal

# A suite started in the background by a non-interactive shell (``cmd &``, nohup) inherits SIGINT
# ignored, and so would every server it starts: the Ctrl-C tests would then test the launcher.
# Python leaves an inherited SIG_IGN alone; restore the default so children inherit SIG_DFL.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
