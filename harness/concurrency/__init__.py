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

"""Concurrency of the lease API: workers, clients and the checker.

:mod:`.scenario` runs one concurrent run in a sandbox and gives its
verdict: :mod:`.cloud` connects each client to the sandbox's APIs in a
project of its own, :mod:`.cluster` starts lease API worker processes
on one leases DB, :mod:`.workload` drives them with concurrent clients
and records every request, and :mod:`.checker` judges the history and
the DB afterwards with its own SQL and arithmetic, not the planner's.
"""
