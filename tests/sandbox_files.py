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

"""The sandbox's config files as its command line writes them, for tests."""

import configparser

import fixtures

from reservation_ext.sandbox import config


def write(test, names, **fields):
    """Write the config files ``names`` of a one-host sandbox layout.

    :param test: the test case (for its temporary directory).
    :param fields: the layout's fields from the command line.
    :returns: ``{name: ConfigParser}`` of the files written.
    """
    layout = config.Layout(
        state_dir=test.useFixture(fixtures.TempDir()).path, hosts=1,
        ports={name: 10000 + i for i, name in enumerate(config.SERVICES)},
        password='secret', **fields)
    files = {}
    for name in names:
        getattr(config, 'write_%s_conf' % name)(layout)
        # Keys repeat (available_filters): oslo.config reads them all.
        files[name] = configparser.ConfigParser(strict=False)
        files[name].read(layout.path(name + '.conf'))
    return files
