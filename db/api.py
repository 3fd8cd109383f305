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

"""The leases DB transactions (oslo.db enginefacade).

Readers run inside ``context_manager.reader.using(ctx)``. Every writer
runs inside :func:`writer`, which keeps these invariants so that the
writers do not have to remember them:

* Writers run one at a time, each from its first statement. On SQLite
  the transaction begins with ``BEGIN IMMEDIATE``, so that writers queue
  for the database lock (up to the busy timeout) instead of failing with
  "database is locked" when two of them read and then both try to
  upgrade. On PostgreSQL and MariaDB its first statement locks the one
  ``pool_state`` row (``SELECT ... FOR UPDATE``), the writers' lock,
  held until the transaction ends. Without it, writers that book the
  same free hosts at once lose their generation compare-and-swap (the
  planner's ``computehosts.generation``) to each other, and under a
  crowd some lose every retry: a 409 while the capacity was there.
  Taken first by every writer, the lock cannot deadlock with the row
  locks writers take after it. The generation checks stay, for the
  bookings' own invariant; writers' transactions are short (no call to
  another service runs inside one), so queueing costs little.
* Every statement of a writer reads what was committed before it ran
  (READ COMMITTED): PostgreSQL's default, and what a writer sets on
  MySQL and MariaDB, whose default (REPEATABLE READ) would have it read
  a snapshot taken at its first read, so that a writer that waited for a
  row lock would not see what the writer it waited for committed (a
  volume booking would sum the capacity as it was before). InnoDB also
  takes no gap locks on the searches of a READ COMMITTED transaction,
  which spares writers that touch neighbouring rows from deadlocks.
* Timestamps come from the writer's clock: it travels with the
  transaction in the execution option :data:`db.models.CLOCK`, where the
  ``created_at`` / ``updated_at`` defaults read it.
* A transaction that changed a reservation pool (one of
  :data:`db.models.POOL_WRITES`, seen as its statements run through
  ``session.execute``; not those run on ``session.connection()``)
  bumps the ``pool_state`` generation when it commits, as its last
  statement (on PostgreSQL and MariaDB the writer holds that row's lock
  already). One that changed what preemptible servers depend on (one of
  :data:`db.models.BOOKING_WRITES`) bumps the ``booking_state``
  generation likewise.

A function that runs a whole writer transaction is decorated with
:func:`retry_on_conflict`, which reruns it when it lost a race.

:func:`update_returning` is ``UPDATE ... RETURNING``, which MariaDB
lacks (it has ``INSERT`` and ``DELETE ... RETURNING`` only).

This package is the bottom layer: it imports nothing from the services
above it (``reservation_ext``, ``nova_filters``, ``cinder_ext``), which
pass in what it needs (a clock, the error that means "lost a race").
"""

import contextlib
import functools

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

from db import models
from db import tables

# How many times a transaction that lost a race is run in all.
RETRY_ATTEMPTS = 10

# Execution option read by the SQLite "begin" hook below.
_SQLITE_BEGIN = 'reservation_sqlite_begin'
# How long an SQLite writer queues for the lock (ms). SQLite's waiters
# poll, and on a busy machine with several processes writing (the
# sandbox's API workers and engine) one can keep missing the lock for
# tens of seconds: it should wait, not fail the request.
SQLITE_BUSY_TIMEOUT_MS = 120000

# session.info keys: the session is a writer's; the counter tables whose
# generation its commit bumps.
_WRITER = 'reservation_writer'
_CHANGED = 'reservation_generations_changed'

POOL_STATE = tables.POOL_STATE
BOOKING_STATE = tables.BOOKING_STATE
# Each counter table and the writes that move it.
_WATCHED = ((POOL_STATE, models.POOL_WRITES),
            (BOOKING_STATE, models.BOOKING_WRITES))

# Each pooled SQLite connection's page cache (KiB). SQLite's default,
# 2 MiB, holds less than the allocations index of a pool of thousands of
# hosts, so that every search of it read its pages again from the OS
# (a quarter of a 10,000-host free-host search's SQL, measured with the
# CPU caches warm).
SQLITE_CACHE_KIB = 32768
# The pooled SQLite connections: oslo.db's defaults for the other
# databases' pools.
SQLITE_POOL_SIZE = 5
SQLITE_MAX_OVERFLOW = 50

