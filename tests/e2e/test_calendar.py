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

"""The reservation calendars (``reservation_ext.calendars``) in a browser.

The sandbox runs with ``--dashboard``, which enables the calendar panels
beside blazar-dashboard's. The demo user has a host lease and an
instance capacity lease (made with the CLI), a preemptible server and a
gap-filling one (a server leased from now for six hours, booted with
the unmodified client), and sees the leases in the *Hosts*, *Servers*
and *Instance capacity* rows of Project > Reservations > Calendar; asks
for "1 host with gpu=true for 2 days" and gets the free capacity as a
step chart (none while the lease holds the only GPU host) and proposal
slots (after it); clicks the first slot, which makes a lease that the
calendar and the lease API then show. The admin sees the hosts by time
in Admin > Reservation > Calendar, both host leases on the GPU host,
the capacity lease's seat on another, the two servers as their host's
load, each host's power state and the failure of the host whose
nova-compute is disabled; the demo user has no such panel.
Every page is saved as a numbered PNG in
``$RESERVATION_CALENDAR_SCREENSHOT_DIR`` (default: the checkout's
``.ci/artifacts/calendar/``).
"""

import datetime
import glob
import itertools
import json
import os

from selenium.webdriver.support import ui
from testtools import content

from tests.e2e import base
from tests.e2e import browser

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCREENSHOT_ENV = 'RESERVATION_CALENDAR_SCREENSHOT_DIR'
# compute-2 is the only reservable host with a GPU; compute-3's
# nova-compute is disabled, so that it shows as failed (and the capacity
# lease's seat goes to compute-1).
RESERVABLE = {'compute-1': 'false', 'compute-2': 'true',
              'compute-3': 'false'}
GPU_HOST = 'compute-2'
SEAT_HOST = 'compute-1'
FAILED_HOST = 'compute-3'
GPU = '["=", "$gpu", "true"]'
HOST_LEASE = 'calendar-host-lease'
CAPACITY_LEASE = 'calendar-capacity-lease'
SLOT_LEASE = 'calendar-slot-lease'
SPOT = 'calendar-spot'
GAP_SERVER = 'calendar-gap'
GAP_LEASE = 'calendar-gap-lease'
HYPERVISOR = 'OS-EXT-SRV-ATTR:hypervisor_hostname'
PAGE = 'project/reservation_calendar/'
ADMIN_PAGE = 'admin/reservation_calendar/'


def _parsed(text):
    """A lease API or calendar date as an aware UTC datetime."""
    text = text.rstrip('Z').split('.')[0]
    return datetime.datetime.strptime(text, '%Y-%m-%dT%H:%M:%S').replace(
        tzinfo=datetime.timezone.utc)


