"""ROC54x: OpenMM asked for a platform that AMD GPUs do not have.

One rule per module."""
