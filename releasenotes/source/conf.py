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

"""Sphinx configuration of the release notes (``tox -e releasenotes``).

reno's ``release-notes`` directive reads the notes of
``releasenotes/notes/`` from the git history, not from the work tree: a
note appears once it is committed, under the release whose tag first
contains it (the notes after the last tag are the current series).
"""

import os
import sys

sys.path.insert(0, os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', '..', 'doc'))

from shared_conf import *  # noqa: E402,F401,F403 (the theme and its settings)

extensions = [
    'openstackdocstheme',
    'reno.sphinxext',
]

project = 'reservation-ext Release Notes'
html_static_path = ['_static']
openstackdocs_bug_tag = 'releasenotes'
