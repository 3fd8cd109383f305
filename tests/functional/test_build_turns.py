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

"""Turns: the named locks of the leases DB (db.api.turn), on each database.

A start that builds a server on a host holds that host's turn from the
take of its build to its cast; a start on another host does not wait for
it. The whole race, with Nova, is in ``test_nova_preemptible_gaps``.
"""

import threading

import fixtures

from db import api as db_api
from reservation_ext import context
from tests import base

# Seconds a test waits for the other thread at most: a hang guard.
WAIT = 30


class _TurnsMixin:

    def setUp(self):
        super().setUp()
        self.order = []
        self.held = threading.Event()

    def hold(self, host, until):
        """Hold ``host``'s turn until the event ``until`` is set.

        A writer runs inside it, as a start's take of its build does.
        """
        with db_api.turn(host):
            with db_api.writer(context.get_admin_context()):
                pass
            self.held.set()
            until.wait(WAIT)
            self.order.append('first done')

    def take_turn(self, host, then=None):
        self.assertTrue(self.held.wait(WAIT))
        with db_api.turn(host):
            self.order.append('second locked')
        if then is not None:
            then.set()

    def run_both(self, first, second):
        threads = [threading.Thread(target=first),
                   threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(2 * WAIT)

    def test_a_start_on_a_host_waits_for_the_one_before_it(self):
        # The first ends its turn after a while; the second, blocked on
        # the lock, can only go after it.
        done = threading.Event()
        threading.Timer(0.5, done.set).start()
        self.run_both(lambda: self.hold('host0', done),
                      lambda: self.take_turn('host0'))
        self.assertEqual(['first done', 'second locked'], self.order)

    def test_a_start_on_another_host_does_not_wait(self):
        # The first holds host0 until the second has had host1.
        done = threading.Event()
        self.run_both(lambda: self.hold('host0', done),
                      lambda: self.take_turn('host1', then=done))
        self.assertEqual(['second locked', 'first done'], self.order)

    def test_a_turn_held_too_long_is_not_taken(self):
        self.useFixture(fixtures.MonkeyPatch('db.api.TURN_TIMEOUT', 1))
        done = threading.Event()

        def wait_in_vain():
            self.assertTrue(self.held.wait(WAIT))
            self.assertRaises(db_api.TurnNotTaken,
                              db_api.turn('host0').__enter__)
            self.order.append('second gave up')
            done.set()
        self.run_both(lambda: self.hold('host0', done), wait_in_vain)
        self.assertEqual(['second gave up', 'first done'], self.order)


class TestBuildTurnsSQLite(_TurnsMixin, base.DBTestCase):
    pass


class TestBuildTurnsPostgreSQL(_TurnsMixin, base.PostgreSQLTestCase):
    pass


class TestBuildTurnsMySQL(_TurnsMixin, base.MySQLTestCase):
    pass
