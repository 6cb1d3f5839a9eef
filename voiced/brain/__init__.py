"""The brain (seed 000): analyst, judge and summary think in the background while the mouth speaks."""