class TestCalendar(base.SandboxTestCase):
    """Both calendars, as the demo user and the admin, in Chromium."""

    HOSTS = 3
    OPTIONS = ('--dashboard',)

    @classmethod
    def setUpClass(cls):
        """The screenshot directory, emptied; then the sandbox."""
        # Before the sandbox starts: skip early without a browser.
        browser.executables()
        cls.screenshots = os.environ.get(SCREENSHOT_ENV) or os.path.join(
            TOP, '.ci', 'artifacts', 'calendar')
        os.makedirs(cls.screenshots, exist_ok=True)
        # This run's pictures only, numbered across the tests.
        for old in glob.glob(os.path.join(cls.screenshots, '*.png')):
            os.remove(old)
        cls.numbers = itertools.count(1)
        super().setUpClass()

    def setUp(self):
        """The reservable hosts (once per sandbox)."""
        super().setUp()
        self.add_reservable_hosts(RESERVABLE)
        self.addDetail('screenshots', content.text_content(self.screenshots))

    def dashboard_url(self):
        """Horizon's URL, as the sandbox printed it."""
        [line] = [line for line in self.sandbox.output
                  if line.startswith('dashboard ')]
        return line.split()[1]

    def log_in(self, user):
        """Log in as ``user`` in a new browser (``self.browser``)."""
        self.browser = browser.Browser(self.dashboard_url(),
                                       self.screenshots, self.numbers)
        self.addCleanup(self.browser.close)
        self.browser.log_in(user, self.sandbox.env[user]['OS_PASSWORD'])

    def test_a_member_plans_a_lease_that_the_admin_sees_on_its_host(self):
        self.fail_a_host()
        host_lease_end = self.lease_the_gpu_host_for_a_day()
        servers = self.boot_the_load()
        self.lease_capacity_for_a_day()
        self.log_in('demo')
        self.see_the_leases_in_their_rows()
        first_slot = self.ask_for_a_gpu_host(host_lease_end)
        self.take_the_slot(first_slot)
        self.log_in('admin')
        self.see_the_hosts_calendar()
        self.see_the_load_on_its_host(*servers)

    def test_a_member_has_no_admin_calendar(self):
        self.log_in('demo')
        page = self.browser
        page.open(PAGE)
        page.wait_for('.reservation-calendar-page[data-calendar=project]')
        links = [link.get_attribute('href') for link in page.find_all('a')]
        self.assertTrue(any(PAGE in (href or '') for href in links))
        self.assertFalse(any(ADMIN_PAGE in (href or '') for href in links))
        page.open(ADMIN_PAGE)
        # Horizon's answer to a user without the admin role: its 403 page.
        ui.WebDriverWait(page.driver, browser.WAIT_TIMEOUT).until(
            lambda driver: 'You are not authorized to access this page'
            in page.text())
        self.assertEqual([], page.find_all(
            '.reservation-calendar-page[data-calendar=admin]'))
        page.settle('demo-has-no-admin-calendar')

    def fail_a_host(self):
        """Disable a host's nova-compute until the engine sees it failed."""
        self.run_cli(['openstack', 'compute', 'service', 'set', '--disable',
                      '--disable-reason', 'test', FAILED_HOST,
                      'nova-compute'])
        self.addCleanup(self.run_cli, ['openstack', 'compute', 'service',
                                       'set', '--enable', FAILED_HOST,
                                       'nova-compute'])
        self.wait_for(lambda: self.host(FAILED_HOST)['failure'])

    def host(self, name):
        """The host view of ``name`` (openstack reservation host show)."""
        return self.run_json(['openstack', 'reservation', 'host', 'show',
                              name])

    def lease_for_a_day(self, name, reservation):
        """A demo lease from now for a day; its end."""
        end = datetime.datetime.now(datetime.timezone.utc).replace(
            second=0, microsecond=0) + datetime.timedelta(days=1)
        self.run_cli(['openstack', 'reservation', 'lease', 'create',
                      '--reservation', reservation, '--start-date', 'now',
                      '--end-date', end.strftime('%Y-%m-%d %H:%M'), name],
                     user='demo')
        return end

    def lease_the_gpu_host_for_a_day(self):
        """The demo user's lease of the only GPU host; its end."""
        return self.lease_for_a_day(
            HOST_LEASE, 'resource_type=physical:host,min=1,max=1,'
            'resource_properties=' + GPU)

    def lease_capacity_for_a_day(self):
        """The demo user's lease of one server's capacity; its end."""
        return self.lease_for_a_day(
            CAPACITY_LEASE, 'resource_type=virtual:instance,vcpus=1,'
            'memory_mb=512,disk_gb=1,amount=1,affinity=False')

    def boot_the_load(self):
        """The demo user's preemptible and gap-filling servers' ids.

        After the host lease, which closes the GPU host to preemptible
        servers, and before the capacity lease, whose free seat would
        close the other reservable host to them.
        """
        boot = ['openstack', 'server', 'create', '--flavor', '1', '--image',
                self.sandbox.env['demo']['SANDBOX_IMAGE'], '--nic', 'none',
                '--wait']
        spot = self.run_json(boot + ['--hint', 'preemptible=true', SPOT],
                             user='demo')
        end = datetime.datetime.now(datetime.timezone.utc) + (
            datetime.timedelta(hours=6))
        gap = self.run_json(boot + [
            '--hint', 'reserved=True', '--hint', 'lease_params=' + json.dumps(
                {'name': GAP_LEASE, 'start': 'now',
                 'end': end.strftime('%Y-%m-%d %H:%M')}), GAP_SERVER],
            user='demo')
        return spot['id'], gap['id']

    def bar_css(self, lease, row='[data-kind=hosts]'):
        """The CSS selector of ``lease``'s bars in the rows ``row``."""
        return '#reservation-calendar .rc-row%s .rc-bar[data-lease="%s"]' % (
            row, lease)

    def rows_of(self, lease):
        """The kinds of the rows where ``lease`` has bars."""
        return {bar.find_element('xpath', './ancestor::div[1]')
                .get_attribute('data-kind')
                for bar in self.browser.find_all(
                    '#reservation-calendar .rc-bar[data-lease="%s"]'
                    % lease)}

    def see_the_leases_in_their_rows(self):
        """Each lease in the row of its kind, and only there."""
        page = self.browser
        page.open(PAGE)
        page.wait_for(self.bar_css(HOST_LEASE))
        self.assertEqual({'hosts'}, self.rows_of(HOST_LEASE))
        self.assertEqual({'capacity'}, self.rows_of(CAPACITY_LEASE))
        title = page.find(self.bar_css(HOST_LEASE) + ' title')
        self.assertIn('1 host(s)', title.get_attribute('textContent'))
        page.settle('project-calendar')

    def ask_for_a_gpu_host(self, host_lease_end):
        """Ask for 1 GPU host for 2 days; the first slot's element."""
        page = self.browser
        ui.Select(page.find('#rc-resource-type')).select_by_value(
            'physical:host')
        page.find('#rc-physicalhost-resource_properties').send_keys(GPU)
        duration = page.find('#rc-duration')
        duration.clear()
        duration.send_keys('2')
        page.find('#rc-name').send_keys(SLOT_LEASE)
        count = page.find('#rc-physicalhost-count')
        count.clear()
        count.send_keys('0')
        page.click('#rc-search')
        # A wrong field is named in a warning; nothing is asked for.
        warning = page.wait_for('#reservation-request-error .alert-warning')
        self.assertIn('count: at least 1', warning.text)
        self.assertEqual([], page.find_all('#reservation-slots .rc-slot-item'))
        count.clear()
        count.send_keys('1')
        page.settle('request-form')
        page.click('#rc-search')
        page.wait_for('#reservation-slots .rc-slot-item')
        page.wait_for('#reservation-availability .rc-chart .rc-step')
        amounts = [step.get_attribute('data-amount') for step in
                   page.find_all('#reservation-availability .rc-step')]
        # None while the lease holds the only GPU host, one after it.
        self.assertEqual('0', amounts[0])
        self.assertIn('1', amounts)
        self.assertTrue(page.find_all('#reservation-availability .rc-slot'))
        self.assertIn('needed: 1', page.find(
            '#reservation-availability').text)
        slots = page.find_all('#reservation-slots .rc-slot-item')
        self.assertIn('Slot 1', slots[0].text)
        # Not before the only GPU host is free again.
        self.assertGreaterEqual(
            _parsed(slots[0].get_attribute('data-start')), host_lease_end)
        page.settle('availability-and-slots')
        return slots[0]

    def take_the_slot(self, slot):
        """Click ``slot``: the lease is shown and the API lists it."""
        page = self.browser
        proposal_id = slot.get_attribute('data-proposal-id')
        slot.click()
        created = page.wait_for('#reservation-created .rc-created-lease')
        self.assertIn(SLOT_LEASE, created.text)
        page.wait_for(self.bar_css(SLOT_LEASE))
        page.settle('slot-taken')
        [lease] = [lease for lease in self.run_json(
            ['openstack', 'reservation', 'lease', 'list'], user='demo')
            if lease['name'] == SLOT_LEASE]
        shown = page.find(self.bar_css(SLOT_LEASE))
        self.assertEqual(lease['id'], shown.get_attribute('data-lease-id'))
        self.assertTrue(proposal_id)
        lease = self.run_json(['openstack', 'reservation', 'lease', 'show',
                               lease['id']], user='demo')
        # After the host lease: the proposal's window, two days long.
        start, end = _parsed(lease['start_date']), _parsed(lease['end_date'])
        self.assertEqual(datetime.timedelta(days=2), end - start)
        self.assertGreater(start, datetime.datetime.now(
            datetime.timezone.utc) + datetime.timedelta(hours=23))

    def see_the_hosts_calendar(self):
        """As the admin: hosts with their leases, power and failures."""
        page = self.browser
        page.open(ADMIN_PAGE)
        gpu_row = '[data-host="%s"]' % GPU_HOST
        page.wait_for(self.bar_css(HOST_LEASE, gpu_row))
        page.wait_for(self.bar_css(SLOT_LEASE, gpu_row))
        names = {row.get_attribute('data-host') for row in page.find_all(
            '#reservation-calendar .rc-row[data-host]')}
        self.assertEqual(set(RESERVABLE), names)
        # The capacity lease's seat is a slice of the host without a GPU.
        seat = page.find(self.bar_css(
            CAPACITY_LEASE, '[data-host="%s"]' % SEAT_HOST))
        self.assertIn('rc-kind-capacity', seat.get_attribute('class'))
        self.assertEqual([], page.find_all(
            self.bar_css(HOST_LEASE, '[data-host="%s"]' % SEAT_HOST)))
        for name in RESERVABLE:
            host = self.host(name)
            badges = {badge.get_attribute('class').split()[-1]: badge.text
                      for badge in page.find_all(
                          '.rc-row[data-host="%s"] .rc-states .label' % name)}
            if host['power_state']:
                self.assertEqual('power ' + host['power_state'],
                                 badges['rc-power-' + host['power_state']])
            if host['failure']:
                self.assertIn('failed (%s) since' % host['failure'],
                              badges['rc-problem'])
                self.assertNotIn('rc-healthy', badges)
            else:
                self.assertEqual('ok', badges['rc-healthy'])
        self.assertTrue(self.host(FAILED_HOST)['failure'])
        page.settle('hosts-calendar')

    def see_the_load_on_its_host(self, spot_id, gap_id):
        """As the admin: the two servers, each on the row of its host."""
        page = self.browser
        # By id: the admin's server show finds names in its own project.
        gap_server = self.run_json(['openstack', 'server', 'show', gap_id])
        spot_server = self.run_json(['openstack', 'server', 'show', spot_id])
        gap_row = '[data-host="%s"]' % gap_server[HYPERVISOR]
        gap = page.find('.rc-row%s .rc-bar[data-server="%s"]' % (
            gap_row, GAP_SERVER))
        self.assertIn('rc-kind-gap_filling', gap.get_attribute('class'))
        self.assertEqual(GAP_LEASE, gap.get_attribute('data-lease'))
        # Until its lease's end, which its metadata shows.
        self.assertEqual(gap_server['properties']['reservation:end'],
                         gap.get_attribute('data-end'))
        # Its bar takes the place of its lease's slice: one bar, not two.
        self.assertEqual(1, len(page.find_all(self.bar_css(GAP_LEASE,
                                                           gap_row))))
        spot = page.find('.rc-row[data-host="%s"] .rc-bar[data-server="%s"]'
                         % (spot_server[HYPERVISOR], SPOT))
        self.assertIn('rc-kind-preemptible', spot.get_attribute('class'))
        self.assertIsNone(spot.get_attribute('data-end'))
        # The admin sees whose it is.
        title = spot.find_element('css selector', 'title').get_attribute(
            'textContent')
        self.assertIn('preemptible server ' + SPOT, title)
        self.assertIn('project ' + spot_server['project_id'], title)
        badges = {}
        for server, text in ((spot_server, '1 preemptible'),
                             (gap_server, '1 gap-filling')):
            badges.setdefault(server[HYPERVISOR], []).append(text)
        for host, texts in badges.items():
            self.assertEqual(', '.join(texts), page.find(
                '.rc-row[data-host="%s"] .rc-load' % host).text)
        page.click('.rc-range button[data-days="1"]')
        page.settle('hosts-calendar-load')
