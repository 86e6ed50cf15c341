"""batloc.workloads"""