# The names of SQLAlchemy's dialects of MySQL and MariaDB.
_MYSQL = ('mysql', 'mariadb')


def configure(conf):
    """Point the transaction context at ``[reservation_database]``.

    Does nothing once the context is in use: several parts of one process
    (the lease API and the scheduler filter beside it, or a test's
    database fixture) share it, and the first one configured it.
    """
    if context_manager.is_started:
        return
    context_manager.configure(**dict(conf.reservation_database.items()))


def get_engine():
    """Return the writer engine (for management commands and tests)."""
    return context_manager.writer.get_engine()


@contextlib.contextmanager
def writer(ctx, clock=None):
    """Open a writer transaction: ``with writer(ctx, clock) as session:``.

    Commits when the block ends, rolls back when it raises. Inside a
    writer transaction of ``ctx`` already open, it joins that one (and
    its clock).

    :param clock: where the rows' timestamps come from (an object with
        ``now()``, e.g. :mod:`reservation_ext.clock`'s); a transaction
        without one cannot write timestamped rows.
    """
    with context_manager.writer.using(ctx) as session:
        if not session.info.get(_WRITER):
            _begin_writer(session, clock)
        yield session


def _begin_writer(session, clock):
    session.info[_WRITER] = True
    sa.event.listen(session, 'do_orm_execute', _note_watched_write)
    sa.event.listen(session, 'before_commit', _bump_generations)
    options = {_SQLITE_BEGIN: True}
    if clock is not None:
        options[models.CLOCK] = clock
    # The connection, and with it the transaction, begins here, before the
    # block's first statement.
    connection = session.connection(execution_options=options)
    if connection.dialect.name in _MYSQL:
        # Applies to the transaction about to begin: none is open yet, as
        # MySQL's begins with its first statement that reads a table.
        connection.exec_driver_sql(
            'SET TRANSACTION ISOLATION LEVEL READ COMMITTED')
    if connection.dialect.name != 'sqlite':
        _take_writers_lock(session)


def _take_writers_lock(session):
    """Lock the ``pool_state`` row, making it first when there is none.

    When two first writers make it at once, the loser's insert fails on
    the primary key once the winner commits, and it then locks the
    winner's row.
    """
    if _lock_pool_state(session):
        return
    try:
        with session.begin_nested():
            session.execute(sa.insert(POOL_STATE).values(id=1, generation=1))
    except db_exc.DBDuplicateEntry:
        pass
    _lock_pool_state(session)


def _lock_pool_state(session):
    return session.execute(
        sa.select(POOL_STATE.c.id).where(POOL_STATE.c.id == 1)
        .with_for_update()).first()


def note_pools_changed(session):
    """Have a writer's commit bump the pool and booking generations.

    For a write that changes a pool but that :data:`db.models.POOL_WRITES`
    does not see as one: inserted rows that are already started (the
    leases an import brings over).
    """
    session.info.setdefault(_CHANGED, set()).update(
        table.name for table, _writes in _WATCHED)


def _note_watched_write(orm_execute_state):
    """Remember the generations a statement moves (a do_orm_execute hook)."""
    for table, writes in _WATCHED:
        if _writes_watched(orm_execute_state, writes):
            orm_execute_state.session.info.setdefault(
                _CHANGED, set()).add(table.name)


def _writes_watched(state, writes):
    table = getattr(state.statement, 'table', None)
    watched = writes.get(getattr(table, 'name', None))
    if watched is None:
        return False
    if state.is_insert:
        return watched.insert
    if state.is_delete:
        return watched.delete
    return state.is_update and bool(watched.update & _set_columns(state))


def _set_columns(state):
    """Return the names of the columns an UPDATE sets.

    Those of its ``values()`` and, for one run with parameters (a list of
    rows to update), theirs. SQLAlchemy has no public accessor for the
    ``values()`` of a statement: ``_values`` holds them (the tests of the
    pool generation break if that changes).
    """
    names = {getattr(key, 'key', key)
             for key in state.statement._values or ()}
    parameters = state.parameters or ()
    for row in ([parameters] if isinstance(parameters, dict)
                else parameters):
        names.update(row)
    return names


