import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
from readme_snippets import run_as_pytest, snippet  # noqa: E402


def test_readme_browser_snippet_passes(tmp_path):
    code = snippet("### From the browser")
    assert "/client/" in code and "def test_browser_guest(roomd)" in code
    result = run_as_pytest(code, tmp_path, "test_readme_browser.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr
