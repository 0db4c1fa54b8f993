"""``python -m errorkb.cli``: the same as the ``kb`` command."""

import sys

from errorkb.cli.main import main

sys.exit(main())
