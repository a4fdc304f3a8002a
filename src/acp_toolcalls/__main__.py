"""``python -m acp_toolcalls``: the same as the ``acp-toolcalls`` console script."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
