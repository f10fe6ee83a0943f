"""Tabular recipes (Sutton & Barto problems)."""
