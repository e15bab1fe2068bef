"""Template analysis tools (linting, inspection); never on the per-token path."""
