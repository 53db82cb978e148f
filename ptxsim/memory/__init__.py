"""Memory and synchronization: global memory, ld/st/atomics, mbarriers, cp.async, bulk copies and
stores, TMA tensor copies and tensor maps."""
