import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Tools the end-to-end tests need must be there when CI says so.
REQUIRE = os.environ.get("LOOPGUARD_REQUIRE_TOOLS") == "1"
