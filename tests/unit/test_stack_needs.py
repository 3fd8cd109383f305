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

"""A stack's needs, read from Heat's preview.

``heat_previews/mixed-preview.json`` is Heat 27's answer to ``POST
/stacks/preview`` of ``heat_previews/mixed.yaml`` in the sandbox (image
given, ``worker_count`` left at 3): a server, a resource group of three,
two volumes (one typed), a port, an attachment and a floating IP.
"""

import copy
import json
import os

from reservation_ext import exceptions
from reservation_ext.planning import seats
from reservation_ext.planning import stacks as planning
from reservation_ext.stacks import needs
from tests import base

HERE = os.path.join(os.path.dirname(__file__), 'heat_previews')


def preview():
    with open(os.path.join(HERE, 'mixed-preview.json')) as answer:
        return json.load(answer)['stack']


class TestStackNeeds(base.TestCase):

    def test_servers_count_by_flavor_with_the_members_of_a_group(self):
        self.assertEqual({'m1.small': 1, 'm1.tiny': 3},
                         needs.from_preview(preview()).servers)

    def test_volumes_add_up_their_sizes_whatever_their_type(self):
        self.assertEqual(3, needs.from_preview(preview()).volume_gb)

    def test_volumes_are_counted_for_cinders_quota(self):
        self.assertEqual(2, needs.from_preview(preview()).volumes)

    def test_floating_ips_count_by_network_as_written(self):
        self.assertEqual({'public': ['address']},
                         needs.from_preview(preview()).floating_ips)

    def test_ports_attachments_and_groups_themselves_need_nothing(self):
        answer = preview()
        answer['resources'] = [
            resource for resource in answer['resources']
            if not isinstance(resource, list) and resource[
                'resource_type'] not in (needs.SERVER, needs.VOLUME,
                                         needs.FLOATING_IP)]
        self.assertEqual(['OS::Cinder::VolumeAttachment',
                          'OS::Neutron::Port'],
                         sorted(r['resource_type']
                                for r in answer['resources']))
        self.assertTrue(needs.from_preview(answer).empty)

    def test_a_volume_without_a_size_is_refused_naming_it(self):
        answer = copy.deepcopy(preview())
        [data] = [resource for resource in answer['resources']
                  if not isinstance(resource, list) and
                  resource['resource_name'] == 'data']
        data['properties']['size'] = None
        error = self.assertRaises(exceptions.InvalidInput,
                                  needs.from_preview, answer)
        self.assertEqual('template', error.field)
        self.assertIn('volume data has no size', str(error))

    def test_the_booking_has_each_flavors_size_and_each_networks_id(self):
        sizes = {'m1.small': (1, 2048, 20), 'm1.tiny': (1, 512, 1)}
        servers, volume_gb, addresses = needs.to_booking(
            needs.from_preview(preview()), sizes.__getitem__,
            {'public': 'public-id'}.__getitem__)
        self.assertEqual(
            ([planning.Servers('m1.small', (1, 2048, 20), 1),
              planning.Servers('m1.tiny', (1, 512, 1), 3)], 3,
             [planning.Addresses('public', 'public-id', 1)]),
            (servers, volume_gb, addresses))

    def test_a_floating_ip_of_a_nested_stack_is_refused_naming_it(self):
        answer = copy.deepcopy(preview())
        [address] = [resource for resource in answer['resources']
                     if not isinstance(resource, list) and
                     resource['resource_type'] == needs.FLOATING_IP]
        answer['resources'].remove(address)
        answer['resources'].append([address])
        error = self.assertRaises(exceptions.InvalidInput,
                                  needs.from_preview, answer)
        self.assertIn('floating IP address is in a nested stack',
                      str(error))


class TestStackOfAServer(base.TestCase):
    """The reservation a server of a reservation's stack is seated by."""

    def test_the_root_of_heats_path_names_the_reservation(self):
        self.assertEqual('r1', seats.stack_reservation_id(
            ['reservation-r1', 'group,reservation-r1-group-x']))
        # Nova gives a one-element list hint as its element.
        self.assertEqual('r1', seats.stack_reservation_id('reservation-r1'))

    def test_other_stacks_and_boots_have_no_reservation(self):
        for path in (None, [], 'web', ['web', 'group,reservation-r1'], 7):
            self.assertIsNone(seats.stack_reservation_id(path), path)
