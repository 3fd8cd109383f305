"""Create a lease of a network segment with python-blazarclient's library.

    python network-lease.py NAME END [START]

START defaults to now; dates are "YYYY-MM-DD HH:MM" (UTC).
"""
import os
import sys

from blazarclient import client
from keystoneauth1 import loading
from keystoneauth1 import session

auth = loading.get_plugin_loader('password').load_from_options(
    auth_url=os.environ['OS_AUTH_URL'], username=os.environ['OS_USERNAME'],
    password=os.environ['OS_PASSWORD'],
    project_name=os.environ['OS_PROJECT_NAME'],
    user_domain_name=os.environ['OS_USER_DOMAIN_NAME'],
    project_domain_name=os.environ['OS_PROJECT_DOMAIN_NAME'])
blazar = client.Client(session=session.Session(auth=auth),
                       service_type='reservation')
lease = blazar.lease.create(
    name=sys.argv[1], start=sys.argv[3] if len(sys.argv) > 3 else 'now',
    end=sys.argv[2], events=[],
    reservations=[{'resource_type': 'network', 'network_name': 'my-net',
                   'network_properties': '["=", "$network_type", "vlan"]',
                   'resource_properties': '["=", "$stitch", "true"]',
                   'subnet_cidr': '10.20.0.0/24',
                   'router_external_network': 'public'}])
print(lease['id'], lease['status'])
