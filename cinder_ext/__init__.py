"""Cinder API extension of reservation-ext (loaded by cinder-api)."""
