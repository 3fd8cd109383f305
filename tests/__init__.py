#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

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
