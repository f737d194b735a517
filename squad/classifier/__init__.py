"""The offline fact classifier: does a chat message state a durable fact, of which scope,
section and subject, with relative dates made absolute (rules plus a small logistic
regression, English and Korean). Pure; used by the extractor, chat compression and the
offline model.

Modules: :mod:`.cues` (cue patterns and features), :mod:`.classify` (the weights and the
decision), :mod:`.subjects` (memory.md section and subject key), :mod:`.dates` (relative dates).
"""
