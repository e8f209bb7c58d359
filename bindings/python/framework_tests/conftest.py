"""The adapters' tests against the real frameworks and the real SmolLM2-135M model. They run in
the frameworks' environment (scripts/install-frameworks.sh), started by tests/frameworks.rs;
the package's other tests (../tests) need none of it."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
