"""The leases DB transaction context (oslo.db enginefacade).

Modules that own a part of the schema (lease service, planner, engine) run
their SQL inside ``context_manager.writer.using(ctx)`` /
``context_manager.reader.using(ctx)``, as Placement does.
"""

import functools

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

from reservation_ext import exceptions

# How many times a transaction that lost a race is run in all.
RETRY_ATTEMPTS = 10

# Execution option read by the SQLite "begin" hook below.
_SQLITE_BEGIN = 'reservation_sqlite_begin'


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
    """The writer engine (for management commands and tests)."""
    return context_manager.writer.get_engine()


def lock_for_write(session):
    """Make ``session``'s transaction a writer from its first statement.

    Call this before any other statement of a transaction that reads and
    then writes based on what it read (e.g. a search followed by an
    allocation). On SQLite it begins the transaction with ``BEGIN
    IMMEDIATE``: writers queue for the database lock instead of failing
    with "database is locked" when two readers both try to upgrade. Other
    backends rely on row locks and generation checks, so this is a no-op
    there. Calling it again in the same transaction (a planner call inside
    the lease service's transaction) does nothing more.
    """
    if session.info.get(_SQLITE_BEGIN):
        return session.connection()
    session.info[_SQLITE_BEGIN] = True
    return session.connection(execution_options={_SQLITE_BEGIN: True})


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


def retry_on_conflict(attempts=RETRY_ATTEMPTS):
    """Decorate a function that runs a whole writer transaction.

    When the transaction loses a race (``ConcurrentUpdate`` from a
    generation or status check, or a DB deadlock) the function runs again
    after a short jittered backoff, at most ``attempts`` times in all; a
    lost race means another request made progress. Then it raises
    ``ConcurrentUpdate`` (409).
    """
    def decorator(fn):
        retrying = oslo_db_api.wrap_db_retry(
            max_retries=attempts - 1, retry_interval=0.01,
            max_retry_interval=0.5, retry_on_deadlock=True, jitter=True,
            exception_checker=lambda exc: isinstance(
                exc, exceptions.ConcurrentUpdate))(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            try:
                return retrying(*args, **kwargs)
            except db_exc.DBDeadlock:
                raise exceptions.ConcurrentUpdate()
        return wrapper
    return decorator


def _setup_sqlite(engine):
    if engine.dialect.name != 'sqlite':
        return

    @sa.event.listens_for(engine, 'connect')
    def _wal(dbapi_con, con_record):
        # WAL lets readers go on while a writer commits; NORMAL sync is
        # durable in WAL mode up to the last checkpointed commit.
        if engine.url.database not in (None, '', ':memory:'):
            dbapi_con.execute('PRAGMA journal_mode=WAL')
            dbapi_con.execute('PRAGMA synchronous=NORMAL')
        dbapi_con.execute('PRAGMA busy_timeout=30000')
        # The schema's ON DELETE CASCADE holds on SQLite only with this.
        dbapi_con.execute('PRAGMA foreign_keys=ON')

    @sa.event.listens_for(engine, 'begin')
    def _begin_immediate(conn):
        if (not conn.get_execution_options().get(_SQLITE_BEGIN) or
                conn.info.get('in_transaction') == 'immediate'):
            return
        # oslo.db's listener has just emitted a deferred BEGIN and nothing
        # has run in it yet, so trading it for BEGIN IMMEDIATE loses
        # nothing. The marker (which oslo.db clears at commit/rollback)
        # stops the re-entry that executing here causes.
        conn.info['in_transaction'] = 'immediate'
        conn.exec_driver_sql('ROLLBACK')
        conn.exec_driver_sql('BEGIN IMMEDIATE')

    # oslo.db opened a test connection before these hooks existed; drop
    # it so that every connection gets the pragmas above.
    engine.dispose()


def new_context_manager(**options):
    """A transaction context with the leases DB's engine hooks.

    ``options`` are oslo.db's (``connection=...``); without them, call
    ``configure()`` on the result before use.
    """
    manager = enginefacade.transaction_context()
    manager.append_on_engine_create(_setup_sqlite)
    if options:
        manager.configure(**options)
    return manager


context_manager = new_context_manager()
