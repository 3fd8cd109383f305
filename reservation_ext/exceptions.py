"""Errors of reservation-ext.

Every error a user can cause is a :class:`ReservationError` carrying the
HTTP status it maps to and a message that names the offending field. The
API edge maps them to responses in one place.
"""


class ReservationError(Exception):
    """Base error: an HTTP status code and a user-facing message."""

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
        return type(self).__name__


class InvalidInput(ReservationError):
    """Bad input: a field is missing, malformed or out of range (400)."""

    code = 400
    message = 'Invalid input.'

    def __init__(self, field, reason):
        super().__init__('%s: %s' % (field, reason))
        self.field = field
        self.reason = reason


class Forbidden(ReservationError):
    code = 403
    message = 'Not allowed.'


class NotFound(ReservationError):
    code = 404
    message = '%(kind)s %(id)s could not be found.'


class Conflict(ReservationError):
    """The request is valid but clashes with the current state (409)."""

    code = 409
    message = 'The request conflicts with the current state.'


class NotEnoughResources(Conflict):
    """Fewer free resources than the request needs in its window."""

    message = 'Not enough resources available for the requested window.'


class ConcurrentUpdate(Conflict):
    """Another request changed the same resources first; retrying helps."""

    message = 'Resources were updated concurrently; please retry.'


class InvalidState(Conflict):
    """The lease or event is in a status that does not allow the action."""

    message = 'The action is not allowed in the current status.'


class PluginError(ReservationError):
    """A resource plugin failed to act on Nova or Cinder."""

    code = 500
    message = 'Resource plugin failure.'
