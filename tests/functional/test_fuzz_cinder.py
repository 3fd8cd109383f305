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

"""Generated volume creates inside Cinder's harness.

``POST /volumes`` with the reservation hints
(:func:`tests.fuzz.strategies.reservation_hints`) and volume bodies whose
``name``, ``size``, ``availability_zone`` and the body itself have odd
values and types, through Cinder's API with the extension
(:mod:`tests.functional.cinder_base`). As ``test_cinder_extension``, the
module runs its tests in a child process (Cinder patches the process
with eventlet).

Every answer is checked by :mod:`tests.fuzz.checks` (Cinder's fault
body). After the run nothing is half-made: the volumes Cinder has are
exactly those answered 202, every reserved one has its lease, every
volume lease names a volume that exists, and no unknown availability
zone was accepted.
"""

import testtools.content

from tests import cinder_child

IN_CINDER = cinder_child.IN_CINDER


class CinderHarness(cinder_child.CinderHarness):
    """Run the Cinder-side fuzz of this module in a process of its own."""

    module = __name__

    def test_in_cinder_harness(self):
        super().test_in_cinder_harness()
        output = self.child_output
        summary = '\n'.join(line for line in output.splitlines()
                            if 'generated requests' in line)
        self.addDetail('fuzz', testtools.content.text_content(summary))
        print(summary)


if IN_CINDER:
    from hypothesis import given
    from hypothesis import strategies as st
    import sqlalchemy as sa

    from db import models
    from reservation_ext import clock as clock_mod
    from tests.functional import cinder_base
    from tests.fuzz import checks
    from tests.fuzz import strategies as fz

    NOW = clock_mod.SYSTEM.now()
    # Requests per CI run (times RESERVATION_FUZZ_SCALE).
    EXAMPLES = 600
    ZONES = ('nova', 'zone-x', '', ' ', 'ü', 'x' * 256)

    def _volume():
        fields = st.fixed_dictionaries(
            {'size': fz.weighted((6, st.sampled_from((1, 2, '1'))),
                                 (1, fz.scalars()))},
            optional={
                'name': fz.weighted((3, fz.NAMES), (1, fz.scalars()),
                                    (1, fz.json_values())),
                'availability_zone': fz.weighted(
                    (3, st.just('nova')), (1, st.sampled_from(ZONES)),
                    (1, fz.scalars())),
                'description': fz.odd_text(),
                'metadata': st.dictionaries(fz.odd_text(), fz.scalars(),
                                            max_size=2)})
        body = st.builds(
            lambda volume, hints: {'volume': volume,
                                   'OS-SCH-HNT:scheduler_hints': hints},
            fields, fz.reservation_hints(NOW, st.just('none')))
        return fz.weighted((8, body), (1, fz.mutated(body)),
                           (1, fz.raw_bodies()), (1, fz.bad_values()))

    def _asks_lease(body):
        """Whether ``body`` has hints that ask for a reserved volume."""
        hints = (body.get('OS-SCH-HNT:scheduler_hints')
                 if isinstance(body, dict) else None)
        return isinstance(hints, dict) and bool(
            {'reserved', 'lease_params', 'proposal'} & set(hints))

    class CinderFuzzTest(cinder_base.CinderTestCase):
        """Cinder with reserved volumes, under a careless client.

        It never fails on what a careless client sends, and makes no volume
        without its lease nor lease without its volume.
        """

        def setUp(self):
            super().setUp()
            self.override_config('volume_reservable_gb', 1000, 'reservation')
            self.tally = checks.Tally("Cinder's harness")
            self.volumes = {}
            self.resolve = fz.Resolver('proposal')
            # Cinder's own 500s, on creates that ask for no reservation.
            self.cinders_own = []

        def send(self, body):
            data = fz.encode(body, self.resolve)
            response = self.api.api_request(
                '/volumes', method='POST', body=data,
                headers={'Content-Type': 'application/json'})
            self.tally.count(response.status_code)
            ours = _asks_lease(body)
            if response.status_code >= 500 and not ours:
                # Stock Cinder (e.g. "size": null): not the extension's.
                self.cinders_own.append(data[:200])
                return response
            self.assertIsNone(checks.service_problem(
                response.status_code, response.text, ours), data[:300])
            if response.status_code == 202:
                volume = response.json()['volume']
                self.volumes[volume['id']] = volume
            return response

        def test_an_unknown_zone_is_refused_at_create(self):
            response = self.send({
                'volume': {'size': 1, 'availability_zone': 'zone-x'},
                'OS-SCH-HNT:scheduler_hints': {'reserved': 'True'}})
            self.assertEqual(400, response.status_code)
            self.assertEqual(
                "availability_zone: Availability zone 'zone-x' is invalid.",
                response.json()['badRequest']['message'])
            self.assertEqual({}, self.volumes)
            with self.database.engine.connect() as conn:
                self.assertEqual(0, conn.scalar(sa.select(sa.func.count())
                                                .select_from(models.Lease)))

        def test_a_name_or_body_of_another_type_is_a_bad_request(self):
            for body in ({'volume': {'size': 1, 'name': 12}},
                         {'volume': {'size': 1, 'name': ['x']}},
                         {'volume': 'x'}, ['volume'], 'volume'):
                body = dict(body, **{'OS-SCH-HNT:scheduler_hints': {
                    'reserved': 'True'}}) if isinstance(body, dict) else body
                self.assertEqual(400, self.send(body).status_code)
            self.assertEqual({}, self.volumes)

        def test_no_create_fails_or_half_creates(self):
            @fz.fuzz_settings(EXAMPLES)
            @given(_volume())
            def run(body):
                self.send(body)
            run()
            print(self.tally.summary() + "; Cinder's own 500s on creates "
                  'without reservation hints: %d' % len(self.cinders_own))
            self.assertGreaterEqual(self.tally.total, fz.examples(EXAMPLES))
            self._check_whole()

        def _check_whole(self):
            in_cinder = {volume['id']: volume
                         for volume in self.api.get_volumes()}
            self.assertEqual(set(self.volumes), set(in_cinder))
            requests = models.VolumeReservation.__table__
            reservations = models.Reservation.__table__
            with self.database.engine.connect() as conn:
                leased = dict(conn.execute(sa.select(
                    requests.c.volume_id, reservations.c.lease_id).join(
                    reservations,
                    reservations.c.id == requests.c.reservation_id)).all())
                zones = set(conn.scalars(sa.select(
                    requests.c.availability_zone)))
            self.assertLessEqual(set(leased), set(in_cinder),
                                 'leases of volumes that do not exist')
            reserved = {volume_id for volume_id, volume in in_cinder.items()
                        if volume['status'] == 'reserved'}
            self.assertLessEqual(reserved, set(leased),
                                 'reserved volumes without their lease')
            self.assertLessEqual(zones, {'nova'})
