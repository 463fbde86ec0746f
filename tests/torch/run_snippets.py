"""Runs every snippet once (for `python3 -m layoutguard_torch run_snippets.py`)."""
from snippets import SNIPPETS

for s in SNIPPETS:
    s.run()
print(f"ran {len(SNIPPETS)} snippets")
