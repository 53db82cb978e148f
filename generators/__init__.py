"""Variant enumeration, input synthesis and PTX kernel builders (reads legality from ``reference``)."""
