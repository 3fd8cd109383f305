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

extensions = [
    'openstackdocstheme',
    'reno.sphinxext',
]

project = 'reservation-ext Release Notes'
copyright = 'reservation-ext developers'
master_doc = 'index'
exclude_patterns = []
pygments_style = 'native'

html_theme = 'openstackdocs'
html_static_path = ['_static']

openstackdocs_repo_name = 'openstack/reservation-ext'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
openstackdocs_bug_project = 'reservation-ext'
openstackdocs_bug_tag = 'releasenotes'
