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

"""Sphinx configuration of the API reference (``tox -e api-ref``).

The samples it shows are the JSON files of ``doc/api_samples``, which the
functional tests send and compare with the answers
(``tests/api_samples.py``), so the reference cannot drift from the code.
"""

import os
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(TOP, 'doc'))

from shared_conf import *  # noqa: E402,F401,F403 (the theme and its settings)

extensions = [
    'os_api_ref',
    'openstackdocstheme',
]

project = 'reservation-ext API Reference'
html_theme_options = {
    'sidebar_mode': 'toc',
}
