"""The decisions log, one home: what a squad decided, why, instead of what, who and when.

:mod:`.log` records and reads decisions (the store is the truth, ``decisions.md`` its mirror),
:mod:`.text` is the pure text of them (keys, ranking, ``decisions.md`` rendered), :mod:`.tools`
the agent's tools over the log. The rows are :mod:`squad.store.decisions`; the extractor files
a conversation's decisions through :mod:`squad.extraction.decision_filing`.
"""
