"""The execution engine: a batch of clusters in lock step (``machine``) and the warp scheduler that
runs a program over it (``scheduler``)."""
