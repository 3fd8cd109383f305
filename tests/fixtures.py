"""Test fixtures shared by the unit and functional tests."""

import os

import fixtures
from oslo_db.sqlalchemy import test_fixtures as db_fixtures

from db import api as db_api
from db import models


class Database(fixtures.Fixture):
    """A fresh SQLite file DB with the current schema, used by db.api."""

    def _setUp(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        self.url = 'sqlite:///' + os.path.join(tmp, 'reservation.sqlite')
        facade = db_api.new_context_manager(connection=self.url)
        self.useFixture(db_fixtures.ReplaceEngineFacadeFixture(
            db_api.context_manager, facade))
        self.engine = facade.writer.get_engine()
        models.Base.metadata.create_all(self.engine)
        self.addCleanup(self.engine.dispose)
