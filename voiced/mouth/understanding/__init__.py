"""Local understanding: Home Assistant's sentence templates and ours, fuzzy matching, rooms, context."""
