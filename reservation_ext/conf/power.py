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

"""The ``[power]`` options: which driver switches hosts, and when."""

from oslo_config import cfg

GROUP = 'power'

power_opts = [
    cfg.StrOpt('driver', default='noop',
               help='The power driver, from the stevedore namespace '
                    'reservation_ext.power: noop (nothing is switched, '
                    'every host counts as on), redfish (the hosts\' BMCs, '
                    'through sushy) or ironic (the Bare Metal API, for '
                    'computes that are Ironic nodes).'),
    cfg.IntOpt('min_off_time', default=1800, min=0,
               help='Seconds: a reservable host is switched off only when '
                    'it can stay off at least this long before it must be '
                    'switched on again for its next booking. Bounds the '
                    'power cycles per host.'),
    cfg.IntOpt('power_on_lead_time', default=900, min=0,
               help='Seconds before a booking starts at which its host, '
                    'if off, is switched on: long enough for the host to '
                    'boot and its nova-compute service to report up, so '
                    'that no lease starts late.'),
    cfg.IntOpt('power_on_timeout', default=600, min=1,
               help='Seconds a host may take, after it was switched on, '
                    'until Nova reports its nova-compute service up. A '
                    'host still not up by then is failed (failure '
                    '"power"): the host monitor\'s healing moves its '
                    'bookings to another host.'),
    cfg.IntOpt('spare_hosts', default=1, min=0,
               help='Idle reservable hosts kept on (the preferred ones '
                    'first), so that a lease made to start now, or a '
                    'booking healed away from a host that failed to come '
                    'up, finds a host that is on.'),
    cfg.FloatOpt('spare_share', default=0.25, min=0, max=1,
                 help='The share of the reservable hosts (those that have '
                      'not failed) kept on while idle, when that is more '
                      'than spare_hosts: size it to the largest leases '
                      'users make to start at once, which must find their '
                      'hosts on. 0: spare_hosts alone.'),
    cfg.BoolOpt('reclaim_preemptible_for_power', default=False,
                help='Whether an idle host that runs only preemptible '
                     'servers is switched off anyway (they are stopped '
                     'as [reservation] preemptible_on_reclaim says). By '
                     'default a host that runs any server stays on.'),
    cfg.StrOpt('host_weight_property',
               help='A host extra capability (a number, e.g. "watts") '
                    'that orders the planner\'s choice among equally '
                    'valid free hosts, and which idle hosts stay on as '
                    'spares. Unset: the lowest host id first.'),
    cfg.StrOpt('host_weight_order', default='ascending',
               choices=[('ascending', 'the lowest value first (watts)'),
                        ('descending', 'the highest value first '
                                       '(efficiency)')],
               help='Which hosts host_weight_property puts first. Hosts '
                    'without the property come after those with it.'),
    cfg.StrOpt('credentials_file',
               help='A YAML file of BMC access per hypervisor hostname '
                    '(address, system_id, username, password, verify), '
                    'for the redfish driver; a host\'s redfish_* extra '
                    'capabilities take over from it. Keeps credentials '
                    'out of the leases DB.'),
    cfg.IntOpt('claim_timeout', default=300, min=1,
               help='Seconds an engine holds a host while it switches '
                    'it; an engine that dies meanwhile leaves the '
                    'transition to another engine after this long.'),
]


def register_opts(conf):
    """Register the ``[power]`` options on ``conf``."""
    conf.register_opts(power_opts, group=GROUP)


def list_opts():
    """List the ``[power]`` options for oslo-config-generator."""
    return [(GROUP, power_opts)]
