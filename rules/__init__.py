"""The rule catalog, installed as ``migrator.rules``; each package is one rule family, with one
rule per module (``docs/contributing/adding-a-rule.md``)."""
