"""voiced: an offline-first voice-assistant daemon for the smart home."""

__version__ = "0.1.0"
