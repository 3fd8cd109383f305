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

"""The leases DB shared by nova-api, cinder-api and the engine.

* :mod:`.models` declares its tables (SQLAlchemy models);
* :mod:`.tables` gives each table its one handle for SQLAlchemy Core
  statements, and says which module may write it;
* :mod:`.api` opens reader and writer transactions (oslo.db
  enginefacade) and holds the statements every backend runs alike;
* :mod:`.host_gaps` is the gap index of the hosts' bookings (an
  SQLite R*Tree kept by triggers), which the free-host search of a full
  pool reads;
* :mod:`.migration` creates and migrates the schema with alembic, whose
  revisions are in :mod:`.migrations`.
"""
