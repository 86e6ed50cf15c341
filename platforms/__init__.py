"""batloc.platforms"""
