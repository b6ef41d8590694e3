from readme_snippets import run_as_pytest, snippet


def test_readme_hooks_snippet_passes(tmp_path):
    code = snippet("### Letting your backend decide")
    assert "def test_the_backend_decides(roomd_factory, hook_server)" in code
    result = run_as_pytest(code, tmp_path, "test_readme_hooks.py")
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr
