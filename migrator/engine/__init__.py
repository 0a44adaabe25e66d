"""Running rules over a project: the registry, the per-file engine (partial parses, triggers,
suppressions, aggregation), the runner and its worker isolation, and applying fixes under the
fix policy (imports placed, ROCm variants written)."""
