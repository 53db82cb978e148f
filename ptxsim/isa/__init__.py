"""The generic PTX ISA: integer, bit, media, float, conversion and control-flow instructions,
ldmatrix/stmatrix and warp-level ``mma.sp`` (with the tensor-core arithmetic tcgen05 shares)."""
