"""Emulated ROCm environment injected into smoke-test subprocesses."""
