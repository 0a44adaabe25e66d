"""A package whose modules import optional helpers through one module (diffusers-shaped)."""
