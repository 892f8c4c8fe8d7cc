"""``python -m mcl``: the ``mcl`` command (mcl.cli)."""

import sys

from mcl.cli import main

if __name__ == "__main__":     # not when a tool imports every module of the package
    sys.exit(main())
