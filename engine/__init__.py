"""batloc.engine"""
