from readme_snippets import run_as_pytest, snippet


def test_readme_moderation_snippet_passes(tmp_path):
    code = snippet("### Moderating a live chat")
    assert "def test_moderating_a_live_chat(roomd)" in code
    result = run_as_pytest(code, tmp_path, "test_readme_moderation.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr
