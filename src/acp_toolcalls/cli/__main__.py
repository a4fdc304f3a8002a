"""``python -m acp_toolcalls.cli``: the same as the ``acp-toolcalls`` console script."""

from __future__ import annotations

import sys

from . import main

sys.exit(main())
