"""``squad chat``: one agent in conversation in its workspace, its long history compressed
(landmarks kept, older turns summarised offline or by the model, the summary rolled forward).

Modules: :mod:`.session` (a chat's turns), :mod:`.compress` (history cut to a budget),
:mod:`.summarise` (summaries of folded turns), :mod:`.rolling` (the model's kept summary).
"""
