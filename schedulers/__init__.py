"""batloc.schedulers"""
