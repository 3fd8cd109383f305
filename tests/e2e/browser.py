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

"""A headless Chromium driven through selenium, for the dashboard tests.

Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them).
Without them the tests that need a browser skip, unless
``RESERVATION_REQUIRE_BROWSER=1`` (set by ``.ci/run``), which makes the
missing browser a failure. Every page that :meth:`Browser.page` opens or
settles on is saved as a PNG in the screenshot directory, and checked for
Horizon's error banners.
"""

import os
import shutil
import tempfile
import unittest

from selenium.common import exceptions as selenium_exceptions
from selenium import webdriver
from selenium.webdriver.chrome import options as chrome_options
from selenium.webdriver.chrome import service as chrome_service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import ui

# Bounds on waits for a page or an element: hang guards.
WAIT_TIMEOUT = 60
REQUIRE_ENV = 'RESERVATION_REQUIRE_BROWSER'
SCREENSHOT_ENV = 'RESERVATION_SCREENSHOT_DIR'
# Flags for this machine: no GPU, no sandbox for root, no traffic to
# anywhere but the pages the test opens.
CHROMIUM_FLAGS = ('--headless', '--no-sandbox', '--disable-gpu',
                  '--disable-quic', '--no-first-run',
                  '--disable-background-networking',
                  '--disable-component-update', '--disable-sync',
                  '--window-size=1400,1400')
# Horizon's error banners (messages of level error) and its 500 page.
ERROR_BANNER = '.alert-danger'
SERVER_ERROR_TEXT = 'Something went wrong!'


def executables():
    """``(chromium, chromedriver)`` paths, or skip (or fail) without them."""
    found = (shutil.which('chromium'), shutil.which('chromedriver'))
    if None in found:
        message = ('Debian\'s chromium and chromium-driver are needed for '
                   'the dashboard tests (apt-get install chromium '
                   'chromium-driver)')
        if os.environ.get(REQUIRE_ENV) == '1':
            raise AssertionError(message + '; %s=1' % REQUIRE_ENV)
        raise unittest.SkipTest(message)
    return found


class Browser:
    """One Chromium with a fresh profile, at the dashboard ``base_url``.

    ``screenshots``: the directory for the PNGs; ``numbers``: an iterator
    that numbers them in the order of the pages (shared by the browsers of
    a test).
    """

    def __init__(self, base_url, screenshots, numbers):
        chromium, chromedriver = executables()
        self.base_url = base_url
        self.screenshots = screenshots
        self.numbers = numbers
        self._profile = tempfile.mkdtemp(prefix='chromium-')
        options = chrome_options.Options()
        options.binary_location = chromium
        for flag in CHROMIUM_FLAGS + ('--user-data-dir=' + self._profile,):
            options.add_argument(flag)
        self.driver = webdriver.Chrome(
            options=options,
            service=chrome_service.Service(executable_path=chromedriver))
        self.driver.set_page_load_timeout(WAIT_TIMEOUT)

    def close(self):
        self.driver.quit()
        shutil.rmtree(self._profile, ignore_errors=True)

    def open(self, path):
        """Load the dashboard's ``path`` (relative to its root)."""
        self.driver.get(self.base_url + path.lstrip('/'))

    def wait_for(self, css, timeout=WAIT_TIMEOUT):
        """The first element matching ``css``, once there is one."""
        return ui.WebDriverWait(self.driver, timeout).until(
            lambda driver: driver.find_element(By.CSS_SELECTOR, css))

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def click(self, css):
        """Click the first displayed element matching ``css``."""
        [element, *_] = [element for element in self.find_all(css)
                         if element.is_displayed()]
        self.driver.execute_script('arguments[0].scrollIntoView(true);',
                                   element)
        element.click()

    def text(self):
        """The visible text of the page."""
        return self.find('body').text

    def settle(self, name):
        """Save the current page as ``NN-name.png``; fail on an error banner.

        :raises AssertionError: the page shows an error banner or
            Horizon's error page.
        """
        path = os.path.join(self.screenshots, '%02d-%s.png' % (
            next(self.numbers), name))
        self.driver.save_screenshot(path)
        self._fail_on_error_banner(path)
        return path

    def _fail_on_error_banner(self, path=None):
        """Raise AssertionError if the page shows an error."""
        banners = [element.text for element in self.find_all(ERROR_BANNER)
                   if element.is_displayed()]
        text = self.text()
        if banners or SERVER_ERROR_TEXT in text:
            raise AssertionError('%s (%s) shows an error: %s\n%s' % (
                self.driver.current_url, path, banners, text))

    def log_in(self, user, password):
        """Log in through Horizon's form; settle on the page it shows."""
        self.open('auth/login/')
        self.wait_for('#id_username').send_keys(user)
        self.find('#id_password').send_keys(password)
        self.find('#loginBtn').click()
        ui.WebDriverWait(self.driver, WAIT_TIMEOUT).until(
            lambda driver: '/auth/login' not in driver.current_url)
        self.wait_for('.navbar')
        self.settle('logged-in-as-' + user)

    def reload_until(self, predicate, timeout=WAIT_TIMEOUT):
        """Reload the page until ``predicate(self)`` is true.

        An element the predicate does not find yet is a reason to
        reload, not a failure; an error banner fails at once, so that a
        reload cannot hide a service that failed.

        :raises AssertionError: at the timeout, with the page's last text
            (and its screenshot, checked for error banners).
        """
        def check(driver):
            self._fail_on_error_banner()
            try:
                if predicate(self):
                    return True
            except selenium_exceptions.NoSuchElementException:
                pass
            driver.refresh()
            return False
        try:
            ui.WebDriverWait(self.driver, timeout,
                             poll_frequency=2).until(check)
        except selenium_exceptions.TimeoutException:
            path = self.settle('reload-timeout')
            raise AssertionError(
                '%s (%s): still not as expected after %d s:\n%s' % (
                    self.driver.current_url, path, timeout, self.text()))
