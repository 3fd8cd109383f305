"""Alembic migration scripts of the leases DB (see db.migration)."""
