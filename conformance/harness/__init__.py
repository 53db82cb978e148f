"""The harness: toolchain, devices, batching, oracles and comparison behind the test modules."""
