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

"""``openstack reservation lease wait``: until a lease is where it goes next.

A lease that starts now goes to ACTIVE; one that starts later is PENDING
with its capacity held from its creation; a deleted one goes away. The
command reads the lease every ``--interval`` seconds (tenacity), writes a
progress line to stderr, and fails with the lease's ``status_reason``
when it goes to ERROR, or when ``--timeout`` passes first.
"""

import datetime
import time

from blazarclient import exception as blazar_exception
from blazarclient import utils as blazar_utils
from osc_lib.command import command
from osc_lib import exceptions
import tenacity

ACTIVE, PENDING, DELETED = 'active', 'pending', 'deleted'
# Statuses from which a lease never reaches the one waited for.
_PAST = {ACTIVE: ('TERMINATING', 'TERMINATED', 'DELETING'),
         PENDING: ('STARTING', 'ACTIVE', 'TERMINATING', 'TERMINATED',
                   'DELETING'),
         DELETED: ()}
_UUID = '^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$'
_GONE = object()


class WaitForLease(command.Command):
    """Wait until a lease is ACTIVE, PENDING with its capacity, or deleted."""

    def get_parser(self, prog_name):
        """Return the command's arguments."""
        parser = super().get_parser(prog_name)
        parser.add_argument('lease', metavar='<lease>',
                            help='The name or id of the lease.')
        parser.add_argument(
            '--for', dest='target', choices=(ACTIVE, PENDING, DELETED),
            help='What to wait for (default: active for a lease that has '
                 'started or starts now, pending for one that starts later, '
                 'deleted for one being deleted).')
        parser.add_argument('--timeout', type=float, default=600,
                            metavar='<seconds>',
                            help='Fail after this long (default 600).')
        parser.add_argument('--interval', type=float, default=2,
                            metavar='<seconds>',
                            help='Read the lease this often (default 2).')
        return parser

    def take_action(self, parsed_args):
        """Wait; raise CommandError on ERROR, or when the time is up."""
        leases = self.app.client_manager.reservation.lease
        lease_id = _lease_id(self.app.client_manager.reservation,
                             parsed_args.lease, parsed_args.target)
        first = _GONE if lease_id is _GONE else _read(leases, lease_id)
        if first is _GONE:
            if parsed_args.target == DELETED:
                return
            raise exceptions.CommandError(
                'Lease %s could not be found.' % parsed_args.lease)
        target = parsed_args.target or default_target(
            first, datetime.datetime.now(datetime.timezone.utc))
        progress = Progress(first.get('name') or lease_id, target,
                            self.app.stderr)
        lease = _poll(lambda: _read(leases, lease_id),
                      lambda value: progress.done(value),
                      parsed_args.timeout, parsed_args.interval)
        progress.finish()
        if not reached(lease, target):
            raise exceptions.CommandError(progress.late(lease,
                                                        parsed_args.timeout))


def _lease_id(client, name_or_id, target):
    """The id of the lease named ``name_or_id``.

    ``_GONE`` when no lease has that name and the wait is for a delete:
    a deleted lease has no name any more.
    """
    try:
        return blazar_utils.find_resource_id_by_name_or_id(
            client, 'lease', name_or_id, 'name', _UUID)
    except blazar_exception.BlazarClientException as exc:
        if target == DELETED and _not_found(exc):
            return _GONE
        raise exceptions.CommandError(str(exc))


def _read(leases, lease_id):
    """The lease, or ``_GONE`` once the API answers 404 for it."""
    try:
        return leases.get(lease_id)
    except blazar_exception.BlazarClientException as exc:
        if _not_found(exc):
            return _GONE
        raise


def _not_found(exc):
    # blazarclient says 404 as ``code`` of an answer, and as
    # ``status_code`` when no lease has the name.
    return 404 in (exc.kwargs.get('code'), exc.kwargs.get('status_code'))


def _poll(fetch, done, timeout, interval):
    """Call ``fetch()`` until ``done(value)``; the last value on timeout."""
    # A timeout, not a date: the monotonic clock.
    deadline = time.monotonic() + timeout
    waiting = tenacity.Retrying(
        retry=tenacity.retry_if_result(lambda value: not done(value)),
        stop=lambda state: time.monotonic() + interval > deadline,
        wait=tenacity.wait_fixed(interval),
        retry_error_callback=lambda state: state.outcome.result())
    return waiting(fetch)


def default_target(lease, now):
    """What a lease goes to next, as of ``now`` (an aware UTC datetime)."""
    if lease['status'] == 'DELETING':
        return DELETED
    start = datetime.datetime.fromisoformat(
        lease['start_date'].replace('Z', '+00:00'))
    if start.tzinfo is None:
        start = start.replace(tzinfo=datetime.timezone.utc)
    return ACTIVE if start <= now else PENDING


def reached(lease, target):
    """Whether ``lease`` (a view, or ``_GONE``) is where ``target`` says."""
    if target == DELETED:
        return lease is _GONE
    return lease is not _GONE and lease['status'] == target.upper()


def failed(lease, target):
    """The reason the wait cannot succeed any more, or None."""
    if lease is _GONE:
        return None if target == DELETED else 'the lease was deleted'
    status = lease['status']
    if status == 'ERROR':
        return 'the lease went to ERROR: %s' % (
            lease.get('status_reason') or 'no reason given')
    if status in _PAST[target]:
        return 'the lease is %s and will not be %s' % (status,
                                                       target.upper())
    return None


class Progress:
    """The progress line of a wait: rewritten in place on a terminal."""

    def __init__(self, name, target, stream):
        self.name, self.target, self.stream = name, target, stream
        self.started = time.monotonic()
        self.tty = getattr(stream, 'isatty', lambda: False)()
        self.last = None
        self.reason = None

    def done(self, lease):
        """Show where ``lease`` is; whether the wait is over."""
        status = 'gone' if lease is _GONE else lease['status']
        line = '%s: %s, waiting for %s (%ds)' % (
            self.name, status, self.target, time.monotonic() - self.started)
        if self.tty:
            self.stream.write('\r' + line)
        elif status != self.last:
            self.stream.write(line + '\n')
        self.stream.flush()
        self.last = status
        self.reason = failed(lease, self.target)
        return reached(lease, self.target) or self.reason is not None

    def finish(self):
        """End the line that was rewritten in place."""
        if self.tty:
            self.stream.write('\n')
            self.stream.flush()

    def late(self, lease, timeout):
        """The message of a wait that did not get there."""
        if self.reason:
            return 'Lease %s: %s' % (self.name, self.reason)
        status = 'gone' if lease is _GONE else lease['status']
        return ('Lease %s is still %s after %gs of waiting for %s'
                % (self.name, status, timeout, self.target))
