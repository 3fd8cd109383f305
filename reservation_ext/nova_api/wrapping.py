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

"""Wrapping a method of Nova's inside nova-api, once.

nova-api may build its paste pipelines, and so install our wrappers, more
than once in a process (each API, each test of a harness): a method is
wrapped only if it is not wrapped already, so a call never passes through
the same wrapper twice.
"""

import functools

_WRAPPED = '_reservation_wrapped'


def wrap_once(cls, name, wrap):
    """Replace ``cls.<name>`` with ``wrap(original)``, unless done before.

    :param wrap: takes the original function, returns its replacement
        (with the same signature).
    """
    original = getattr(cls, name)
    if getattr(original, _WRAPPED, False):
        return
    wrapper = functools.wraps(original)(wrap(original))
    setattr(wrapper, _WRAPPED, True)
    setattr(cls, name, wrapper)
