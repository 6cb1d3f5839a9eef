"""The vibe agent (seed 001): scenes across lights, scent and music, in the background."""
