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

"""The API reference covers the API, and its samples are all checked.

Every method and path of the lease API's URL map has a section
(``.. rest_method::``) in ``api-ref/source``, and no section names a call
the map lacks; every hint, action and field that reservation-ext adds to
Nova's and Cinder's APIs, and every field of the lease API's response
samples, is a parameter of the reference; every file of
``doc/api_samples`` is shown by the reference and is sent or compared by
a samples test
(``tests/functional/test_api_samples_*.py``, through
:mod:`tests.api_samples`).
"""

import glob
import os
import re

from reservation_ext.api import wsgi
from reservation_ext.clients import compute as compute_client
from reservation_ext.leases import metadata as lease_metadata
from reservation_ext.nova_api import server_middleware
from tests import api_samples
from tests import base

TOP = api_samples.TOP
SOURCE = os.path.join(TOP, 'api-ref', 'source')
REST_METHOD = re.compile(r'^ *\.\. rest_method:: (\w+) (\S+)$', re.M)
INCLUDE = re.compile(r'^ *\.\. literalinclude:: (\S+)$', re.M)
# A parameter of a rest_parameters block: "  - name: reference".
PARAMETER = re.compile(r'^ +- (\S+): \S+$', re.M)
# The lease API's paths as the reference writes them (the catalog's
# reservation endpoint ends in /v1).
LEASE_API = '/v1/'
# An action of the Cinder extension (cinder_ext imports Cinder, which
# patches the process with eventlet: its source is read instead).
CINDER_ACTION = re.compile(r"@wsgi\.action\('([^']+)'\)")
# The samples of Nova's and Cinder's views, whose other fields are
# theirs to document.
COMPUTE_AND_VOLUME = ('servers', 'volumes')
# Objects of the lease API's answers whose keys are another service's to
# document: what Cinder reported of a storage pool.
FOREIGN_OBJECTS = ('capabilities',)


def _reference():
    """The text of every source file of the reference, by path."""
    texts = {}
    for path in glob.glob(os.path.join(SOURCE, '*.inc')) + glob.glob(
            os.path.join(SOURCE, '*.rst')):
        with open(path) as source:
            texts[path] = source.read()
    return texts


def _collect_keys(value, keys):
    """Add the keys of every object in ``value`` to ``keys``.

    Not those of the :data:`FOREIGN_OBJECTS`.
    """
    if isinstance(value, dict):
        keys.update(value)
        value = [item for key, item in value.items()
                 if key not in FOREIGN_OBJECTS]
    if isinstance(value, list):
        for item in value:
            _collect_keys(item, keys)


def _sample_files():
    return sorted(os.path.relpath(path, api_samples.SAMPLES) for path in
                  glob.glob(os.path.join(api_samples.SAMPLES, '*', '*.json')))


