"""Agents' layered memory: boot files, memory.md, Layer A facts, the prompt's memory block.

Also their safe writes (with duplicate lines left out, :mod:`.dedupe`, and a full memory.md
folded into the daily log, :mod:`.fold`), ranking, search, the agents' memory tools (and what
``memory_read`` shows, :mod:`.reading`) and consolidation (gc).
"""
