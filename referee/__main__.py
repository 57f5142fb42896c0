"""`python -m referee`: the same command line as `referee`."""

import sys

from referee.cli import main

sys.exit(main())