class APIReferenceTest(base.TestCase):

    def test_every_call_of_the_lease_api_has_a_section(self):
        routes = sorted((method, path) for path, _service, methods in
                        wsgi.ROUTE_DECLARATIONS for method in methods)
        documented = sorted(
            (method, path) for text in _reference().values()
            for method, path in REST_METHOD.findall(text)
            if path.startswith(LEASE_API))
        self.assertEqual(routes, documented)

    def test_every_field_the_lease_api_answers_is_documented(self):
        documented = set()
        for text in _reference().values():
            documented.update(PARAMETER.findall(text))
        # The extra capabilities of hosts and storage pools are any keys
        # the admin chose.
        capabilities = set()
        for name in ('hosts/host-create-req.json',
                     'hosts/host-update-req.json',
                     'storage-pools/storage-pool-create-req.json',
                     'storage-pools/storage-pool-update-req.json'):
            capabilities.update(api_samples.load(name))
        fields = set()
        for sample in _sample_files():
            if sample.endswith('-resp.json') and \
                    sample.split('/')[0] not in COMPUTE_AND_VOLUME:
                _collect_keys(api_samples.load(sample), fields)
        self.assertEqual([], sorted(fields - documented - capabilities))

    def test_every_hint_and_action_added_to_nova_and_cinder_is_documented(
            self):
        documented = set()
        for name in ('servers.inc', 'volumes.inc'):
            with open(os.path.join(SOURCE, name)) as source:
                documented.update(PARAMETER.findall(source.read()))
        with open(os.path.join(TOP, 'cinder_ext', 'extension.py')) as source:
            volume_actions = CINDER_ACTION.findall(source.read())
        added = set(server_middleware.OWN_HINTS) | set(volume_actions) | {
            compute_client.START_ACTION, compute_client.FLAVOR_ACTION} | {
            'metadata.' + key for key in lease_metadata.SERVER_KEYS}
        self.assertEqual([], sorted(added - documented))

    def test_every_sample_is_shown_by_the_reference(self):
        shown = sorted(
            os.path.relpath(os.path.normpath(os.path.join(
                os.path.dirname(path), included)), api_samples.SAMPLES)
            for path, text in _reference().items()
            for included in INCLUDE.findall(text))
        self.assertEqual(_sample_files(), shown)

    def test_every_sample_is_sent_or_compared_by_a_test(self):
        tests = ''
        for path in glob.glob(os.path.join(
                TOP, 'tests', 'functional', 'test_api_samples_*.py')):
            with open(path) as source:
                tests += source.read()
        unchecked = [
            sample for sample in _sample_files()
            if "'%s'" % re.sub(r'-(req|resp)\.json$', '', sample)
            not in tests]
        self.assertEqual([], unchecked)


ID1 = '3a19937c-20e3-4104-9e9d-dcb1ee6d726a'
ID2 = 'b0b2b459-bf30-45e2-a56e-d19f1cbba270'
ID3 = '05726a34-01bc-48c7-b883-2298254f6273'


class SampleComparisonTest(base.TestCase):
    """What :class:`tests.api_samples.Samples` lets differ, and what not."""

    def problems(self, sample, answer, samples=None):
        found = []
        (samples or api_samples.Samples(self))._match(
            sample, answer, 'sample', found)
        return found

    def test_ids_and_dates_stand_for_any_of_their_kind(self):
        sample = {'id': ID1, 'href': 'http://x/leases/' + ID1,
                  'start_date': '2030-01-10T09:00:00.000000',
                  'created_at': '2026-11-25 17:01:42', 'adminPass': 'a'}
        answer = {'id': ID2, 'href': 'http://x/leases/' + ID2,
                  'start_date': '2031-02-11T10:30:00.000000',
                  'created_at': '2027-01-01 00:00:00', 'adminPass': 'b'}
        self.assertEqual([], self.problems(sample, answer))

    def test_every_other_value_key_and_length_must_be_equal(self):
        sample = {'name': 'hpc-run', 'min': 1, 'hosts': [1], 'a': True,
                  'start_date': '2030-01-10T09:00:00.000000'}
        answer = {'name': 'hpc', 'min': '1', 'hosts': [1, 2], 'b': True,
                  'start_date': '2030-01-10 09:00'}
        self.assertEqual(5, len(self.problems(sample, answer)))

    def test_one_id_of_the_samples_stands_for_one_id_of_the_answers(self):
        samples = api_samples.Samples(self)
        self.assertEqual([], self.problems([ID1], [ID2], samples))
        # The same sample id for another id, another sample id for it.
        self.assertEqual(1, len(self.problems([ID1], [ID3], samples)))
        self.assertEqual(1, len(self.problems([ID3], [ID2], samples)))
        self.assertEqual({'lease_id': ID2},
                         samples._bind_ids({'lease_id': ID1}))

    def test_aliases_apply_to_the_answer(self):
        samples = api_samples.Samples(
            self, aliases={'http://127.0.0.1:8774': 'http://example.com'})
        self.assertEqual([], self.problems(
            {'href': 'http://example.com/v2.1'},
            samples._aliased({'href': 'http://127.0.0.1:8774/v2.1'}),
            samples))
