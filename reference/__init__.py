"""The executable spec: PTX ISA §9.7.16 (tcgen05) and §9.7.14.6.1 (warp-level mma.sp).

numpy only, no CUDA. One module per spec concept; each public function cites its section.
"""
