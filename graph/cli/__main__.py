"""``python -m graph.cli``: the ``vectree`` command."""

import sys

from graph.cli.commands import main

sys.exit(main())
