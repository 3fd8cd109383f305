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

"""The gap index of the hosts' bookings, on SQLite: an R*Tree.

When the pool is full, the free-host search tests every host to find the
few free ones (about 0.3 µs a host in SQLite, most of it the index seek
of its busy test, and more once other work has taken the CPU caches).
The gap index answers "which hosts have a gap that holds ``[lower,
upper)``" reading only those hosts: an SQLite R*Tree (``rtree_i32``) of
the free stretches between each host's bookings, by host id and minute.

It is a prefilter, kept by triggers on ``host_allocations`` and
``computehosts``, so that every write counts, whoever makes it (the
store, a cascade, a test that inserts rows): every stretch in which a
host has no booking (``expires_at`` NULL: holds are left to the exact
test) lies within one of its gaps. The gaps may be wider than the truth
(the minutes are rounded outwards; a booking only splits the gaps it
clearly overlaps), never narrower, so the hosts it names are a superset
of the free ones and the planner still runs its exact busy test on them
(:func:`reservation_ext.planning.planner.find_free_hosts`).

* A booking inserted splits the gaps of its host it overlaps into the
  parts before and after it: three R*Tree writes.
* A booking deleted or changed has its host's gaps made again from its
  bookings.
* A host inserted gets one gap, all time; a host deleted loses its gaps.

A minute is ``strftime('%s', t) / 60`` of the stored datetime, on both
sides of every comparison (the triggers' and the search's), so that the
rounding of SQLite's date parsing is the same everywhere and the order
of two times is kept: a gap ``(lo, hi)`` covers a stored stretch from
``t0`` to ``t1`` when ``lo <= minute(t0)`` and ``hi >= minute(t1) + 1``.

PostgreSQL and MariaDB have no gap index: :func:`present` says so and
the planner tests every host there. Nothing here is a model: the tables
live outside ``models.Base.metadata`` (:data:`TABLES` names them,
shadow tables included) and are made with the schema's tables
(:func:`attach`) or by the migration that brought them.
"""

import sqlalchemy as sa

# The R*Tree and its shadow tables (SQLite's own, written through it).
TABLE = 'host_gaps'
TABLES = frozenset([TABLE] + ['%s_%s' % (TABLE, shadow)
                              for shadow in ('node', 'parent', 'rowid')])
# The rtree_i32 bounds: a gap open at either end reaches them.
NEVER = -2147483647
FOREVER = 2147483647


def _minute(when):
    """Return SQL: the minute of a stored datetime (its Unix time / 60)."""
    return "(CAST(strftime('%%s', %s) AS INTEGER) / 60)" % when


def _of_host(host):
    """Return SQL: the R*Tree entries of ``host`` (an SQL expression)."""
    return 'host_lo <= %s AND host_hi >= %s' % (host, host)


def _rebuild(host):
    """Return the statements that make the gaps of ``host`` again.

    Its bookings in start order: a gap before each one that starts after
    all before it have ended, and one after the last end (all time for a
    host without bookings).
    """
    return """
DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE {of_host});
INSERT INTO {table} (host_lo, host_hi, lo, hi)
  SELECT {host}, {host}, coalesce({prev}, {never}),
         coalesce({start} + 1, {forever})
  FROM (SELECT start_date AS s, max(end_date) OVER (
               ORDER BY start_date
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
        FROM host_allocations
        WHERE host_id = {host} AND expires_at IS NULL
        UNION ALL
        SELECT NULL, max(end_date) FROM host_allocations
        WHERE host_id = {host} AND expires_at IS NULL)
  WHERE prev IS NULL OR s IS NULL OR prev <= s;
""".format(table=TABLE, host=host, of_host=_of_host(host),
           prev=_minute('prev'), start=_minute('s'), never=NEVER,
           forever=FOREVER)


def _split(host, start, end):
    """Return the statements that cut a booking out of its host's gaps.

    The gaps it clearly overlaps (``lo < minute(end)`` and ``hi >
    minute(start) + 1``) give their parts before and after it; the parts
    do not meet that test, so that the DELETE leaves them. A gap that
    only touches the booking within a minute stays whole: wider than the
    truth, which the exact test corrects.
    """
    overlapped = '%s AND lo < %s AND hi > %s + 1' % (
        _of_host(host), _minute(end), _minute(start))
    return """
INSERT INTO {table} (host_lo, host_hi, lo, hi)
  SELECT {host}, {host}, lo, min(hi, {start} + 1) FROM {table}
  WHERE {overlapped} AND lo <= {start}
  UNION ALL
  SELECT {host}, {host}, max(lo, {end}), hi FROM {table}
  WHERE {overlapped} AND hi > {end};
DELETE FROM {table} WHERE id IN (SELECT id FROM {table}
                                 WHERE {overlapped});
""".format(table=TABLE, host=host, overlapped=overlapped,
           start=_minute(start), end=_minute(end))


