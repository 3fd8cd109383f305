"""The reservable hosts (``/v1/os-hosts``).

:mod:`.inventory` is the admin service behind the API: it checks a host
with Nova, keeps it in the free-pool aggregate and records it;
:mod:`.records` writes the ``computehosts`` and ``host_capabilities``
rows (also for the benchmarks' bulk loads).
"""
