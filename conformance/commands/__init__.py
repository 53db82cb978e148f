"""Sub-commands of the ``tcgen05-cts`` CLI.

Each module here defines ``register(subparsers)``, which adds its sub-command(s) and sets
``func`` on the parser to a callable ``func(args) -> int``. ``conformance.commands.cli`` discovers
the modules, so adding a command never edits a shared file.
"""
