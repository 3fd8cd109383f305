"""The lease API: Blazar v1 compatible, served inside nova-api."""
