"""reservation-sandbox: an all-in-one cloud for trying reservation-ext.

Keystone, Nova (with the lease API and ReservationFilter), Placement, an
image API and the reservation engine on 127.0.0.1, started and stopped by
one command (:mod:`reservation_ext.sandbox.main`).
"""
