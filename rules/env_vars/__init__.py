"""ROC70x/ROC71x: CUDA environment variables in Python code (ROC70x) and in shell, Docker,
compose and CI files (ROC71x), one rule per module. The variable table lives in
``rules/data/env_vars.toml``."""
