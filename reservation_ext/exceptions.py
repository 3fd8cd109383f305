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

"""Errors of reservation-ext.

Every error a user can cause is a :class:`ReservationError` carrying the
HTTP status it maps to and a message that names the offending field. The
API edge maps them to responses in one place.
"""


class ReservationError(Exception):
    """Base error, which carries an HTTP status code and a user message."""

    code = 500
    message = 'An unknown error occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            message = self.message % kwargs if kwargs else self.message
        super().__init__(message)
        self.message = message

    @property
    def name(self):
        """Return the error's class name (Blazar's ``error_name``)."""
        return type(self).__name__


class InvalidInput(ReservationError):
    """Bad input: a field is missing, malformed or out of range (400)."""

    code = 400
    message = 'Invalid input.'

    def __init__(self, field, reason):
        # A field the user named unreadably (empty, blanks around,
        # control characters) is quoted.
        readable = field and field == field.strip() and field.isprintable()
        shown = field if readable else repr(field)
        super().__init__('%s: %s' % (shown, reason))
        self.field = field
        self.reason = reason


class Forbidden(ReservationError):
    """The caller is not allowed to do what it asks (403)."""
    code = 403
    message = 'Not allowed.'


class NotFound(ReservationError):
    """The object the request names does not exist (404)."""
    code = 404
    message = '%(kind)s %(id)s could not be found.'


class Conflict(ReservationError):
    """The request is valid but clashes with the current state (409)."""

    code = 409
    message = 'The request conflicts with the current state.'


class NotEnoughResources(Conflict):
    """The window has fewer free resources than the request needs (409)."""

    message = 'Not enough resources available for the requested window.'


class ConcurrentUpdate(Conflict):
    """Another request changed the same resources first; retrying helps.

    The writers' transactions are rerun on it by
    ``db.api.retry_on_conflict(ConcurrentUpdate)``, which also raises it
    for a deadlock that persists.
    """

    message = 'Resources were updated concurrently; please retry.'


class InvalidState(Conflict):
    """The lease or event is in a status that does not allow the action."""

    message = 'The action is not allowed in the current status.'


class PluginError(ReservationError):
    """A resource plugin failed to act on Nova or Cinder."""

    code = 500
    message = 'Resource plugin failure.'


class ActionFailed(PluginError):
    """An action failed for good: trying it again would fail again.

    The engine does not retry the event: the lease goes to ERROR with
    the reason at once (a stack Heat could not create).
    """

    message = 'Action failed.'


class NotYet(PluginError):
    """What an action needs is not free yet: another lease still holds it.

    The engine tries the event again soon without counting an attempt,
    for ``for_at_most`` seconds past the event's time; then as any
    failure.
    """

    message = 'Not free yet.'

    def __init__(self, message=None, for_at_most=0):
        super().__init__(message)
        self.for_at_most = for_at_most


class EnforcementRefused(Forbidden):
    """A usage enforcement filter refused the lease change (403).

    The message is the filter's reason, as the user is to see it.
    """


class QuotaExceeded(Forbidden):
    """The lease would take a project over a time quota (403)."""

    def __init__(self, resource, limit, usage, lease_usage):
        super().__init__(
            'Quota exceeded for %s: the project\'s leases would reserve '
            '%s %s in the quota window (this lease %s), over the limit of '
            '%s.' % (resource, _number(usage), resource,
                     _number(lease_usage), _number(limit)))
        self.resource = resource
        self.limit = limit
        self.usage = usage


class ComputeQuotaExceeded(Forbidden):
    """The lease would take a project over a Nova quota in its window (403).

    The message is Nova's own for a boot over quota
    (``nova.exception.TooManyInstances``), so that clients print what Nova
    would.
    """

    def __init__(self, overs, requested, used, allowed):
        super().__init__(
            'Quota exceeded for %s: Requested %s, but already used %s of '
            '%s %s' % (_joined(overs), _joined(requested), _joined(used),
                       _joined(allowed), _joined(overs)))
        self.overs = list(overs)


class VolumeQuotaExceeded(Forbidden):
    """The lease would take a project over a Cinder quota in its window.

    The message is Cinder's own for a create over quota
    (``VolumeSizeExceedsAvailableQuota``, ``VolumeLimitExceeded``), the
    first resource over its limit named. 403 in the lease API, in
    Blazar's error body like every refusal of a lease change there
    (:class:`ComputeQuotaExceeded`'s status); the Cinder extension's
    edge answers it with Cinder's own 413, as Cinder answers a create
    over quota.
    """

    def __init__(self, overs, requested, used, allowed):
        name, asked, consumed, quota = overs[0], requested[0], used[0], \
            allowed[0]
        if name == 'gigabytes':
            message = ('Requested volume or snapshot exceeds allowed %s '
                       'quota. Requested %sG, quota is %sG and %sG has been '
                       'consumed.' % (name, asked, quota, consumed))
        else:
            message = ("Maximum number of volumes allowed (%d) exceeded for "
                       "quota '%s'." % (quota, name))
        super().__init__(message)
        self.overs = list(overs)


class ServiceUnavailable(ReservationError):
    """A service the request needs (Nova, Cinder) failed (503)."""

    code = 503
    message = ('A service that reservations depend on failed; please '
               'retry later.')


class EnforcementUnavailable(ReservationError):
    """The enforcement decision cannot be had now (503); nothing changed.

    The external enforcement service or Keystone's limits did not answer.
    """

    code = 503
    message = 'Lease enforcement is unavailable; please retry later.'


def _number(value):
    """Format ``value`` for a message: at most 2 decimals, no trailing 0s."""
    return '{:g}'.format(round(value, 2))


def _joined(values):
    """Join ``values`` with commas, as Nova's quota errors list them."""
    return ', '.join(str(value) for value in values)
