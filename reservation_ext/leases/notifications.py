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

"""Lease notifications (oslo.messaging), e.g. for a billing service.

Every notification has publisher ``reservation`` and priority INFO. Its
payload is the lease view as the API shows it after the change, plus
``payload_version``, ``event_time``, ``before_end_date`` and each
reservation's ``resources`` with their sizes, so that a billing service
can rate leases from the notifications alone; the schema, and the rules
of its versions, are in :mod:`.notification_schema`.

Building a payload takes two steps: :func:`read_payloads` reads the
leases' resources (one :meth:`billing_resources` call per resource type,
whatever the number of leases) in a DB session, and :func:`notify` stamps
the version and time and sends, after the change was committed. Senders
read only when the notifier ``is_enabled()``.

Where notifications go is set in ``[oslo_messaging_notifications]``
(``driver``, ``transport_url``, ``topics``); with no driver configured
nothing is sent, nothing is read for them, and no message broker is
needed. Delivery is at most once: a notification lost on the way (or by a
service that dies between the change and the send) is not sent again.
"""

import oslo_messaging

from reservation_ext import dates
from reservation_ext.leases import notification_schema
from reservation_ext.states import EventType

PUBLISHER_ID = 'reservation'

LEASE_CREATE = 'lease.create'
LEASE_UPDATE = 'lease.update'
LEASE_DELETE = 'lease.delete'
EVENT_PREFIX = 'lease.event.'
# After a lease event's type: it failed for the last time.
ERROR_SUFFIX = '.error'


class _Serializer(oslo_messaging.JsonPayloadSerializer):
    """Turn payloads into JSON primitives, and contexts into dicts.

    Dates become text.
    """

    def serialize_context(self, ctxt):
        """Return the context as a dict, when it has one."""
        return ctxt.to_dict() if hasattr(ctxt, 'to_dict') else ctxt


def get_notifier(conf):
    """Return the lease notifier configured in ``conf``."""
    transport = oslo_messaging.get_notification_transport(conf)
    # With no driver configured, say "noop" so that is_enabled() is false
    # and no payload is built for notifications that go nowhere.
    driver = None if conf.oslo_messaging_notifications.driver else 'noop'
    return oslo_messaging.Notifier(transport, publisher_id=PUBLISHER_ID,
                                   driver=driver, serializer=_Serializer())


def event_type_of(lease_event_type):
    """Return the notification type of an engine event (``start_lease``...)."""
    return EVENT_PREFIX + lease_event_type


def error_type_of(lease_event_type):
    """Return the notification type of an engine event that failed for good.

    ``lease.event.<type>.error``, as OpenStack names an action's failure
    (``compute.instance.create.error``); it is sent when the event's last
    attempt failed and its lease went to ERROR.
    """
    return event_type_of(lease_event_type) + ERROR_SUFFIX


def read_payloads(session, plugins, lease_views):
    """Return the payloads of ``lease_views``, without version or time.

    ``lease_views`` are the API's views.

    Each is the view with ``before_end_date`` and, in each reservation,
    ``resources`` as its plugin's ``billing_resources`` gives them (none
    for a type whose plugin is not loaded).
    """
    resources = {}
    for resource_type, reservations in _by_type(lease_views).items():
        if resource_type in plugins:
            resources.update(plugins[resource_type].billing_resources(
                session, reservations))
    return [_payload(view, resources) for view in lease_views]


def notify(notifier, ctx, event_type, payload, now):
    """Send ``event_type`` with ``payload`` (from :func:`read_payloads`).

    ``event_type`` is one of ``lease.create``, ``lease.update``,
    ``lease.delete``, ``lease.event.<engine event type>`` or
    ``lease.event.<engine event type>.error``; ``now`` (the
    injected clock's) is the ``event_time``. Delivery failures are logged
    by oslo.messaging, never raised: a lease change must not fail because
    the notification bus is down.
    """
    if notifier.is_enabled():
        notifier.info(ctx, event_type, dict(
            payload, payload_version=notification_schema.PAYLOAD_VERSION,
            event_time=dates.format_date(now)))


def _by_type(lease_views):
    by_type = {}
    for view in lease_views:
        for reservation in view['reservations']:
            by_type.setdefault(reservation['resource_type'],
                               []).append(reservation)
    return by_type


def _payload(view, resources):
    before_end = [event['time'] for event in view['events']
                  if event['event_type'] == EventType.BEFORE_END_LEASE]
    return dict(view, before_end_date=before_end[0] if before_end else None,
                reservations=[
                    dict(reservation,
                         resources=resources.get(reservation['id'], []))
                    for reservation in view['reservations']])
