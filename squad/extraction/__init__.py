"""The background memory extractor: facts pulled from conversations into Layer A and Layer B.

Every ``trigger_interval`` turns of an agent, a background job reads the agent's new messages
(past its watermark), extracts facts (one model call, or the offline classifier when no model
is configured), drops junk, merges duplicates, supersedes contradicted facts, and writes project
facts to ``memory.md`` and experiential ones to the agent's Layer A namespace.

Modules: :mod:`.candidates` (what an extractor proposes), :mod:`.quality` (the pure decisions),
:mod:`.model_answer` and :mod:`.prompt` (the model call's schema and request), :mod:`.models`
(which model extracts), :mod:`.extract` (offline or model extraction of one batch),
:mod:`.lines` (memory.md fact lines), :mod:`.apply` (writes), :mod:`.job` (one agent's pass),
:mod:`.background` (the trigger and the worker thread), :mod:`.transcript` (files for
``squad memory extract``).
"""
