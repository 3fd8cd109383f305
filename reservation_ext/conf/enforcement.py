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

"""The ``[enforcement]`` options: Blazar's, plus the time quotas.

The filter options keep Blazar's names and meaning (``enabled_filters``,
``max_lease_duration``, ``external_service_base_endpoint``, ...), so that a
``[enforcement]`` section written for Blazar works unchanged here.
``reservation_extension_window`` is the name Chameleon's Blazar gives the
extension window. The TLS options of the external service
(``external_service_cafile``, ``_certfile``, ``_keyfile``, ``_insecure``)
and the time quotas are this project's own: Blazar has none.
"""

from oslo_config import cfg

GROUP = 'enforcement'
NO_LIMIT = -1

common_opts = [
    cfg.ListOpt('enabled_filters', default=[],
                help='Usage enforcement filters run on every lease create '
                     'and update and at every lease end, in this order: '
                     'MaxLeaseDurationFilter, ExternalServiceFilter (as in '
                     'Blazar). A refusal is answered 403 with the reason '
                     'and changes nothing.'),
    cfg.StrOpt('auth_url',
               help='Identity endpoint sent to the filters (and to the '
                    'external service) as context.auth_url, as Blazar '
                    'sends its catalog\'s identity endpoint.'),
    cfg.StrOpt('region_name',
               help='Region sent to the filters as context.region_name.'),
]

max_lease_duration_opts = [
    cfg.IntOpt('max_lease_duration', default=NO_LIMIT, min=NO_LIMIT,
               help='MaxLeaseDurationFilter: the longest lease, in '
                    'seconds, from its start to its end. -1: no limit.'),
    cfg.ListOpt('max_lease_duration_exempt_project_ids', default=[],
                help='MaxLeaseDurationFilter: projects whose leases may be '
                     'of any length.'),
    cfg.IntOpt('reservation_extension_window', default=NO_LIMIT,
               min=NO_LIMIT,
               help='MaxLeaseDurationFilter: -1 (the default, as in '
                    'Blazar): an update may make a lease at most '
                    'max_lease_duration long, from its start to its new '
                    'end. N >= 0: a lease may be extended only in the last '
                    'N seconds before its current end, and then by at most '
                    'max_lease_duration past that end (so a user may keep '
                    'a lease by renewing it near its end, as Chameleon '
                    'runs it).'),
]

external_service_opts = [
    cfg.URIOpt('external_service_base_endpoint', schemes=['http', 'https'],
               help='ExternalServiceFilter: the base URL of the service. '
                    'The calls go to check-create, check-update and on-end '
                    'resolved against it as a relative URL (so it should '
                    'end with "/": http://svc/v1/ gives '
                    'http://svc/v1/check-create).'),
    cfg.URIOpt('external_service_check_create_endpoint',
               schemes=['http', 'https'],
               help='ExternalServiceFilter: the full URL of check-create, '
                    'instead of the one under the base endpoint.'),
    cfg.URIOpt('external_service_check_update_endpoint',
               schemes=['http', 'https'],
               help='ExternalServiceFilter: the full URL of check-update, '
                    'instead of the one under the base endpoint.'),
    cfg.URIOpt('external_service_on_end_endpoint',
               schemes=['http', 'https'],
               help='ExternalServiceFilter: the full URL of on-end, '
                    'instead of the one under the base endpoint.'),
    cfg.StrOpt('external_service_token', default='', secret=True,
               help='ExternalServiceFilter: a static token sent in the '
                    'X-Auth-Token header of every call (none when empty).'),
    cfg.FloatOpt('external_service_timeout', default=10.0, min=0.1,
                 help='ExternalServiceFilter: seconds to wait for the '
                      'service. A check that gets no answer is refused '
                      'with 503 and changes nothing.'),
    cfg.StrOpt('external_service_cafile',
               help='ExternalServiceFilter: PEM file of the CA '
                    'certificates that an https service\'s certificate is '
                    'verified against (default: the CA bundle of the '
                    'requests library, or REQUESTS_CA_BUNDLE).'),
    cfg.StrOpt('external_service_certfile',
               help='ExternalServiceFilter: PEM file of the client '
                    'certificate presented to an https service that asks '
                    'for one (none when unset).'),
    cfg.StrOpt('external_service_keyfile',
               help='ExternalServiceFilter: PEM file of the private key of '
                    'external_service_certfile, when that file does not '
                    'hold it.'),
    cfg.BoolOpt('external_service_insecure', default=False,
                help='ExternalServiceFilter: do not verify an https '
                     'service\'s certificate. For tests only: anyone on the '
                     'way may then answer for the service.'),
]

time_quota_opts = [
    cfg.BoolOpt('time_quotas', default=False,
                help='Enforce time quotas: the Keystone unified limits '
                     'host_hours, vcpu_hours and gb_hours of the service '
                     'that [oslo_limit] names (the reservation service), '
                     'read with oslo.limit. A resource with neither a '
                     'registered limit nor a project limit is not limited.'),
    cfg.IntOpt('time_quota_window_days', default=30, min=0,
               help='The rolling window of the time quotas: a project\'s '
                    'usage is the hours its leases reserve from this many '
                    'days before now onwards (the past part of the window '
                    'and everything booked ahead).'),
]

ALL_OPTS = (common_opts + max_lease_duration_opts + external_service_opts +
            time_quota_opts)


def register_opts(conf):
    """Register the ``[enforcement]`` options on ``conf``."""
    conf.register_opts(ALL_OPTS, group=GROUP)


def list_opts():
    """Return ``(group, options)`` for the sample config."""
    return [(GROUP, ALL_OPTS)]
