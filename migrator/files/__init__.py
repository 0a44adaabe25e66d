"""The user's files: finding what to scan, reading it within bounds, the project's settings, the
one write policy, and the result cache. Nothing here knows about CUDA or rules."""
