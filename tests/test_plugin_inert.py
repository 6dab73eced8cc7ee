"""The pytest plugin is registered by entry point (`pytest11`) and is inert in a project that does
not ask for the audit (issue 21): its options exist, but it adds no fixture, loads no Hypothesis
profile, sets no thread count and prints no header.  Asked for (`--theorem-audit`), it acts.

The entry point is the one pyproject.toml declares, installed here as a throwaway distribution
on PYTHONPATH, so the test does not depend on how this checkout was installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

UNRELATED_TEST = '''
import os

import pytest
from hypothesis import settings


def test_the_audit_plugin_is_loaded_but_inert(request):
    pm = request.config.pluginmanager
    assert pm.get_plugin("properties.plugin") is not None        # loaded by its entry point
    assert request.config.getoption("--audit-raw") is None       # its options exist
    assert "OMP_NUM_THREADS" not in os.environ                   # no thread setting
    # no Hypothesis profile of ours: the one Hypothesis picks by itself ("ci" where $CI is set)
    assert settings.get_current_profile_name() == os.environ["EXPECTED_HYPOTHESIS_PROFILE"]
    assert pm.get_plugin("theorem-audit-fixtures") is None       # no fixtures
    with pytest.raises(pytest.FixtureLookupError):
        request.getfixturevalue("world")


@pytest.fixture
def device():                                                    # the project's own fixture
    return "mine"


def test_own_fixture_wins(device):
    assert device == "mine"
'''

ASKED_TEST = '''
def test_the_audit_fixtures_exist(world, device):
    import os

    from hypothesis import settings

    from properties import world as w
    assert world is w.WORLD_PLACEHOLDER
    assert settings._current_profile in ("ci", "dev", "thorough")
    assert os.environ["OMP_NUM_THREADS"] == "1"
'''


def _entry_point_dist(site: Path):
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    dist = site / "theorem_audit_entrypoint-0.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: theorem-audit-entrypoint\n"
                                   "Version: 0.0\n")
    (dist / "entry_points.txt").write_text(
        "[pytest11]\n" + "".join(f"{k} = {v}\n" for k, v in eps["pytest11"].items()))


def _hypothesis_own_profile(env: dict) -> str:
    """The profile Hypothesis loads by itself in this environment, with no plugin involved
    (since Hypothesis 6.1xx its `ci` profile where a CI variable such as $CI is set, else
    `default`): what an inert plugin must leave in place."""
    r = subprocess.run([sys.executable, "-c",
                        "from hypothesis import settings; "
                        "print(settings.get_current_profile_name())"],
                       env=env, capture_output=True, text=True, timeout=120, check=True)
    return r.stdout.strip()


def _pytest(project: Path, site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "HYPOTHESIS_PROFILE",
                        "PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    env["EXPECTED_HYPOTHESIS_PROFILE"] = _hypothesis_own_profile(env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def test_the_plugin_is_inert_in_an_unrelated_project(tmp_path):
    site, project = tmp_path / "site", tmp_path / "project"
    _entry_point_dist(site)
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (project / "test_unrelated.py").write_text(UNRELATED_TEST)
    r = _pytest(project, site, "test_unrelated.py")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "2 passed" in r.stdout
    assert "audit:" not in r.stdout  # neither the header nor the summary line


def test_the_plugin_acts_when_asked(tmp_path):
    site, project = tmp_path / "site", tmp_path / "project"
    _entry_point_dist(site)
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (project / "test_asked.py").write_text(ASKED_TEST)
    r = _pytest(project, site, "test_asked.py", "--theorem-audit")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "1 passed" in r.stdout
