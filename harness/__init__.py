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

"""Harnesses that drive a running cloud, shared by tests and benchmarks.

Both ``tests/`` and ``bench/`` import this package; it imports neither,
so that a benchmark is the longer run of a test without depending on the
tests. :mod:`.sandbox` starts and stops a ``reservation-sandbox``;
:mod:`.engine_ha` runs lease lifecycles while engines of
:mod:`.killing_engine` die at random; :mod:`.concurrency` runs concurrent
clients against lease API workers and checks the outcome; :mod:`.burst`
starts and ends many leases at one instant, with the engines' calls
going through :mod:`.fault_proxy`, which records them and injects
faults; :mod:`.blazar_suite` runs Blazar's own tempest tests against a
sandbox, behind DevStack's paths served by the same proxy.
"""
