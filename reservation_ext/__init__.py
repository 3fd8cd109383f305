"""reservation-ext: time-based resource reservation (leases) for OpenStack."""
