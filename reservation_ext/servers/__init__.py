"""Server reservation in nova-api: the ``reserved`` and ``lease_params``
hints of ``POST /servers``, RESERVED servers, and their start.

:mod:`.middleware` is the paste filter of the compute API pipelines;
:mod:`.builds` holds a reserved server's build back until its lease
starts; :mod:`.records` reads and writes what the leases DB knows of
reserved servers.
"""
