"""Joint friction: the friction ``models`` (docs/methods.md §8)."""
