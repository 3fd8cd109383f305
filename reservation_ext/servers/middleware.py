"""The former path of the server middleware's paste factory."""

from reservation_ext.nova_api.server_middleware import filter_factory

__all__ = ['filter_factory']
