"""Resource plugins: one per reservable resource type.

Plugins are found through stevedore in the ``reservation_ext.plugins``
namespace; the entry point name is the resource type (``physical:host``,
``virtual:instance``, ``virtual:volume``).
"""

from stevedore import extension

NAMESPACE = 'reservation_ext.plugins'


def load_plugins(conf, clock):
    """Return ``{resource_type: plugin}`` for every installed plugin."""
    manager = extension.ExtensionManager(
        NAMESPACE, invoke_on_load=True, invoke_args=(conf, clock),
        propagate_map_exceptions=True, on_load_failure_callback=_raise)
    return {ext.name: ext.obj for ext in manager}


def _raise(manager, entrypoint, exc):
    raise exc
