"""batloc.adapters"""
