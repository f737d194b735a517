"""Text primitives every layer shares: token counts, credentials found and refused, line search
with grep semantics, and the words of the lexical index. Pure (tokenizer files aside)."""
