"""The former name of :mod:`reservation_ext.nova_api`.

Kept so that an api-paste.ini written for an earlier release, which names
``reservation_ext.servers.middleware:filter_factory``, keeps working.
"""
