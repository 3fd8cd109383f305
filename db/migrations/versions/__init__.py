"""The migration scripts, one per revision."""
