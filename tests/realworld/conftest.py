"""The ``run`` fixture of the real-world scenarios (see realworld_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from realworld_helpers import runner  # noqa: E402

run = pytest.fixture()(runner)
