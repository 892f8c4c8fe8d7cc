"""``python -m mcl``: the ``mcl`` command (mcl.cli)."""

import sys

from mcl.cli import main

sys.exit(main())
