"""The lease engine (``reservation-engine``).

:mod:`.runner` claims due lease events in the leases DB, runs them
through the resource plugins and records the outcomes; any number of
engines share one DB and each event runs once.
"""
