"""`python -m referee`: the same command line as `referee`."""

import sys

from .cli import main

sys.exit(main())
