"""Benchmarks: each figure of DESIGN.md's targets beside a reference measured in the same run.

    python -m tutor.bench            # the whole table (a few minutes; PyTorch from the `bench` extra)
    python -m tutor.bench --quick    # every row once, small repeats: checks that it all still runs

Nothing here is imported by the app; PyTorch is imported only where a reference needs it.
"""
