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

"""Sphinx settings that every book of the project shares.

The docs (``doc/source``), the release notes (``releasenotes/source``) and
the API reference import these into their ``conf.py``, so that they look
alike and link to the same repository and bug tracker: the theme
(openstackdocstheme) and its settings.
"""

copyright = 'reservation-ext developers'
master_doc = 'index'
exclude_patterns = []
pygments_style = 'native'
html_theme = 'openstackdocs'

# openstackdocstheme: the repository it links to ("report a bug", the
# source of each page).
openstackdocs_repo_name = 'openstack/reservation-ext'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False
openstackdocs_bug_project = 'reservation-ext'
