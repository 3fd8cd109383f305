"""Console scripts of reservation-ext."""
