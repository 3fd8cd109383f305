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

"""Capability queries, compiled to SQL and run against a real DB."""

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import clock as clock_mod
from reservation_ext import exceptions
from reservation_ext.planning import capabilities
from reservation_ext.store import hosts as store_hosts
from tests import base

HOSTS = [
    ({'hypervisor_hostname': 'h1', 'vcpus': 8, 'memory_mb': 16384,
      'local_gb': 100, 'hypervisor_type': 'QEMU',
      'hypervisor_version': 2001000, 'cpu_info': 'avx2 sse4'},
     {'gpu': 'true', 'rack': 'r1', 'cores': '16', 'fw': '2.1.0',
      'tag': 'a'}),
    ({'hypervisor_hostname': 'h2', 'vcpus': 32, 'memory_mb': 65536,
      'local_gb': 400, 'hypervisor_type': 'KVM',
      'hypervisor_version': 6000000},
     {'rack': 'r2', 'cores': '8.0', 'fw': '10.0', 'tag': 'B'}),
    ({'hypervisor_hostname': 'h3', 'vcpus': 16, 'memory_mb': 32768,
      'local_gb': 200, 'cpu_info': 'AVX2'},
     {}),
]

# (query, names of the matching hosts)
JSON_FILTERS = [
    ('', {'h1', 'h2', 'h3'}),
    ('[]', {'h1', 'h2', 'h3'}),
    ('["=", "$gpu", "true"]', {'h1'}),
    ('["=", "$vcpus", "16"]', {'h3'}),
    ('["=", "$vcpus", 16]', {'h3'}),
    ('["=", "$cores", "8"]', {'h2'}),
    ('["=", "$hypervisor_type", "KVM"]', {'h2'}),
    ('["=", "$vcpus", "eight"]', set()),
    ('[">=", "$vcpus", "16"]', {'h2', 'h3'}),
    ('[">", "$vcpus", "16"]', {'h2'}),
    ('["<", "$memory_mb", "32768"]', {'h1'}),
    ('["<=", "$memory_mb", "32768"]', {'h1', 'h3'}),
    ('["<", "$cores", "10"]', {'h2'}),
    ('["<", "$rack", "r2"]', {'h1'}),
    ('["in", "$rack", "r1", "r2"]', {'h1', 'h2'}),
    ('["in", "$vcpus", "8", "32.0"]', {'h1', 'h2'}),
    ('["and", [">=", "$vcpus", "8"], ["=", "$rack", "r2"]]', {'h2'}),
    ('["or", ["=", "$gpu", "true"], ["=", "$vcpus", "16"]]', {'h1', 'h3'}),
    ('["not", ["=", "$gpu", "true"]]', {'h2', 'h3'}),
    ('["not", ["=", "$hypervisor_type", "QEMU"]]', {'h2', 'h3'}),
    ('["==", "$cores", "8"]', {'h2'}),
    ('["!=", "$cores", "8"]', {'h1'}),
    ('["!=", "$rack", "r1"]', {'h2'}),
    ('["s==", "$fw", "10.0"]', {'h2'}),
    ('["s!=", "$rack", "r1"]', {'h2'}),
    ('["s>=", "$fw", "2.1.0"]', {'h1'}),
    ('["s<", "$tag", "a"]', {'h2'}),
    ('["<in>", "$cpu_info", "avx"]', {'h1'}),
    ('["<or>", "$rack", "r2", "r9"]', {'h2'}),
    (['>=', '$local_gb', '200'], {'h2', 'h3'}),
]

EXTRA_SPECS = [
    ({}, {'h1', 'h2', 'h3'}),
    ({'vcpus': '= 16'}, {'h2', 'h3'}),
    ({'cores': '= 10'}, {'h1'}),
    ({'cores': '== 8'}, {'h2'}),
    ({'cores': '!= 8'}, {'h1'}),
    ({'memory_mb': '>= 32768'}, {'h2', 'h3'}),
    ({'memory_mb': '<= 32768'}, {'h1', 'h3'}),
    ({'fw': 's== 2.1.0'}, {'h1'}),
    ({'fw': 's!= 2.1.0'}, {'h2'}),
    ({'fw': 's>= 2.1.0'}, {'h1'}),
    ({'fw': 's> 10.0'}, {'h1'}),
    ({'fw': 's<= 10.0'}, {'h2'}),
    ({'fw': 's< 2.1.0'}, {'h2'}),
    ({'tag': 's< a'}, {'h2'}),
    ({'cpu_info': '<in> avx'}, {'h1'}),
    ({'cpu_info': '<in> AVX'}, {'h3'}),
    ({'rack': '<or> r2 <or> r3'}, {'h2'}),
    ({'hypervisor_type': '<or> QEMU <or> KVM'}, {'h1', 'h2'}),
    ({'rack': 'r1'}, {'h1'}),
    ({'hypervisor_type': 'KVM'}, {'h2'}),
    ({'vcpus': 's== 32'}, {'h2'}),
    ({'vcpus': '>= 8', 'rack': 'r2'}, {'h2'}),
    ({'gpu': 'true', 'rack': 'r2'}, set()),
]

