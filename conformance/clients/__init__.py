"""Real-client corpus: Triton- and Gluon-compiled Blackwell kernels run unmodified (``-m clients``).

Triton's sm_100 code generation is tested upstream on B200-class GPUs, so a Triton kernel is
evidence of working hardware behaviour that does not come from this project's reading of the
spec.  Each corpus entry (:class:`~conformance.clients.model.ClientKernel`) is a kernel source,
a compile configuration and an input builder whose inputs are exact by construction; the expected
outputs are float64 numpy products.  :mod:`.build` compiles with Triton (cached on disk),
:mod:`.launch` runs a compiled kernel on any device with the :mod:`ptxsim` API (the simulator, or
the PyCUDA adapter), and :mod:`.corpus` lists the configurations.  Findings: docs/clients.md.
"""
