"""The packages to install are derived, never listed: every package under ``migrator/`` and the
rule catalog under ``rules/``, installed as ``migrator.rules`` (a new rule family needs only its
folder). Everything else about the build is in ``pyproject.toml``."""

from setuptools import find_namespace_packages, setup

# Namespace packages, so that data folders (``migrator/data``, ``rules/data``) are packages of
# their own and setuptools does not warn that they are absent from the configuration.
_SKIP = ["*__pycache__*", "*.egg-info*"]

setup(
    packages=[
        *find_namespace_packages(include=["migrator", "migrator.*"], exclude=_SKIP),
        "migrator.rules",
        *(f"migrator.rules.{name}" for name in find_namespace_packages("rules", exclude=_SKIP)),
    ]
)
