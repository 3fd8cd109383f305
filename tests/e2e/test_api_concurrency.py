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

"""64 clients at once against four nova-api processes and cinder-api.

A sandbox (no engine) and three more lease API worker processes on its
nova.conf share one leases DB (an SQLite file, PostgreSQL, MariaDB), with
50 reservable hosts. Each client, a project of its own with a Keystone
token, creates host and instance-capacity leases through the lease API,
boots reserved servers through nova-api and creates reserved volumes
through cinder-api (the lease hints), updates and deletes any of its
leases, and asks for schedule proposals (taking some), in overlapping
windows, ten requests each (:mod:`harness.concurrency.workload`).
:mod:`harness.concurrency.checker` then finds no host double-booked or over
its capacity, no volume capacity exceeded, no hold left, no lease too
many or missing, no server or volume without its lease or lease without
its server or volume, no 5xx, and a reason for every 409 of a create.
"""

import json

from testtools import content

from harness.concurrency import scenario
from reservation_ext.sandbox import config
from tests.e2e import base

CLIENTS = 64
OPS = 10
WORKERS = 3
HOSTS = 50


class _ConcurrentClientsTests:

    HOSTS = 1
    # Nothing starts during the test. Proposals expire within it, yet
    # last longer than a request takes on a loaded machine (a client takes
    # one right after it asked for it).
    OPTIONS = ('--engines', '0', '--proposal-ttl', '45')

    def test_concurrent_clients_never_overbook_and_every_conflict_is_right(
            self):
        result = scenario.run(config.Layout.load(self.sandbox.state_dir),
                              CLIENTS, OPS, WORKERS, HOSTS)
        self.addDetail('summary', content.text_content(
            json.dumps(result['summary'], indent=1)))
        self.assertEqual([], result['violations'], '\n'.join(
            result['errors']))
        by_operation = result['summary']['by_operation']
        # The run did what it is for: leases of every kind granted and
        # deleted, some refused, leases made from proposals.
        for wanted in ('create host 201', 'create host 409',
                       'create capacity 201', 'create slice 202',
                       'create volume 202', 'delete host 204',
                       'delete capacity 204', 'delete slice 204',
                       'delete volume 204', 'create_from_proposal host 201'):
            self.assertIn(wanted, by_operation, result['summary'])
        self.assertGreaterEqual(result['summary']['operations'],
                                CLIENTS * OPS)


class TestOnSQLite(_ConcurrentClientsTests, base.SandboxTestCase):
    pass


class TestOnPostgreSQL(_ConcurrentClientsTests, base.PostgreSQL,
                       base.SandboxTestCase):
    pass


class TestOnMariaDB(_ConcurrentClientsTests, base.MariaDB,
                    base.SandboxTestCase):
    pass
