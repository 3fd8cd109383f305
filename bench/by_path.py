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

"""Importing a script by its path: plain Python, for both venvs.

The benchmarks (through :mod:`bench.common`) and the peer scripts run in
Blazar's venv (``peer_proposals``, ``peer_floating_ips``,
``blazar_import_peer``, which import nothing else of this project) load
the shared workload generators (``blazar_alloc.py``) with it.
"""

import importlib.util
import os


def import_script(path):
    """Import a script (e.g. a shared workload generator) by its path."""
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def blazar_alloc(shared):
    """Import ``bench/blazar_alloc.py`` of the shared folder."""
    return import_script(os.path.join(shared, 'bench', 'blazar_alloc.py'))
