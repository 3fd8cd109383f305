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

Every notification has publisher ``reservation``, priority INFO and the
lease view as payload. Where they go is set in
``[oslo_messaging_notifications]`` (``driver``, ``transport_url``,
``topics``); with no driver configured nothing is sent, and no message
broker is needed.
"""

import oslo_messaging

PUBLISHER_ID = 'reservation'

LEASE_CREATE = 'lease.create'
LEASE_UPDATE = 'lease.update'
LEASE_DELETE = 'lease.delete'
EVENT_PREFIX = 'lease.event.'


class _Serializer(oslo_messaging.JsonPayloadSerializer):
    """Payload to JSON primitives (dates as strings), context to a dict."""

    def serialize_context(self, ctxt):
        return ctxt.to_dict() if hasattr(ctxt, 'to_dict') else ctxt


def get_notifier(conf):
    """Return the lease notifier configured in ``conf``."""
    transport = oslo_messaging.get_notification_transport(conf)
    # With no driver configured, say "noop" so that is_enabled() is false
    # and notify() skips building payloads that go nowhere.
    driver = None if conf.oslo_messaging_notifications.driver else 'noop'
    return oslo_messaging.Notifier(transport, publisher_id=PUBLISHER_ID,
                                   driver=driver, serializer=_Serializer())


def event_type_of(lease_event_type):
    """The notification of an engine event (``start_lease``, ...)."""
    return EVENT_PREFIX + lease_event_type


def notify(notifier, ctx, event_type, lease_view):
    """Send the notification ``event_type`` with ``lease_view`` as payload.

    ``event_type`` is one of ``lease.create``, ``lease.update``,
    ``lease.delete`` or ``lease.event.<engine event type>``. Delivery
    failures are logged by oslo.messaging, never raised: a lease change
    must not fail because the notification bus is down.
    """
    if notifier.is_enabled():
        notifier.info(ctx, event_type, lease_view)
