"""The adapters' tests against the real frameworks and the real SmolLM2-135M model. They run in
the frameworks' environment (scripts/install-frameworks.sh), started by tests/frameworks.rs;
the package's other tests (../tests) need none of it."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Tools the tests need must be there when CI says so.
REQUIRE = os.environ.get("LOOPGUARD_REQUIRE_TOOLS") == "1"


def require(*modules, paths=()):
    """Skips the calling module (fails it under LOOPGUARD_REQUIRE_TOOLS=1) when a module or a
    path is missing."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    missing += [str(p) for p in paths if not Path(p).exists()]
    if missing:
        message = f"{', '.join(missing)} missing: run scripts/install-frameworks.sh"
        if REQUIRE:
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)
