"""The Python kit as a user installs it: `python -m build` makes a wheel and an sdist, and the
README's harness example passes in a fresh venv with only the wheel (no checkout on its paths)."""
import filecmp
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from readme_snippets import snippet

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parents[1]


def test_the_packaged_template_is_the_shipped_one():
    assert filecmp.cmp(PACKAGE / "roomd" / "roles.json", REPO / "config" / "roles.json", shallow=False), \
        "clients/python/roomd/roles.json must be a copy of config/roles.json: cp config/roles.json clients/python/roomd/"


def test_roomd_config_and_a_missing_one(monkeypatch, tmp_path):
    from roomd import find_config
    template = tmp_path / "roles.json"
    template.write_text("{}")
    monkeypatch.setenv("ROOMD_CONFIG", str(template))
    assert find_config() == str(template)
    assert find_config("/given.json") == "/given.json", "config= wins"
    monkeypatch.setenv("ROOMD_CONFIG", str(tmp_path / "nope.json"))
    try:
        find_config()
        raise AssertionError("a missing ROOMD_CONFIG passed")
    except FileNotFoundError as error:
        assert "ROOMD_CONFIG=" in str(error) and "no such file" in str(error)


def test_a_wheel_in_a_fresh_venv_runs_the_readme_example(tmp_path):
    dist = tmp_path / "dist"
    source = tmp_path / "source"  # a copy: setuptools leaves build/ and *.egg-info/ in the tree it builds
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    build = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel",
                            "--outdir", str(dist), str(source)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    wheel = next(dist.glob("roomd-*.whl"))
    sdist = next(dist.glob("roomd-*.tar.gz"))
    assert "roomd/roles.json" in zipfile.ZipFile(wheel).namelist()
    assert any(name.endswith("roomd/roles.json") for name in tarfile.open(sdist).getnames())

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", str(wheel),
                          "pytest"], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stdout + pip.stderr

    # Outside the checkout: the binary from ROOMD_BIN, the template from inside the package.
    work = tmp_path / "user-project"
    work.mkdir()
    (work / "test_readme_python.py").write_text(snippet("### From Python"))
    environment = {key: value for key, value in os.environ.items() if key not in ("ROOMD_CONFIG", "PYTHONPATH")}
    environment["ROOMD_BIN"] = os.environ.get("ROOMD_BIN") or str(REPO / ".build" / "debug" / "roomd")
    run = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                         cwd=work, capture_output=True, text=True, timeout=120, env=environment)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import roomd.process as p; print(p.find_config())"],
                           cwd=work, capture_output=True, text=True, env=environment)
    assert where.stdout.strip().startswith(str(venv)), "the template came from the installed package"
