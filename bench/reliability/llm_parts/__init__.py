"""Parts of the `llm` reliability family (a folder, so the runner's glob finds only families)."""
