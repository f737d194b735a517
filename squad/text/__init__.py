"""Text primitives every layer shares: token counts, secrets, line search, lexical words.

Pure, tokenizer files aside: :mod:`.tokens` (counts with the model's tokenizer, offline),
:mod:`.secrets` (credentials found, redacted, refused), :mod:`.search` (grep-like line search
with highlights), :mod:`.lexical` (the words and BM25 weights of the experiential index),
:mod:`.natural` (names sorted with their numbers counted: ``plan-999.md`` before
``plan-1000.md``), :mod:`.chatter` (a model's acknowledgements, boilerplate, tool receipts,
refusals, fixed phrases and restatements, told apart from what may be a fact).
"""
