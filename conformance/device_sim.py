"""``--device sim``: the simulated device (implementation in :mod:`conformance.sim`)."""

from conformance.sim.device import SimDevice, open_sim_device

__all__ = ["SimDevice", "open_sim_device"]
