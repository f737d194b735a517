"""Workspace folders: layout, manifest, creation, restore and inspection."""
