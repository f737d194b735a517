"""Agents' layered memory: boot files, memory.md, Layer A facts, the prompt's memory block.

Also their safe writes (with duplicate lines left out, :mod:`.dedupe`, and a full memory.md
folded into the daily log, :mod:`.fold`), ranking, search, the agents' memory tools (and what
``memory_read`` shows, :mod:`.reading`), consolidation (gc), and each agent's working memory
of a run (:mod:`.working`, its file :mod:`.working_file`, its tool :mod:`.working_tools`).
"""
