"""The offline fact classifier: does a message state a durable fact, of what scope and kind.

Rules plus a small logistic regression, English and Korean, pure; it also picks the memory.md
section and subject key and makes relative dates absolute. Used by the extractor, chat
compression (its cues mark landmark turns) and the offline model (a section for a note).

Modules: :mod:`.cues` (cue patterns and features), :mod:`.classify` (the weights and the
decision), :mod:`.subjects` (memory.md section and subject key), :mod:`.dates` (relative dates).
"""
