"""Fault injection: the hooks and ``Fault`` model (``model``) and the built-in catalogue."""
