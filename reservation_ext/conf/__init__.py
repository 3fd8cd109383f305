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

"""Configuration options of reservation-ext, registered on import.

A leaf package: it imports no other module of reservation-ext, so that
every module may read options from it. This module holds the options
of ``[reservation]``, ``[reservation_database]`` (oslo.db's) and
``[reservation_client]`` (keystoneauth1's, for the service user), and
registers (:func:`register_opts`) and lists (:func:`list_opts`, for
oslo-config-generator) those of every group; the options of one
feature live in a module of their own:

* :mod:`.enforcement` holds ``[enforcement]``: Blazar's enforcement
  filters and the time quotas;
* :mod:`.power` holds ``[power]``: which driver switches hosts, and
  when.

The options can be read from nova.conf, cinder.conf or the engine's own
file.
"""

import copy

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_db import options as db_options

from reservation_ext.conf import enforcement as enforcement_options
from reservation_ext.conf import power as power_options

GROUP = 'reservation'
DB_GROUP = 'reservation_database'
# keystoneauth1 options of the service user that calls Nova and Placement.
CLIENT_GROUP = 'reservation_client'
DEFAULT_CONNECTION = 'sqlite:////var/lib/reservation-ext/reservation.sqlite'

reservation_opts = [
    cfg.IntOpt('cleaning_time', default=0, min=0,
               help='Minutes kept free before and after every host '
                    'allocation, so that a host can be cleaned between two '
                    'leases. The planner treats a host as busy during '
                    '[start - cleaning_time, end + cleaning_time].'),
    cfg.IntOpt('minutes_before_end_lease', default=60, min=0,
               help='When a lease gives no before_end_date, the '
                    'before_end_lease event fires this many minutes before '
                    'the end (or at the start, when the lease is shorter).'),
    cfg.FloatOpt('event_poll_interval', default=10.0, min=0.01,
                 mutable=True,
                 help='Seconds between two polls of the engine for due '
                      'events while it finds none, or while all its '
                      'workers are busy and none finishes.'),
    cfg.IntOpt('event_claim_timeout', default=300, min=1,
               help='Seconds an engine holds the claim on an event. While '
                    'the engine runs the event it renews the claim every '
                    'third of this, so a slow plugin action never outlives '
                    'it. A claim that is not renewed (its engine died, '
                    'hangs or lost the database for this long) expires '
                    'and another engine takes the event over.'),
    cfg.IntOpt('event_batch_size', default=100, min=1,
               help='How many due events one engine claims in one poll, '
                    'at most as many as it has free workers '
                    '(engine_workers).'),
    cfg.IntOpt('engine_workers', default=8, min=1,
               help='How many lease events one engine runs at once, each '
                    'in a thread of its own: a slow action (waiting for '
                    'servers to be gone, an image or a volume) holds one '
                    'worker and the other events run meanwhile. Each '
                    'worker may hold a database connection while it '
                    'records an outcome.'),
    cfg.IntOpt('event_max_attempts', default=5, min=1,
               help='How many times an event is tried before the event and '
                    'its lease go to ERROR.'),
    cfg.FloatOpt('event_retry_backoff', default=2.0, min=0,
                 help='Seconds before the first retry of a failed event; '
                      'each further retry waits twice as long.'),
    cfg.StrOpt('default_lease_duration', default='30d',
               help='How long a lease lasts when a reserved server or '
                    'volume asks for none (no end or duration in '
                    'lease_params): seconds, or days, hours, minutes and '
                    'seconds as in "30d" or "1d12h".'),
    cfg.IntOpt('volume_reservable_gb', default=0, min=0,
               help='GB of block storage that virtual:volume reservations '
                    'may hold at the same time, across the cloud. A '
                    'reservation is granted only if its size plus the '
                    'sizes of all reservations whose leases overlap its '
                    'window fit. 0 (the default) makes no volume capacity '
                    'reservable. Keep it below the capacity of the '
                    'backends that serve reserved volumes, less what '
                    'ordinary volumes need.'),
    cfg.StrOpt('instance_on_end', default='delete',
               choices=[('delete', 'delete the server'),
                        ('snapshot_delete', 'snapshot the server to an '
                         'image of its project, then delete it'),
                        ('shelve', 'shelve the server (offloaded: it '
                         'keeps no compute resources)')],
               help='What happens to a reserved server at the end of its '
                    'lease when lease_params gives no on_end.'),
    cfg.BoolOpt('reserve_all_instances', default=False,
                help='Give every server booted without reservation hints a '
                     'default lease: starting now, in the shared pool, for '
                     'default_lease_duration (a "default reservation", for '
                     'developer labs where servers must not live forever).'),
    cfg.IntOpt('proposal_ttl', default=300, min=1,
               help='Seconds a schedule proposal holds its capacity: '
                    'within them, a lease made from it (proposal_id) is '
                    'sure to get it; afterwards the capacity is free '
                    'again.'),
    cfg.IntOpt('proposal_search_days', default=365, min=1,
               help='When a schedule proposals request gives no '
                    'not_after, proposals may start up to this many days '
                    'after not_before.'),
    cfg.IntOpt('max_proposals', default=20, min=1,
               help='The largest count of schedule proposals that one '
                    'request may ask for (each holds capacity until it '
                    'expires).'),
    cfg.StrOpt('freepool_name', default='freepool',
               help='Name of the Nova host aggregate that holds the '
                    'reservable hosts not in an active lease. No ordinary '
                    'instance lands on its hosts.'),
    cfg.StrOpt('host_on_end', default='release',
               choices=[('release', 'the instances stay; the hosts go '
                         'back to the free pool'),
                        ('delete_instances', 'the instances are deleted; '
                         'the hosts go back to the free pool'),
                        ('recycle', 'the hosts wait in the recycling pool, '
                         'taking no new instance, until their instances '
                         'are gone, then go back to the free pool')],
               help='What happens at the end of a physical:host '
                    'reservation whose request names no on_end (Blazar\'s '
                    'clients never name one). Blazar deletes the '
                    'instances: delete_instances behaves as Blazar does.'),
    cfg.IntOpt('preemption_lead_time', default=600, min=0,
               help='Seconds before a booking starts (a host lease, or a '
                    'slice of a host for a reserved server) at which the '
                    'engine stops the preemptible instances that stand in '
                    'its way. From then on no new preemptible instance '
                    'lands on that host. Make it longer than the engine\'s '
                    'poll interval plus the time Nova takes to delete or '
                    'shelve a server, so that leases start on time.'),
    cfg.StrOpt('preemptible_on_reclaim', default='delete',
               choices=[('delete', 'delete the preemptible instance'),
                        ('shelve', 'shelve it (offloaded: its disk is '
                         'kept as an image, it holds no compute resources; '
                         'its owner may unshelve it elsewhere)')],
               help='What becomes of a preemptible instance (flavor extra '
                    'spec reservation:preemptible=true, or the hint '
                    'preemptible=true) whose reservable capacity a lease '
                    'needs.'),
    cfg.FloatOpt('preemptible_weight_multiplier', default=10.0,
                 help='Multiplier of the ReservationWeigher of Nova\'s '
                      'scheduler ([filter_scheduler] weight_classes), '
                      'which weighs the hosts for a preemptible request '
                      'by how long a server would run there before a '
                      'booking reclaims it: the latest first. Nova\'s own '
                      'weighers have multipliers of 1.0 by default, so '
                      'that 10.0 makes this one decide for preemptible '
                      'requests and theirs break its ties. Other requests '
                      'get no weight from it.'),
    cfg.IntOpt('preemptible_work_interval', default=300, min=0,
               help='Seconds between the engine\'s surveys of the '
                    'preemptible instances running on reservable hosts '
                    '(one listing of every project\'s servers through '
                    'Nova, by each engine). A lease that starts within '
                    'preemption_lead_time then gets, of the hosts that '
                    'suit it equally, those whose preemptible instances '
                    'have done the least work so far, and none of a host '
                    'that runs none is lost. 0 turns the survey off: such '
                    'leases take their hosts in the usual order.'),
    cfg.IntOpt('preemptible_weigher_horizon', default=86400, min=60,
               help='Seconds ahead that the ReservationWeigher looks for '
                    'the bookings that would reclaim a preemptible '
                    'server: hosts whose next booking comes later than '
                    'that are as good as hosts without one. A longer '
                    'horizon tells more hosts apart and reads more '
                    'bookings per request.'),
    cfg.BoolOpt('fill_gaps', default=True,
                help='Book a reserved server whose lease starts now (nova '
                     'boot --hint reserved=True with an end) as a slice of '
                     'a reservable host, in the gap before that host\'s '
                     'next booking, when one fits; otherwise, or when '
                     'false, it runs in the shared pool. A server booked '
                     'in a gap ends at its lease\'s end without fail, and '
                     'its lease can only be extended while the host stays '
                     'free.'),
    cfg.StrOpt('recycle_pool_name', default='recyclepool',
               help='Name of the Nova host aggregate that holds the hosts '
                    'of ended host reservations (on_end recycle) until '
                    'their instances are gone. No new instance lands on '
                    'its hosts.'),
    cfg.BoolOpt('host_monitor', default=False,
                help='Watch the nova-compute services of the reservable '
                     'hosts (GET /os-services?binary=nova-compute) from '
                     'the engine. A host whose service is down or disabled '
                     'becomes unreservable, and the reservations that hold '
                     'it get a replacement host when one matches and is '
                     'free, or their lease is marked degraded; when the '
                     'service is up and enabled again the host is '
                     'reservable again and degraded clears. As Blazar\'s '
                     'enable_polling_monitor.'),
    cfg.IntOpt('host_monitor_interval', default=60, min=0,
               help='Seconds between two reads of the nova-compute '
                    'services when host_monitor is set: one of the '
                    'engines reads them per interval, and then searches '
                    'again for the replacements that degraded '
                    'reservations miss; 0 reads them at every poll of '
                    'every engine. As Blazar\'s polling_interval.'),
    cfg.IntOpt('healing_interval', default=60, min=0,
               help='Minutes ahead: the bookings on a failed host that '
                    'start within this time (or have started) are healed '
                    'now; later ones when their time comes, so that a '
                    'host that comes back meanwhile keeps them. 0 heals '
                    'every booking of the failed host at once. As '
                    'Blazar\'s healing_interval.'),
]

