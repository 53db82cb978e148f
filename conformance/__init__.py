"""The pytest suite users run (one module per spec section) and its harness (toolchain, device, comparison)."""
