"""Payload identification (docs/methods.md §11; payload_identification_2017 §2.2)."""
