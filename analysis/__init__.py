"""batloc.analysis"""
