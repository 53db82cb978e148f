"""The 5th-generation tensor core (PTX ISA §9.7.16): Tensor Memory, alloc/commit/fence/wait,
tcgen05.cp/shift, tcgen05.ld/st, tcgen05.mma; operands read through ``reference/``."""
