#!/usr/bin/env python3
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

"""An example billing consumer of reservation-ext's lease notifications.

It listens with oslo.messaging's notification listener and rates what
leases hold while they run, from the notifications alone: the time from
``lease.event.start_lease`` to ``lease.event.end_lease`` (or to
``lease.delete``, for a lease deleted while it runs), cut at every
``lease.update`` (whose resources may differ), gives one usage record of
host-hours, vCPU-hours, RAM GB-hours and disk GB-hours (hosts' local
disks, servers' root disks and volumes). It prints one JSON object a
line: each notification as it arrives (what the lease holds; with
``--payloads`` the whole payload too), and each usage record.

    python3 billing_consumer.py \\
        --transport-url rabbit://billing:secret@broker:5672/ \\
        --topic billing --exchange nova --exchange cinder \\
        --exchange openstack

Services publish on the exchange of their own configuration
(``control_exchange``: ``nova`` in nova-api, ``cinder`` in cinder-api,
``openstack`` in reservation-engine by default); listen to them all, into
one queue. Notifications are handled one at a time, in the order they
arrive: a meter must see a lease's start before its end. It needs only
oslo.config and oslo.messaging, and understands payload_version 1.x.
Ctrl-C or SIGTERM stops it once the notification at hand is handled.
"""

import argparse
import datetime
import json
import signal
import threading

from oslo_config import cfg
import oslo_messaging

EXCHANGES = ('nova', 'cinder', 'openstack')
START = 'lease.event.start_lease'
UPDATE = 'lease.update'
ENDS = ('lease.event.end_lease', 'lease.delete')
DATE_FORMAT = '%Y-%m-%dT%H:%M:%S.%f'
SIZES = ('hosts', 'vcpus', 'memory_mb', 'disk_gb')


def held(payload):
    """What the lease of ``payload`` holds, summed over its resources."""
    total = dict.fromkeys(SIZES, 0)
    for reservation in payload['reservations']:
        add = _ADDERS.get(reservation['resource_type'])
        for resource in reservation['resources'] if add else ():
            add(total, resource)
    return total


def _add_host(total, host):
    total['hosts'] += 1
    total['vcpus'] += host['vcpus']
    total['memory_mb'] += host['memory_mb']
    total['disk_gb'] += host['local_gb']


def _add_servers(total, servers):
    for key in ('vcpus', 'memory_mb', 'disk_gb'):
        total[key] += servers['amount'] * servers[key]


def _add_volume(total, volume):
    total['disk_gb'] += volume['size_gb']


_ADDERS = {'physical:host': _add_host, 'virtual:instance': _add_servers,
           'flavor:instance': _add_servers, 'virtual:volume': _add_volume}


def usage_record(payload, since, until, sizes):
    """The usage of a lease holding ``sizes`` from ``since`` to ``until``."""
    hours = (datetime.datetime.strptime(until, DATE_FORMAT) -
             datetime.datetime.strptime(since, DATE_FORMAT)
             ).total_seconds() / 3600
    return {'lease_id': payload['id'], 'project_id': payload['project_id'],
            'from': since, 'to': until, 'hours': round(hours, 4),
            'host_hours': round(sizes['hosts'] * hours, 4),
            'vcpu_hours': round(sizes['vcpus'] * hours, 4),
            'memory_gb_hours': round(sizes['memory_mb'] / 1024 * hours, 4),
            'disk_gb_hours': round(sizes['disk_gb'] * hours, 4)}


class Meter:
    """Usage records from the notifications of leases, given in order."""

    def __init__(self):
        # lease id -> (since when it runs as it is, what it holds)
        self.running = {}

    def usage(self, event_type, payload):
        """The usage records that this notification closes (a list)."""
        records = []
        now = payload['event_time']
        lease_id = payload['id']
        if lease_id in self.running and event_type in ENDS + (UPDATE,):
            since, sizes = self.running.pop(lease_id)
            records.append(usage_record(payload, since, now, sizes))
        if event_type == START or (event_type == UPDATE and records):
            self.running[lease_id] = (now, held(payload))
        return records


def print_json(line):
    print(json.dumps(line, sort_keys=True), flush=True)


class BillingEndpoint:
    """The listener's endpoint: each lease notification through a Meter.

    ``emit`` gets each line (a dict) to print.
    """

    filter_rule = oslo_messaging.NotificationFilter(
        publisher_id='^reservation$', event_type=r'^lease\.')

    def __init__(self, meter=None, emit=print_json, payloads=False):
        self.meter = meter or Meter()
        self.emit = emit
        self.payloads = payloads

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        if not str(payload.get('payload_version')).startswith('1.'):
            self.emit({'skipped': event_type,
                       'payload_version': payload.get('payload_version')})
            return
        line = {'notification': event_type, 'lease_id': payload['id'],
                'status': payload['status'],
                'event_time': payload['event_time'], 'held': held(payload)}
        if self.payloads:
            line['payload'] = payload
        self.emit(line)
        for record in self.meter.usage(event_type, payload):
            self.emit({'usage': record})


def listener(transport_url, topic, exchanges, endpoint):
    """An oslo.messaging notification listener of ``topic``.

    It consumes the queue ``<topic>.info``, bound to each of
    ``exchanges``; start it with ``start(override_pool_size=1)`` so that
    notifications are handled one at a time, in order.
    """
    conf = cfg.ConfigOpts()
    conf([], project='billing-consumer', default_config_files=[])
    transport = oslo_messaging.get_notification_transport(
        conf, url=transport_url)
    targets = [oslo_messaging.Target(topic=topic, exchange=exchange)
               for exchange in exchanges]
    return oslo_messaging.get_notification_listener(
        transport, targets, [endpoint], executor='threading')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--transport-url', required=True,
                        help='e.g. rabbit://user:password@host:5672/')
    parser.add_argument('--topic', default='notifications',
                        help='one of [oslo_messaging_notifications] topics '
                             'of the services')
    parser.add_argument('--exchange', action='append',
                        help='repeat for each; default: %s'
                        % ', '.join(EXCHANGES))
    parser.add_argument('--payloads', action='store_true',
                        help='print each payload in full too')
    args = parser.parse_args(argv)
    server = listener(args.transport_url, args.topic,
                      args.exchange or EXCHANGES,
                      BillingEndpoint(payloads=args.payloads))
    stop = threading.Event()
    # SIGTERM (a service manager's stop) ends it as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    server.start(override_pool_size=1)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        server.wait()


if __name__ == '__main__':
    main()
