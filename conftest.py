"""Suite-wide pytest configuration.

Hypothesis profiles (ci / dev / thorough, chosen by HYPOTHESIS_PROFILE), one torch thread per
xdist worker, the `device` fixture and the audit hooks live in `properties/plugin.py` (an
entry-point plugin, inert unless asked for), turned on by `-p properties.plugin` in pyproject.toml,
so that a conjecture file anywhere on disk gets the same setup.  This file only adds collection
of the per-paper property modules (of every paper package: found, never listed).
"""

import pytest

from properties.registry import HARNESS_MODULES as _NOT_PROPERTIES

# Per-paper property modules (properties/joma.py, ...) are collected although their names do
# not start with test_; the harness modules are not.


def pytest_collect_file(file_path, parent):
    if (file_path.suffix == ".py" and file_path.parent.name == "properties"
            and file_path.parent.parent == parent.config.rootpath
            and file_path.stem not in _NOT_PROPERTIES and not file_path.name.startswith("test_")
            and not parent.session.isinitpath(file_path)):  # named on the command line: pytest collects it itself
        return pytest.Module.from_parent(parent, path=file_path)
    return None


