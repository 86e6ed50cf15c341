"""Jeannot, Pallez & Vidal's I/O-aware scheduling: shared bandwidth profile, packs, declared I/O fields."""
