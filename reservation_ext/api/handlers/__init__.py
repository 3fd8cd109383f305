"""Handlers of the lease API, one module per resource.

A handler takes the service of its resource, the request and the
arguments of its path, and returns ``(status, body)``.
"""
