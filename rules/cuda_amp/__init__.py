"""ROC52x: ``torch.cuda.amp`` (deprecated aliases) → ``torch.amp`` with device ``"cuda"``.

One rule per module."""
