"""Agents' layered memory: boot files, memory.md, Layer A facts, the prompt's memory block.

Also their safe writes, ranking, search, the agents' memory tools and consolidation (gc).
"""
