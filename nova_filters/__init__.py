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

"""Nova scheduler filters and weighers of reservation-ext (nova-scheduler's).

:mod:`.reservation_filter` is ``ReservationFilter``: reserved hosts
serve only their leases, and preemptible boots only the hosts they may
run on. :mod:`.reservation_weigher` is ``ReservationWeigher``: a
preemptible boot goes where the next booking comes last.
"""
