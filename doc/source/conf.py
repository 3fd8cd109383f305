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

"""Sphinx configuration of the docs (``tox -e docs``).

The configuration and policy references and their samples are generated
from the code at build time by oslo.config's and oslo.policy's Sphinx
extensions, from the generator files in ``etc/`` that the checked-in
samples are made from, so the built docs cannot drift from the options
and rules the code registers. The build runs from the top of the
repository (the ``:config-file:`` of the directives is read from there)
with the project installed (the generators find its options and rules
through its entry points).
"""

import os
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(TOP, 'doc'))

from shared_conf import *  # noqa: E402,F401,F403 (the theme and its settings)

extensions = [
    'openstackdocstheme',
    'oslo_config.sphinxext',
    'oslo_config.sphinxconfiggen',
    'oslo_policy.sphinxext',
    'oslo_policy.sphinxpolicygen',
]

# The samples are written into the source tree (_static, not checked in)
# on every build, and included by configuration/*-sample.rst.
config_generator_config_file = os.path.join(
    TOP, 'etc', 'oslo-config-generator', 'reservation.conf')
sample_config_basename = '_static/reservation'
policy_generator_config_file = os.path.join(
    TOP, 'etc', 'oslo-policy-generator', 'reservation.conf')
sample_policy_basename = '_static/reservation'

project = 'reservation-ext'
html_static_path = ['_static']
openstackdocs_bug_tag = 'doc'
