"""tiny_llm: minimal causal LM used by the TensorRT/PyCUDA serving prototype."""

from .model import TinyCausalLM

__all__ = ["TinyCausalLM"]