def _bump_generations(session):
    """Bump the moved generations last, at commit (a before_commit hook).

    The hook fires for savepoints too (the first bump of
    :func:`bump_counter` makes one): only the outermost commit bumps.
    """
    if session.in_nested_transaction():
        return
    changed = session.info.pop(_CHANGED, ())
    # Named one by one, so that each bump reads as its table's write.
    if POOL_STATE.name in changed:
        bump_counter(session, POOL_STATE)
    if BOOKING_STATE.name in changed:
        bump_counter(session, BOOKING_STATE)


def read_generation(table):
    """Return the committed generation of a counter table (0: none yet).

    One small SELECT on a pooled connection of its own, outside any
    transaction of the caller's: what the last commit left. The caches of
    the scheduler's filter and weigher call it once per request.
    """
    with get_engine().connect() as connection:
        return connection.execute(
            sa.select(table.c.generation).where(table.c.id == 1)
        ).scalar() or 0


def bump_counter(session, table):
    """Add one to the ``generation`` of the single row (id 1) of ``table``.

    The first bump makes the row; when two transactions make it at once,
    the loser bumps the winner's. The row lock is held until commit, so
    the bump also serializes the transactions that take it.
    """
    if _increment(session, table):
        return
    try:
        with session.begin_nested():
            session.execute(sa.insert(table).values(id=1, generation=1))
    except db_exc.DBDuplicateEntry:
        _increment(session, table)


def _increment(session, table):
    return session.execute(
        sa.update(table).where(table.c.id == 1)
        .values(generation=table.c.generation + 1)).rowcount


def bump_if_unchanged(session, statement, generations):
    """Bump the rows still at the read generation: a compare-and-swap.

    One UPDATE that only matches the rows still at the generation the
    caller read. On PostgreSQL and MySQL a concurrent writer of the same
    row waits for our row lock and then re-checks the WHERE clause
    against our committed generation, so it matches fewer rows.

    :param statement: ``sa.update(table)`` of a table with ``id`` and
        ``generation`` columns (the caller's write).
    :param generations: ``{id: generation}`` as the caller read them.
    :returns: whether every row matched (else the caller lost the race
        and must roll back).
    """
    table = statement.table
    result = session.execute(
        statement.where(table.c.id.in_(generations),
                        table.c.generation == sa.case(
                            generations, value=table.c.id))
        .values(generation=table.c.generation + 1))
    return result.rowcount == len(generations)


def update_returning(session, statement, *columns):
    """Run an UPDATE; return the ``columns`` of the rows it changed.

    The values are those after the UPDATE. One ``UPDATE ... RETURNING``
    where the database has it (PostgreSQL, SQLite). MariaDB has not:
    there the rows are locked first (``SELECT ... FOR UPDATE``, which
    reads their last committed version and holds them until commit), then
    updated and read back by primary key, which gives the same rows.

    :param statement: an UPDATE of one table with a one-column primary
        key (``sa.update(table).where(...).values(...)``).
    :returns: a result of ``columns``, in no particular order.
    """
    if session.get_bind().dialect.update_returning:
        return session.execute(statement.returning(*columns))
    table = statement.table
    key, = table.primary_key.columns
    ids = session.scalars(sa.select(key).where(statement.whereclause)
                          .with_for_update()).all()
    if ids:
        session.execute(statement.where(key.in_(ids)))
    return session.execute(sa.select(*columns).where(key.in_(ids)))


def update_each(session, statement):
    """Run an UPDATE row by row; return the ids of the rows it changed.

    Each row's UPDATE tests the statement's condition again, so that of
    two writers racing for a row one changes it, on every backend
    (``UPDATE ... RETURNING`` is not on all of them).

    :param statement: an UPDATE of one table with a one-column primary
        key (``sa.update(table).where(...).values(...)``).
    """
    key, = statement.table.primary_key.columns
    return [row_id for row_id in session.scalars(
        sa.select(key).where(statement.whereclause)).all()
        if session.execute(statement.where(key == row_id)).rowcount]


