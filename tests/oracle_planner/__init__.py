"""The planning pass as it was written in Python, kept as the test oracle.

The compiled planning core (``batloc.schedulers.planning``) must take exactly the
decisions these modules take: ``tests/planning/test_planning_differential.py`` runs both
on saturated inputs and compares every decision. Nothing here is shipped.
"""
