"""The leases DB shared by nova-api, cinder-api and the engine."""
