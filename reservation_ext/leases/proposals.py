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

"""Schedule proposals: windows offered for a lease request, and held.

``POST /v1/leases/proposals`` takes the reservations of a lease create,
a ``duration``, the earliest and latest start (``not_before``,
``not_after``) and a ``count``, and answers with up to ``count``
proposals in chronological order (the search:
:mod:`reservation_ext.planning.timelines`). The protocol:

* Before it, each plugin completes its reservation with the request
  context (:meth:`~reservation_ext.plugins.base.ResourcePlugin.
  prepare_proposal`): a ``heat:stack``'s needs are what Heat's preview of
  it, as the caller, shows.
* One writer transaction finds the windows and writes each proposal with
  its holds: host_allocations rows of the proposal (whole hosts, instance
  slices), floatingip_allocations, network_allocations and
  storage_pool_allocations rows, and ``volume_gb`` on its row (a stack's
  timeline holds hosts, GB and addresses, as one item). The holds are
  allocations like bookings, so that no other lease or proposal gets
  their capacity, and the hosts' generations move with a compare-and-swap
  as for a booking.
* A hold counts until the proposal's ``expires_at`` (now +
  ``[reservation] proposal_ttl``): every test of the planner ignores it
  afterwards. Expired proposals are deleted by the next proposals
  request; nothing waits for that.
* ``POST /v1/leases`` with ``proposal_id`` (same project, before expiry)
  makes the lease of the proposal's window and reservations (their
  plugins' ``prepare_create`` runs first, as for any create: a stack's
  preview and trust): each plugin books what the proposal holds,
  ignoring the proposal's own holds, in the lease-create transaction,
  which then deletes every proposal of the same request, and their
  holds. Because nothing else could book what was held, this always
  succeeds (unless a stack's needs changed: a 409 says so).

A proposals request takes one reservation per resource type: the
timelines of one request do not see each other's holds. A ``heat:stack``
reservation, whose needs share the capacity of every other type, comes
alone.
"""

import datetime
import json
import uuid

import sqlalchemy as sa

from db import api as db_api
from db import tables
from reservation_ext import dates
from reservation_ext import exceptions
from reservation_ext.leases import parsing
from reservation_ext.leases import schemas
from reservation_ext.planning import planner
from reservation_ext.planning import timelines
from reservation_ext import policy
from reservation_ext.store import allocations as store_allocations
from reservation_ext.store import floating_ips as store_floating_ips
from reservation_ext.store import network_segments as store_network_segments
from reservation_ext.store import storage_pools as store_storage_pools
from reservation_ext import validation

PROPOSALS = tables.PROPOSALS
HOSTS = tables.HOSTS

# The first span searched: this many windows' lengths, at least a week.
_FIRST_SPAN_WINDOWS = 4
_FIRST_SPAN_MIN = datetime.timedelta(days=7)

_retry = db_api.retry_on_conflict(exceptions.ConcurrentUpdate)
# The type whose proposals hold every kind of capacity at once.
_STACK = 'heat:stack'
# Types whose proposals hold the same capacity: the hosts (whole, or
# their slices), and the reservable volume GB (pools' GB count in it).
_SHARING = (frozenset(['physical:host', 'virtual:instance',
                       'flavor:instance']),
            frozenset(['virtual:volume', 'storage:pool']))


def parse(body, plugins, now, conf):
    """Return the proposals request of ``body``, checked completely.

    :returns: ``{'reservations': [(resource_type, values, given)],
        'duration': timedelta, 'not_before': datetime, 'not_after':
        datetime, 'count': int}``; ``given`` is the reservation as the
        body had it.
    """
    validation.check_schema(body, schemas.PROPOSE)
    duration = dates.parse_duration(body['duration'], 'duration')
    not_before = dates.parse_date(body.get('not_before', 'now'),
                                  'not_before', now)
    dates.check_start(not_before, now, 'not_before')
    if not_before <= now:
        # "Now", on a whole second: windows that users read.
        not_before = now.replace(microsecond=0)
    not_after = _not_after(body, not_before, now, conf)
    dates.add(not_after, duration, 'duration')
    count = body.get('count', 5)
    if count > conf.reservation.max_proposals:
        raise exceptions.InvalidInput(
            'count', 'must be at most %d' % conf.reservation.max_proposals)
    return {'reservations': _reservations(body['reservations'], plugins),
            'duration': duration, 'not_before': not_before,
            'not_after': not_after, 'count': count}


def _not_after(body, not_before, now, conf):
    if 'not_after' not in body:
        return not_before + datetime.timedelta(
            days=conf.reservation.proposal_search_days)
    not_after = dates.parse_date(body['not_after'], 'not_after', now)
    if not_after < not_before:
        raise exceptions.InvalidInput('not_after',
                                      'must not be before not_before')
    return not_after


