"""Runs a README code block verbatim as a pytest file: the README shows exactly what is tested."""
import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "README.md"


def snippet(heading: str) -> str:
    """The first ```python block after the README heading `heading`."""
    text = README.read_text()
    start = text.index(heading + "\n")
    match = re.compile(r"```python\n(.*?)```", re.S).search(text, start)
    assert match, f"no python block under {heading!r} in {README}"
    return match.group(1)


def run_as_pytest(code: str, directory: Path, name: str) -> subprocess.CompletedProcess:
    path = directory / name
    path.write_text(code)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                          cwd=directory, capture_output=True, text=True, timeout=120, env=dict(os.environ))
