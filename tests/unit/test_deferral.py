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

"""Deferred waits: what ends one, how they are kept, how a block defers."""

import threading

import testtools

from reservation_ext.clients import deferral
from reservation_ext.clients import polling
from reservation_ext import exceptions


def _volume(pending=('creating',)):
    return deferral.Wait(deferral.VOLUME, 'v1', pending=pending)


class WaitTest(testtools.TestCase):

    def test_a_wait_with_until_ends_on_those_statuses_or_when_gone(self):
        wait = deferral.Wait(deferral.SERVER, 's1', until=('ACTIVE', 'ERROR'))
        self.assertFalse(wait.over('BUILD'))
        self.assertTrue(wait.over('ACTIVE'))
        self.assertTrue(wait.over('ERROR'))
        self.assertTrue(wait.over(None))

    def test_a_wait_with_pending_ends_on_any_other_status(self):
        wait = _volume()
        self.assertFalse(wait.over('creating'))
        self.assertTrue(wait.over('available'))
        self.assertTrue(wait.over('error'))

    def test_a_wait_for_a_resource_to_go_ends_only_when_it_is_gone(self):
        wait = deferral.Wait(deferral.SERVER, 's1')
        self.assertFalse(wait.over('ACTIVE'))
        self.assertFalse(wait.over('DELETED'))
        self.assertTrue(wait.over(None))

    def test_waits_are_kept_as_json_and_read_back_alike(self):
        waits = [deferral.Wait(deferral.SERVER, 's1', until=('ACTIVE',),
                               since='2026-11-27T10:00:00Z'), _volume(),
                 deferral.Wait(deferral.STACK, 'st1',
                               pending=('CREATE_IN_PROGRESS',),
                               scope='trust-1')]
        again = deferral.load(deferral.dump(waits))
        self.assertEqual([w.as_dict() for w in waits],
                         [w.as_dict() for w in again])
        self.assertEqual('trust-1', again[2].scope)
        self.assertEqual([], deferral.load(None))

    def test_a_wait_kept_before_stacks_had_a_scope_reads_back(self):
        [wait] = deferral.load(
            '[{"kind": "volume", "id": "v1", "until": [], '
            '"pending": ["creating"], "since": null}]')
        self.assertEqual(('v1', None), (wait.resource_id, wait.scope))


class DeferringTest(testtools.TestCase):

    def _wait_for(self, statuses):
        values = iter(statuses)
        return polling.wait_for(
            lambda: next(values), lambda status: status == 'available',
            timeout=30, interval=0, late=lambda status: 'late',
            wait=_volume())

    def test_outside_a_deferring_block_a_wait_sits_through(self):
        self.assertEqual('available',
                         self._wait_for(['creating', 'available']))

    def test_in_a_deferring_block_a_wait_looks_once_then_is_recorded(self):
        with deferral.deferring():
            waiting = self.assertRaises(deferral.Waiting, self._wait_for,
                                        ['creating', 'available'])
        self.assertEqual(['v1'], [w.resource_id for w in waiting.waits])
        self.assertEqual(30, waiting.timeout)

    def test_in_a_deferring_block_what_is_there_is_returned(self):
        with deferral.deferring():
            self.assertEqual('available', self._wait_for(['available']))

    def test_in_a_deferring_block_a_failure_is_raised_at_once(self):
        def done(status):
            raise exceptions.PluginError('went to %s' % status)

        with deferral.deferring():
            self.assertRaises(
                exceptions.PluginError, polling.wait_for, lambda: 'error',
                done, 30, 0, lambda status: 'late', _volume())

    def test_deferring_is_of_the_thread_that_asked_for_it(self):
        seen = []
        with deferral.deferring():
            thread = threading.Thread(
                target=lambda: seen.append(deferral.active()))
            thread.start()
            thread.join()
            self.assertTrue(deferral.active())
        self.assertEqual([False], seen)
        self.assertFalse(deferral.active())


class GatherTest(testtools.TestCase):

    def test_every_action_is_issued_then_their_waits_are_raised_together(self):
        issued = []

        def waits(name, timeout):
            def action():
                issued.append(name)
                raise deferral.Waiting([deferral.Wait(
                    deferral.VOLUME, name)], timeout)
            return action

        waiting = self.assertRaises(deferral.Waiting, deferral.gather, [
            waits('a', 10), lambda: issued.append('b'), waits('c', 30)])
        self.assertEqual(['a', 'b', 'c'], issued)
        self.assertEqual(['a', 'c'], [w.resource_id for w in waiting.waits])
        self.assertEqual(30, waiting.timeout)

    def test_what_the_actions_return_is_returned_when_none_waits(self):
        self.assertEqual([1, 2], deferral.gather([lambda: 1, lambda: 2]))