def _reservations(given, plugins):
    parsed, seen = [], {}
    for index, values in enumerate(given):
        values = dict(values)
        resource_type = values.pop('resource_type')
        field = 'reservations[%d]' % index
        if resource_type in seen:
            raise exceptions.InvalidInput(
                field + '.resource_type', 'a proposals request takes one '
                '%s reservation, and %s has one already'
                % (resource_type, seen[resource_type]))
        seen[resource_type] = field
        _type, checked = parsing.reservation(
            plugins, resource_type, values, field,
            check='validate_proposal')
        parsed.append((resource_type, checked, given[index]))
    _check_alone(seen)
    return parsed


def _check_alone(seen):
    """Refuse reservations sharing capacity in one proposals request.

    The timelines of one request do not see each other's holds: a stack,
    whose servers, volumes and addresses share the capacity of every
    other type, comes alone, and of the types sharing hosts or volume GB
    (:data:`_SHARING`) one comes at most.
    """
    if _STACK in seen and len(seen) > 1:
        raise exceptions.InvalidInput(
            seen[_STACK] + '.resource_type', 'a proposals request takes a '
            '%s reservation alone: its servers, volumes and floating IPs '
            'share the capacity of the others' % _STACK)
    for sharing in _SHARING:
        types = sorted(sharing.intersection(seen), key=seen.get)
        if len(types) > 1:
            raise exceptions.InvalidInput(
                seen[types[1]] + '.resource_type', 'a proposals request '
                'takes one of %s: a %s and a %s reservation share the same '
                'capacity' % (', '.join(sorted(sharing)), types[0],
                              types[1]))


class ProposalService:
    """Schedule proposals on behalf of a request context.

    ``plugins`` is ``{resource_type: ResourcePlugin}``.
    """

    def __init__(self, conf, clock, plugins):
        self.conf = conf
        self.clock = clock
        self.plugins = plugins

    def propose(self, ctx, body):
        """Find, hold and return the proposals that ``body`` asks for."""
        if not ctx.project_id:
            raise exceptions.Forbidden(
                'Schedule proposals need a project-scoped request.')
        policy.authorize(ctx, 'propose', ctx.project_id)
        request = parse(body, self.plugins, self.clock.now(), self.conf)
        return self._propose(ctx, self._prepare(ctx, request))

    def _prepare(self, ctx, request):
        """Return ``request`` with each plugin's prepare_proposal run.

        Before the writer transaction: a plugin may ask another service
        as the caller (Heat's preview of a stack).
        """
        prepared = []
        for index, (resource_type, values, given) in enumerate(
                request['reservations']):
            with validation.prefixed('reservations[%d].' % index):
                values = self.plugins[resource_type].prepare_proposal(
                    ctx, values)
            prepared.append((resource_type, values, given))
        return dict(request, reservations=prepared)

    @_retry
    def _propose(self, ctx, request):
        with db_api.writer(ctx, self.clock) as session:
            now = self.clock.now()
            purge_expired(session, now)
            found, searched = self._search(session, request, now)
            rows, holds, item_holds = self._proposals(
                ctx, request, found, searched, now)
            if rows:
                session.execute(sa.insert(PROPOSALS), rows)
            generations = _generations(searched)
            if holds:
                planner.write_holds(session, holds, generations)
            for write_holds, written in item_holds.items():
                write_holds(session, written, generations)
            names = self._host_names(session, ctx, holds)
        return [_view(row, names.get(row['id'])) for row in rows]

    def _search(self, session, request, now):
        """Find the windows: first among the starts soon after not_before.

        The first span of starts covers a few windows' lengths, where
        most requests find their proposals; when it gives fewer than
        ``count``, the search is run again on every start up to
        ``not_after`` (each span read from the DB once).
        """
        first, limit = request['not_before'], request['not_after']
        soon = first + max(_FIRST_SPAN_WINDOWS * request['duration'],
                           _FIRST_SPAN_MIN)
        busy = planner.Busy.from_conf(now, self.conf)
        for last in sorted({min(soon, limit), limit}):
            span = timelines.Span(first, last, request['duration'],
                                  busy.margin)
            searched = [self._timeline(session, index, reservation, span,
                                       busy)
                        for index, reservation in enumerate(
                            request['reservations'])]
            found = timelines.first_starts(searched, first,
                                           request['count'])
            if len(found) == request['count']:
                break
        return found, searched

    def _timeline(self, session, index, reservation, span, busy):
        resource_type, values, _given = reservation
        with validation.prefixed('reservations[%d].' % index):
            return self.plugins[resource_type].timeline(
                session, values, span, busy, for_update=True)

    def _proposals(self, ctx, request, found, searched, now):
        """Make the proposals rows and the holds of the found windows.

        Holds of hosts, and the others by who writes them: ``{writer:
        [(owner, item_id, start, end)]}``, what timelines with a
        ``write_holds`` of their own hold (floating IPs, network segments,
        storage pools).
        """
        expires_at = now + datetime.timedelta(
            seconds=self.conf.reservation.proposal_ttl)
        request_id = str(uuid.uuid4())
        given = json.dumps([given for _type, _values, given
                            in request['reservations']])
        rows, holds, item_holds = [], [], {}
        for start, taken in found:
            end = start + request['duration']
            row = {'id': str(uuid.uuid4()), 'request_id': request_id,
                   'project_id': ctx.project_id, 'user_id': ctx.user_id,
                   'start_date': start, 'end_date': end,
                   'expires_at': expires_at, 'reservations': given,
                   'volume_gb': 0, 'created_at': now}
            for item, (timeline, took) in enumerate(zip(searched, taken)):
                owner = planner.Owner.hold(row['id'], item, expires_at)
                for part, part_took in _parts(timeline, took):
                    slices, amount = part.held(part_took)
                    writer = getattr(part, 'write_holds', None)
                    if writer is not None:
                        item_holds.setdefault(writer, []).extend(
                            (owner, item_id, start, end)
                            for item_id, _size in slices)
                        continue
                    holds.extend((owner, host, start, end, size)
                                 for host, size in slices)
                    row['volume_gb'] += amount
            rows.append(row)
        return rows, holds, item_holds

    @staticmethod
    def _host_names(session, ctx, holds):
        """Map ``{proposal_id: [hostname, ...]}``, for those who see hosts.

        Each host the proposal holds capacity on, once (a stack's slices
        share hosts).
        """
        if not holds or not policy.allowed(ctx, 'list', None,
                                           rules=policy.HOSTS):
            return {}
        names = dict(session.execute(
            sa.select(HOSTS.c.id, HOSTS.c.hypervisor_hostname).where(
                HOSTS.c.id.in_({hold[1] for hold in holds}))).all())
        held = {}
        for owner, host, *_window in holds:
            held.setdefault(owner.proposal_id, []).append(names[host])
        return {proposal: sorted(set(hosts))
                for proposal, hosts in held.items()}


