"""ROC40x: flash-attn and transformers' FlashAttention switches (category ``flash-attn``), one
rule per module. The mapping tables live in ``rules/data/attention.toml``."""
