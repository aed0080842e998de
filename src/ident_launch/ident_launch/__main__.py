"""Entry point of ``python -m ident_launch``: the ``ident_launch`` command (see ``cli``)."""

import sys

from .cli import main

sys.exit(main())
