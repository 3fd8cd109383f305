"""Nova scheduler filters of reservation-ext (loaded by nova-scheduler)."""
