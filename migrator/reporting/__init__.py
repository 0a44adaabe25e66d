"""Renderers: every output format reads the same ScanResult list."""
