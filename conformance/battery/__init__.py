"""The instruction battery: generic (non-tensor-core) PTX kernels with random and special inputs,
run on the simulator or a GPU, and compared word by word (``tcgen05-cts sim battery``).

``generate`` writes the kernels and inputs (:mod:`.generate`, sections in ``gen_*.py``),
``run_sim`` / ``run_cuda`` run them and :mod:`.results` saves and compares result folders.
"""