def _parts(timeline, took):
    """Return ``[(timeline, took)]`` of each part that holds something.

    A :class:`~.timelines.AllOf` (a stack's) holds with each of its
    parts: the slices, the GB and the addresses, all of one item.
    """
    if isinstance(timeline, timelines.AllOf):
        return list(zip(timeline.parts, took))
    return [(timeline, took)]


def _generations(searched):
    generations = {}
    for timeline in searched:
        generations.update(getattr(timeline, 'generations', {}))
    return generations


def _view(row, hosts=None):
    view = {'id': row['id'],
            'start_date': dates.format_date(row['start_date']),
            'end_date': dates.format_date(row['end_date']),
            'expires_at': dates.format_date(row['expires_at'])}
    if hosts is not None:
        view['hosts'] = hosts
    return view


def purge_expired(session, now):
    """Delete the proposals that expired, and their holds with them.

    Their holds count for nothing already; no host generation moves.
    Those of floating IPs go with their proposals (ON DELETE CASCADE);
    those of network segments and storage pools have no foreign key to
    them and are deleted here.
    """
    expired = session.scalars(sa.select(PROPOSALS.c.id).where(
        PROPOSALS.c.expires_at <= now)).all()
    if not expired:
        return
    store_allocations.drop_expired_holds(session, expired)
    store_network_segments.drop_expired_holds(session, expired)
    store_storage_pools.drop_expired_holds(session, expired)
    session.execute(sa.delete(PROPOSALS).where(
        PROPOSALS.c.id.in_(expired)))


def take(session, ctx, proposal_id, now):
    """Take the proposal a lease is made from, locked until the commit.

    :returns: ``(row, reservations)``: the proposals row and the
        reservations the request gave, as a lease create has them.
    :raises NotFound: no such proposal in the caller's project.
    :raises Conflict: it expired.
    """
    row = find(session, ctx, proposal_id, now, lock=True)
    return row, json.loads(row.reservations)


def find(session, ctx, proposal_id, now, lock=False):
    """Find the caller's live proposal ``proposal_id`` (its row).

    :raises NotFound: no such proposal in the caller's project.
    :raises Conflict: it expired.
    """
    query = sa.select(PROPOSALS).where(PROPOSALS.c.id == proposal_id)
    row = session.execute(query.with_for_update() if lock else query).first()
    if row is None or row.project_id != ctx.project_id:
        raise exceptions.NotFound(kind='Proposal', id=proposal_id)
    if row.expires_at <= now:
        raise exceptions.Conflict(
            'Proposal %s expired at %s; ask for new proposals.'
            % (proposal_id, dates.format_date(row.expires_at)))
    return row


def release(session, request_id):
    """Delete the proposals of a request and their holds."""
    proposal_ids = sa.select(PROPOSALS.c.id).where(
        PROPOSALS.c.request_id == request_id)
    store_allocations.drop_holds(session, proposal_ids)
    store_floating_ips.drop_holds(session, proposal_ids)
    store_network_segments.drop_holds(session, proposal_ids)
    store_storage_pools.drop_holds(session, proposal_ids)
    session.execute(sa.delete(PROPOSALS).where(
        PROPOSALS.c.request_id == request_id))
