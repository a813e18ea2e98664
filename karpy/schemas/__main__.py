"""``python -m karpy.schemas``: regenerate the shipped ``document.schema.json`` from :mod:`karpy.document`."""

from karpy.schemas import write

print(f"wrote {write()}")
