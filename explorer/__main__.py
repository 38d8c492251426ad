"""`python -m explorer ...`: the same command line as `bfs4k`."""
import sys

from .ui.cli import main

sys.exit(main())
