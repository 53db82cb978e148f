"""The front end: PTX text parsed (``parser``, ``syntax``, ``types``) and compiled into programs of
vectorised operations (``compiler``), one handler per instruction spelling (``registry``)."""
