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

"""Lease, reservation and event statuses (Blazar's names)."""


class LeaseStatus:
    """Name the statuses of a lease and the moves allowed between them."""
    PENDING = 'PENDING'
    STARTING = 'STARTING'
    ACTIVE = 'ACTIVE'
    TERMINATING = 'TERMINATING'
    TERMINATED = 'TERMINATED'
    UPDATING = 'UPDATING'
    DELETING = 'DELETING'
    ERROR = 'ERROR'

    # Every status, in the order of a lease's life.
    ALL = (PENDING, STARTING, ACTIVE, TERMINATING, TERMINATED, UPDATING,
           DELETING, ERROR)
    # Statuses in which a user action (update, delete) may begin.
    STABLE = frozenset([PENDING, ACTIVE, TERMINATED, ERROR])
    # Transitions the engine and the lease service may make.
    TRANSITIONS = {
        PENDING: frozenset([STARTING, UPDATING, DELETING, ERROR]),
        STARTING: frozenset([ACTIVE, ERROR]),
        ACTIVE: frozenset([TERMINATING, UPDATING, DELETING, ERROR]),
        # An update goes back to where it came from (or fails).
        UPDATING: frozenset([PENDING, ACTIVE, ERROR]),
        TERMINATING: frozenset([TERMINATED, ERROR]),
        TERMINATED: frozenset([DELETING]),
        DELETING: frozenset([ERROR]),
        ERROR: frozenset([STARTING, TERMINATING, DELETING]),
    }

    @classmethod
    def can_move(cls, current, new):
        """Return whether a lease may go from ``current`` to ``new``."""
        return new in cls.TRANSITIONS.get(current, ())


class ReservationStatus:
    """Name the statuses of a reservation."""
    PENDING = 'pending'
    ACTIVE = 'active'
    DELETED = 'deleted'
    ERROR = 'error'


class EventType:
    """Name the lease events, in the order they happen."""
    START_LEASE = 'start_lease'
    END_LEASE = 'end_lease'
    BEFORE_END_LEASE = 'before_end_lease'
    ALL = (START_LEASE, BEFORE_END_LEASE, END_LEASE)


class EventStatus:
    """Name the statuses of a lease event; ``FINISHED`` are the last."""
    UNDONE = 'UNDONE'
    IN_PROGRESS = 'IN_PROGRESS'
    DONE = 'DONE'
    ERROR = 'ERROR'
    FINISHED = frozenset([DONE, ERROR])


class PowerState:
    """Name the power states of a reservable host (``computehosts``)."""
    ON = 'on'
    OFF = 'off'
    POWERING_ON = 'powering_on'
    ALL = (ON, OFF, POWERING_ON)
