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

"""reservation-sandbox: an all-in-one cloud for trying reservation-ext.

Keystone, Nova (with the lease API and ReservationFilter), Placement, an
image API and the reservation engine on 127.0.0.1, started and stopped by
one command (:mod:`reservation_ext.sandbox.main`).
"""
