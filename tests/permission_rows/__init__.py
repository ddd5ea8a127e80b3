"""Rows of the permission table (tests/test_permission_matrix.py) kept beside each area.

Each module here has `ROWS`, a dict in the same form as the table's, and may have
`values(world, alpha, people)`, returning path parameters its routes need (names must be
new: never `pk`, `slug`, `item_id` …, which the table already fills)."""

import importlib
import pkgutil

AREAS = [importlib.import_module(f"{__name__}.{m.name}")
         for m in pkgutil.iter_modules(__path__)]


def rows():
    merged = {}
    for area in AREAS:
        clash = set(merged) & set(area.ROWS)
        assert not clash, f"rows given twice: {sorted(clash)}"
        merged.update(area.ROWS)
    return merged


def values(world, alpha, people):
    found = {}
    for area in AREAS:
        if hasattr(area, "values"):
            found.update(area.values(world, alpha, people))
    return found
