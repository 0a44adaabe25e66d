"""Context-free helpers over source text and trees: parsing, node and position utilities, import
tables, re-exports and the shell lexer. They take text or nodes, never a rule's context."""