CONF = cfg.CONF


def register_opts(conf):
    """Register all options of reservation-ext on ``conf``."""
    conf.register_opts(reservation_opts, group=GROUP)
    conf.register_opts(_database_opts(), group=DB_GROUP)
    ks_loading.register_session_conf_options(conf, CLIENT_GROUP)
    ks_loading.register_auth_conf_options(conf, CLIENT_GROUP)
    ks_loading.register_adapter_conf_options(conf, CLIENT_GROUP)
    enforcement_options.register_opts(conf)
    power_options.register_opts(conf)


def _database_opts():
    """Return oslo.db's options, with this project's default connection."""
    opts = copy.deepcopy(db_options.database_opts)
    for opt in opts:
        if opt.dest == 'connection':
            opt.default = DEFAULT_CONNECTION
    return opts


def list_opts():
    """List options for oslo-config-generator, entry point oslo.config.opts."""
    return [(GROUP, reservation_opts),
            (DB_GROUP, _database_opts()),
            (CLIENT_GROUP, _keystoneauth_opts())] + \
        enforcement_options.list_opts() + power_options.list_opts()


def _keystoneauth_opts():
    """List session, adapter and password-plugin options, for the sample."""
    return (ks_loading.get_session_conf_options() +
            ks_loading.get_adapter_conf_options(include_deprecated=False) +
            ks_loading.get_auth_common_conf_options() +
            ks_loading.get_auth_plugin_conf_options('password'))


register_opts(CONF)
