"""``squad chat``: one agent in conversation, its long history compressed and summarised.

Landmark turns stay verbatim, older ones fold into a summary (offline, or the model's, kept
and rolled forward). Modules: :mod:`.session` (a chat's turns), :mod:`.compress` (history cut
to a budget), :mod:`.summarise` (summaries of folded turns), :mod:`.rolling` (the kept one).
"""
