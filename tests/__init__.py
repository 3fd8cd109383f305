import os
import sys

# Nova's functional harness (nova/tests/functional/__init__.py) would
# monkey patch the whole test process with eventlet, under which the
# multiprocessing pools of other tests hang. Nova runs with native threads
# when told so, as nova-api and nova-scheduler may in production; it must
# be told before anything imports eventlet (futurist tries to). A process
# that imported eventlet before this package (an engine that a test
# started, loading the test plugin) runs no Nova and is left alone.
if 'eventlet' not in sys.modules:
    os.environ.setdefault('OS_NOVA_DISABLE_EVENTLET_PATCHING', '1')
    from nova import monkey_patch
    monkey_patch.patch()
