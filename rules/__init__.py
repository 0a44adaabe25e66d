"""The rule catalog, installed as ``migrator.rules``; each module is one rule family."""
