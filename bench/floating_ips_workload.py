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

"""The floating IP workload of ``floating_ips`` and ``peer_floating_ips``.

Plain Python (no import of this project nor of Blazar), so that both
sides, each in its own virtualenv, load the same rows: the same seed
gives the same ids, addresses, schedule and requests.

``generate`` returns ``addresses`` (``id``, ``address``: one external
network), ``leases`` (``id``, ``name``, ``reservation_id``,
``request_id`` (Blazar's floatingip_reservations row), ``allocation_id``,
``address`` (the index of the address it holds), ``start``, ``end``) and
``requests`` (the start of each timed one-hour create). Address ``a``'s
``k``-th lease holds it for a day from day ``2k + 1`` plus ``a mod 24``
hours, so that every hour of the schedule has some addresses busy and
some free, except the hour from 23:00 of each day ``2k + 1``, when
every one is busy (the creates there fail).
"""

import datetime
import random
import uuid

NETWORK = 'bench-public'
SUBNET = 'bench-subnet'
PROJECT = 'bench-project'
USER = 'bench-user'
# As bench.common.NOW: the time the rows were written.
NOW = datetime.datetime(2029, 12, 1)
DAY = datetime.timedelta(days=1)
HOUR = datetime.timedelta(hours=1)


def generate(addresses, leases, requests, seed=1):
    """The addresses, the leases and the timed requests' starts."""
    ids = random.Random('%d-ids' % seed)

    def new_id():
        return str(uuid.UUID(int=ids.getrandbits(128), version=4))

    fips = [{'id': new_id(), 'address': '10.%d.%d.%d' % (
        index // 65536, index // 256 % 256, index % 256)}
        for index in range(addresses)]
    booked = []
    for index in range(leases):
        start = NOW + DAY + 2 * DAY * (index // addresses) + HOUR * (
            index % addresses % 24)
        booked.append({'id': new_id(), 'name': 'l%d' % index,
                       'reservation_id': new_id(), 'request_id': new_id(),
                       'allocation_id': new_id(),
                       'address': index % addresses,
                       'start': start, 'end': start + DAY})
    until = NOW + DAY + 2 * DAY * (leases // addresses)
    span = int((until - NOW - DAY) / HOUR)
    chooser = random.Random(seed)
    return {'addresses': fips, 'leases': booked,
            'requests': [NOW + DAY + HOUR * chooser.randrange(span)
                         for _index in range(requests)]}
