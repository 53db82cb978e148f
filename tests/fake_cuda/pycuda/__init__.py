"""Test double of PyCUDA (tests/fake_cuda/README.md): only ``pycuda.driver`` exists."""

VERSION = (2026, 1, 0)
VERSION_TEXT = "2026.1-fake"
