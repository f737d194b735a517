"""Agents' layered memory: boot files, memory.md documents and their safe writes, Layer A
facts and their ranking, the budgeted memory block of a prompt, search, agent tools and gc."""
