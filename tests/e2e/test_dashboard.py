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

"""Horizon with the unmodified blazar-dashboard, in a real browser.

The sandbox runs with ``--dashboard``; a headless Chromium logs in as
the demo user, leases a host through the Reservations > Leases panel,
sees the lease ACTIVE in the list and on its detail page, and deletes it;
the admin sees the reservable hosts, one's details, and the host calendar
with the lease.
Every page is saved as a screenshot in ``$RESERVATION_SCREENSHOT_DIR``
(default: a directory under the test's temporary directory) and must
show no error banner (see :mod:`tests.e2e.browser`).
"""

import datetime
import itertools
import os

import fixtures
from selenium.common import exceptions as selenium_exceptions
from selenium.webdriver.support import ui
from testtools import content

from tests.e2e import base
from tests.e2e import browser

# compute-2 is the only reservable host with a GPU: the lease gets it.
RESERVABLE = {'compute-1': 'false', 'compute-2': 'true'}
LEASED_HOST = 'compute-2'
LEASE = 'dashboard-lease'
GPU = '["=", "$gpu", "true"]'


class TestDashboard(base.SandboxTestCase):

    HOSTS = 2
    OPTIONS = ('--dashboard',)

    @classmethod
    def setUpClass(cls):
        # Before the sandbox starts: skip early without a browser.
        browser.executables()
        super().setUpClass()

    def setUp(self):
        super().setUp()
        self.add_reservable_hosts(RESERVABLE)
        self.screenshots = os.environ.get(
            browser.SCREENSHOT_ENV) or os.path.join(
                self.useFixture(fixtures.TempDir()).path, 'screenshots')
        os.makedirs(self.screenshots, exist_ok=True)
        self.numbers = itertools.count(1)
        self.addDetail('screenshots', content.text_content(self.screenshots))

    def dashboard_url(self):
        [line] = [line for line in self.sandbox.output
                  if line.startswith('dashboard ')]
        return line.split()[1]

    def log_in(self, user):
        """Log in as ``user`` in a new browser (``self.browser``)."""
        self.browser = browser.Browser(self.dashboard_url(),
                                       self.screenshots, self.numbers)
        self.addCleanup(self.browser.close)
        self.browser.log_in(user, self.sandbox.env[user]['OS_PASSWORD'])

    def test_a_member_leases_a_host_that_the_admin_sees_in_the_calendar(self):
        self.log_in('demo')
        self.create_lease()
        self.see_lease_active_in_the_list()
        reservation_id = self.see_lease_details()
        self.log_in('admin')
        self.see_the_reservable_hosts()
        self.see_the_host_calendar(reservation_id)
        self.log_in('demo')
        self.delete_lease()

    def create_lease(self):
        page = self.browser
        page.open('project/leases/create/')
        end = datetime.datetime.now(datetime.timezone.utc) + \
            datetime.timedelta(days=1)
        page.wait_for('#id_name').send_keys(LEASE)
        page.find('#id_end_date').send_keys(end.strftime('%Y-%m-%d %H:%M'))
        ui.Select(page.find('#id_resource_type')).select_by_value('host')
        page.find('#id_resource_properties').send_keys(GPU)
        page.settle('create-lease-form')
        page.click('form [type=submit]')
        page.wait_for('#leases')
        self.assertIn('Lease %s was successfully created.' % LEASE,
                      page.text())
        page.settle('lease-created')

    def lease_row(self):
        rows = [row for row in self.browser.find_all('#leases tbody tr')
                if row.get_attribute('data-display') == LEASE]
        if not rows:
            raise selenium_exceptions.NoSuchElementException(
                'no row of lease %s in the list' % LEASE)
        [row] = rows
        return row

    def see_lease_active_in_the_list(self):
        self.browser.open('project/leases/')
        self.browser.reload_until(
            lambda page: 'ACTIVE' in self.lease_row().text.split())
        self.browser.settle('lease-list-active')

    def see_lease_details(self):
        """The detail page; the id of the lease's reservation."""
        page = self.browser
        self.lease_row().find_element('css selector', 'a').click()
        page.wait_for('.detail')
        text = page.text()
        for shown in (LEASE, 'ACTIVE', 'physical:host', GPU):
            self.assertIn(shown, text)
        page.settle('lease-detail')
        [lease] = [lease for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')
            if lease['name'] == LEASE]
        [reservation] = base.listed_objects(self.run_json(
            ['openstack', 'reservation', 'lease', 'show', lease['id']],
            user='demo')['reservations'])
        self.assertIn(reservation['id'], text)
        return reservation['id']

    def see_the_reservable_hosts(self):
        page = self.browser
        page.open('admin/hosts/')
        page.wait_for('#hosts')
        page.settle('admin-hosts')
        names = {row.find_element('css selector', 'td a').text
                 for row in page.find_all('#hosts tbody tr')}
        self.assertEqual(set(RESERVABLE), names)
        [link] = [row.find_element('css selector', 'td a')
                  for row in page.find_all('#hosts tbody tr')
                  if row.find_element('css selector', 'td a').text ==
                  LEASED_HOST]
        link.click()
        page.wait_for('.detail')
        # The CPU specs come from the host's cpu_info, parsed as JSON.
        self.assertIn('x86_64', page.text())
        page.settle('admin-host-detail')

    def see_the_host_calendar(self, reservation_id):
        page = self.browser
        page.open('project/leases/calendar/host/')
        # A series per reservation, named by its id; a bar per host.
        page.wait_for('#blazar-calendar-host .apexcharts-series'
                      '[seriesName="%s"] path.apexcharts-rangebar-area'
                      % reservation_id)
        labels = page.find('#blazar-calendar-host .apexcharts-yaxis').text
        for host in RESERVABLE:
            self.assertIn(host, labels)
        page.settle('host-calendar')

    def delete_lease(self):
        page = self.browser
        page.open('project/leases/')
        page.wait_for('#leases')
        self.lease_row().find_element(
            'css selector', 'button[id$="__action_delete"]').click()
        page.wait_for('.modal-footer .btn-danger')
        page.settle('delete-lease-confirm')
        page.click('.modal-footer .btn-danger')
        page.reload_until(lambda page: LEASE not in page.find(
            '#leases').text)
        page.settle('lease-deleted')
        self.assertNotIn(LEASE, [lease['name'] for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')])
