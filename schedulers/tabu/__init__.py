"""Klusáček & Rudová's CONS + Tabu search: per-node plan lists, rule 1, the fairness-aware objective."""