BAD = [
    'not json',
    '"vcpus"',
    '42',
    '[42]',
    '["nope", "$vcpus", "1"]',
    '["=", "vcpus", "1"]',
    '["=", "$", "1"]',
    '["=", "$vcpus"]',
    '["=", "$vcpus", "1", "2"]',
    '["=", "$vcpus", true]',
    '["=", "$vcpus", ["1"]]',
    '["and"]',
    '["not", ["=", "$gpu", "true"], ["=", "$gpu", "true"]]',
    '["and", "vcpus"]',
    '{"vcpus": 8}',
    '{"": "1"}',
    '{"vcpus": ">= eight"}',
    '{"vcpus": ">= 1 2"}',
    '{"vcpus": ">="}',
    '{"vcpus": ">= nan"}',
    '{"rack": "== r1"}',
    '{"hypervisor_type": "!= KVM"}',
    '{"rack": "<or>"}',
    '{"rack": "<or> a b"}',
    '{"rack": "<or> a <or>"}',
]


class CapabilitiesMixin:

    def setUp(self):
        super().setUp()
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            self.names = {
                store_hosts.add_host(session, values, caps):
                values['hypervisor_hostname']
                for values, caps in HOSTS}

    def matching(self, query):
        stmt = sa.select(tables.HOSTS.c.id).where(
            capabilities.compile(query, 'resource_properties'))
        with db_api.context_manager.reader.using(self.ctx) as session:
            return {self.names[host_id]
                    for host_id in session.execute(stmt).scalars()}

    def test_json_filter(self):
        for query, expected in JSON_FILTERS:
            with self.subTest(query=query):
                self.assertEqual(expected, self.matching(query))

    def test_extra_specs(self):
        for query, expected in EXTRA_SPECS:
            with self.subTest(query=query):
                self.assertEqual(expected, self.matching(query))

    def test_blazars_json_equality_works_on_strings(self):
        # Blazar compiles "==", "=" and "!=" to SQL (in)equality on the
        # stored value, whatever it holds.
        for query, expected in [
                ('["==", "$hypervisor_hostname", "h2"]', {'h2'}),
                ('["=", "$hypervisor_hostname", "h2"]', {'h2'}),
                ('["!=", "$hypervisor_hostname", "h2"]', {'h1', 'h3'}),
                ('["==", "$hypervisor_type", "QEMU"]', {'h1'}),
                ('["==", "$rack", "r1"]', {'h1'}),
                ('["==", "$fw", "2.1.0"]', {'h1'}),
                ('["not", ["==", "$tag", "B"]]', {'h1', 'h3'}),
                ('["==", "$vcpus", "eight"]', set()),
        ]:
            with self.subTest(query=query):
                self.assertEqual(expected, self.matching(query))

    def test_json_equality_of_numbers_is_numeric(self):
        self.assertEqual({'h3'}, self.matching('["==", "$vcpus", "16"]'))
        self.assertEqual({'h2'}, self.matching('["==", "$cores", "8"]'))
        self.assertEqual({'h2'}, self.matching('["=", "$cores", "8"]'))

    def test_extra_specs_operators_keep_their_numeric_meaning(self):
        self.assertEqual({'h2'}, self.matching({'cores': '== 8'}))
        error = self.assertRaises(
            exceptions.InvalidInput, capabilities.compile,
            {'hypervisor_hostname': '== h2'}, 'resource_properties')
        self.assertIn("'h2' is not a number", error.reason)

    def test_none_is_no_constraint(self):
        self.assertEqual({'h1', 'h2', 'h3'}, self.matching(None))

    def test_bad_input(self):
        for query in BAD:
            with self.subTest(query=query):
                error = self.assertRaises(
                    exceptions.InvalidInput, capabilities.compile, query,
                    'resource_properties')
                self.assertEqual('resource_properties', error.field)
                self.assertEqual(400, error.code)

    def test_error_names_the_problem(self):
        error = self.assertRaises(
            exceptions.InvalidInput, capabilities.compile,
            '{"vcpus": ">= eight"}', 'hypervisor_properties')
        self.assertEqual("hypervisor_properties: vcpus: 'eight' is not a "
                         "number", str(error))

    def test_set_capabilities_replaces_them(self):
        host_id = {name: id_ for id_, name in self.names.items()}['h1']
        with db_api.writer(self.ctx, clock_mod.SYSTEM) as session:
            store_hosts.set_capabilities(session, host_id, {'cores': 'many'})
        self.assertEqual({'h2'}, self.matching({'cores': '= 1'}))
        self.assertEqual({'h1'}, self.matching({'cores': 'many'}))
        self.assertEqual(set(), self.matching({'gpu': 'true'}))


class TestCapabilities(CapabilitiesMixin, base.DBTestCase):
    pass


class TestCapabilitiesPostgreSQL(CapabilitiesMixin, base.PostgreSQLTestCase):
    pass


class TestCapabilitiesMySQL(CapabilitiesMixin, base.MySQLTestCase):
    pass