def retry_on_conflict(conflict, attempts=RETRY_ATTEMPTS):
    """Decorate a function that runs a whole writer transaction.

    ``conflict`` is the exception class by which the function says that
    its transaction lost a race (a generation or status check failed).
    When it raises one, or the DB reports a deadlock, the function runs
    again after a short jittered backoff, at most ``attempts`` times in
    all: a lost race means another transaction made progress. Then the
    last ``conflict`` propagates; a deadlock is raised as ``conflict()``.
    """
    def decorator(fn):
        retrying = oslo_db_api.wrap_db_retry(
            max_retries=attempts - 1, retry_interval=0.01,
            max_retry_interval=0.5, retry_on_deadlock=True, jitter=True,
            exception_checker=lambda exc: isinstance(exc, conflict))(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return retrying(*args, **kwargs)
            except db_exc.DBDeadlock:
                raise conflict()
        return wrapper
    return decorator


def _setup_sqlite(engine):
    if engine.dialect.name != 'sqlite':
        return
    if _is_file(engine.url):
        engine.pool = _pooled(engine.pool)
    queue_sqlite_writers(
        engine, lambda conn: conn.get_execution_options().get(_SQLITE_BEGIN),
        foreign_keys=True)


def _is_file(url):
    return url.database not in (None, '', ':memory:')


def _pooled(pool):
    """A pool that keeps SQLite file connections, in place of ``pool``.

    oslo.db gives a SQLite file a NullPool: every transaction opened a
    connection, which parsed the schema and began with an empty page
    cache (1.4 ms of a reader transaction's 2 ms, measured). QueuePool is
    SQLAlchemy's own choice for SQLite files (their connections may move
    between threads). The listeners registered on ``pool`` so far
    (oslo.db's: its BEGIN, the foreign keys) carry over, as
    ``Pool.recreate()`` carries them.
    """
    return sa.pool.QueuePool(
        pool._creator, pool_size=SQLITE_POOL_SIZE,
        max_overflow=SQLITE_MAX_OVERFLOW, dialect=pool._dialect,
        _dispatch=pool.dispatch)


def queue_sqlite_writers(engine, immediate, foreign_keys=False):
    """Have the transactions ``immediate`` picks queue for SQLite's lock.

    A deferred transaction that reads, then writes while another writes,
    fails at once with "database is locked"; one that begins IMMEDIATE
    waits for the lock, up to the busy timeout. The leases DB's writers
    (:func:`writer`) and every transaction of the sandbox's Heat, whose
    engine writes from many threads, begin so.

    :param engine: an oslo.db engine on SQLite.
    :param immediate: ``f(connection)``: whether a transaction beginning
        on the connection begins IMMEDIATE.
    :param foreign_keys: enforce the schema's foreign keys (off in
        SQLite by default).
    """
    @sa.event.listens_for(engine, 'connect')
    def _wal(dbapi_con, con_record):
        # WAL lets readers go on while a writer commits; NORMAL sync is
        # durable in WAL mode up to the last checkpointed commit.
        if _is_file(engine.url):
            dbapi_con.execute('PRAGMA journal_mode=WAL')
            dbapi_con.execute('PRAGMA synchronous=NORMAL')
            dbapi_con.execute('PRAGMA cache_size=-%d' % SQLITE_CACHE_KIB)
        dbapi_con.execute('PRAGMA busy_timeout=%d' % SQLITE_BUSY_TIMEOUT_MS)
        if foreign_keys:
            # The schema's ON DELETE CASCADE holds on SQLite only so.
            dbapi_con.execute('PRAGMA foreign_keys=ON')

    @sa.event.listens_for(engine, 'begin')
    def _begin_immediate(conn):
        if not immediate(conn):
            return
        # oslo.db turns pysqlite's own BEGIN off and its "begin" listener,
        # which runs before this one, has just emitted a deferred BEGIN:
        # nothing has run in it yet, so trading it for BEGIN IMMEDIATE
        # loses nothing. SQLAlchemy does not begin again for statements
        # run inside this event.
        if conn.connection.dbapi_connection.in_transaction:
            conn.exec_driver_sql('ROLLBACK')
        conn.exec_driver_sql('BEGIN IMMEDIATE')

    # oslo.db opened a connection before these hooks existed; drop it so
    # that every connection gets the pragmas above.
    engine.dispose()


def new_context_manager(**options):
    """Make a transaction context with the leases DB's engine hooks.

    ``options`` are oslo.db's (``connection=...``); without them, call
    ``configure()`` on the result before use.
    """
    manager = enginefacade.transaction_context()
    manager.append_on_engine_create(_setup_sqlite)
    if options:
        manager.configure(**options)
    return manager


context_manager = new_context_manager()