def _statements():
    """Return the DDL of the gap index: the R*Tree and its triggers."""
    return [
        'CREATE VIRTUAL TABLE %s USING rtree_i32('
        'id, host_lo, host_hi, lo, hi)' % TABLE,
        'CREATE TRIGGER host_gaps_host_added AFTER INSERT ON computehosts '
        'BEGIN INSERT INTO %s (host_lo, host_hi, lo, hi) '
        'VALUES (NEW.id, NEW.id, %d, %d); END' % (TABLE, NEVER, FOREVER),
        'CREATE TRIGGER host_gaps_host_deleted AFTER DELETE ON computehosts '
        'BEGIN DELETE FROM %s WHERE id IN (SELECT id FROM %s WHERE %s); '
        'END' % (TABLE, TABLE, _of_host('OLD.id')),
        'CREATE TRIGGER host_gaps_booked AFTER INSERT ON host_allocations '
        'WHEN NEW.expires_at IS NULL BEGIN %s END' % _split(
            'NEW.host_id', 'NEW.start_date', 'NEW.end_date'),
        'CREATE TRIGGER host_gaps_released AFTER DELETE ON host_allocations '
        'WHEN OLD.expires_at IS NULL BEGIN %s END' % _rebuild('OLD.host_id'),
        # Any change of the columns the gaps depend on: both hosts again
        # (a hold that becomes a booking, a booking moved).
        'CREATE TRIGGER host_gaps_changed AFTER UPDATE OF host_id, '
        'start_date, end_date, expires_at ON host_allocations BEGIN %s %s '
        'END' % (_rebuild('OLD.host_id'), _rebuild('NEW.host_id')),
    ]


TRIGGERS = ('host_gaps_host_added', 'host_gaps_host_deleted',
            'host_gaps_booked', 'host_gaps_released', 'host_gaps_changed')

# Every host's gaps at once, as _rebuild makes one host's.
_FILL = """
INSERT INTO {table} (host_lo, host_hi, lo, hi)
  SELECT h, h, coalesce({prev}, {never}), coalesce({start} + 1, {forever})
  FROM (SELECT host_id AS h, start_date AS s, max(end_date) OVER (
               PARTITION BY host_id ORDER BY start_date
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev
        FROM host_allocations WHERE expires_at IS NULL
        UNION ALL
        SELECT id, NULL, (SELECT max(end_date) FROM host_allocations
                          WHERE host_id = computehosts.id
                          AND expires_at IS NULL)
        FROM computehosts)
  WHERE prev IS NULL OR s IS NULL OR prev <= s
""".format(table=TABLE, prev=_minute('prev'), start=_minute('s'),
           never=NEVER, forever=FOREVER)


def _ddl(statement):
    """Return ``statement`` as DDL (whose text is %-formatted: escaped)."""
    return sa.DDL(statement.replace('%', '%%'))


def create(connection):
    """Make the gap index on an SQLite connection, for the rows there.

    The R*Tree and its triggers, then every host's gaps (for a schema
    that already has hosts and bookings: the migration's case).
    """
    for statement in _statements() + [_FILL]:
        connection.execute(_ddl(statement))


def drop(connection):
    """Take the gap index off an SQLite connection."""
    for trigger in TRIGGERS:
        connection.execute(_ddl('DROP TRIGGER IF EXISTS %s' % trigger))
    connection.execute(_ddl('DROP TABLE IF EXISTS %s' % TABLE))


def attach(allocations):
    """Have the schema's DDL make and drop the gap index on SQLite.

    After ``allocations`` (host_allocations: created after computehosts,
    dropped before it) is created; before it is dropped.
    """
    sa.event.listen(allocations, 'after_create', _on_create)
    sa.event.listen(allocations, 'before_drop', _on_drop)


def _on_create(target, connection, **kw):
    if connection.dialect.name == 'sqlite':
        create(connection)


def _on_drop(target, connection, **kw):
    if connection.dialect.name == 'sqlite':
        drop(connection)


def present(connection):
    """Return whether the database has the gap index (SQLite only)."""
    return connection.dialect.name == 'sqlite'


# Up to ``limit`` hosts with a gap that holds [lower, upper), as minutes
# the triggers' way (see the module's docstring), in one row: a row per
# host cost a full pool's search more than the R*Tree itself. Built once:
# its cache key is then the same statement's. Dates bound as the schema
# stores them on SQLite (models.DateTime is sa.DateTime there).
_CANDIDATES = sa.text(
    'SELECT group_concat(host_lo) FROM (SELECT host_lo FROM %s '
    'WHERE lo <= %s AND hi > %s LIMIT :limit)' % (
        TABLE, _minute(':lower'), _minute(':upper'))).bindparams(
    sa.bindparam('lower', type_=sa.DateTime()),
    sa.bindparam('upper', type_=sa.DateTime()))


def candidates(connection, lower, upper, limit):
    """Return up to ``limit`` ids of hosts that may be free in the window.

    Every host free of bookings in ``[lower, upper)`` when fewer than
    ``limit`` come back; some of them may be busy (the gaps are wider
    than the truth, and holds are not in them).
    """
    ids = connection.execute(_CANDIDATES, {
        'lower': lower, 'upper': upper, 'limit': limit}).scalar()
    return [int(host_id) for host_id in ids.split(',')] if ids else []
