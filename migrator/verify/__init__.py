"""Verification of migrated projects."""
