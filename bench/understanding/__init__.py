"""Understanding benchmark: sentences, the devices they must move, and the scorer (score.py)."""
