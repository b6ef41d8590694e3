import re

from readme_snippets import README, run_as_pytest, snippet


def test_readme_python_snippet_passes(tmp_path):
    code = snippet("### From Python")
    assert "def test_guest_call_in(roomd)" in code
    result = run_as_pytest(code, tmp_path, "test_readme_python.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


def test_readme_test_mode_snippet_passes(tmp_path):
    code = snippet("### Testing guest call-in without sleeping (test mode)")
    assert "roomd.advance(" in code
    result = run_as_pytest(code, tmp_path, "test_readme_test_mode.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


def test_readme_feed_snippet_passes(tmp_path):
    code = snippet("### The audience feed, without a WebSocket")
    assert "async for span in reader" in code
    result = run_as_pytest(code, tmp_path, "test_readme_feed.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


def test_readme_webhook_sink_snippet_passes(tmp_path):
    text = README.read_text()
    match = re.search(r"<!-- webhook-sink -->\s*```python\n(.*?)```", text, re.S)
    assert match, "no <!-- webhook-sink --> block in README.md"
    result = run_as_pytest(match.group(1), tmp_path, "test_readme_webhooks.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


def test_readme_lifecycle_snippet_passes(tmp_path):
    code = snippet("### A show that outlives its connections")
    assert "def test_the_show_outlives_its_connections(roomd_factory, tmp_path)" in code
    result = run_as_pytest(code, tmp_path, "test_readme_lifecycle.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr
