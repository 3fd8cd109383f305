"""``python -m reservation_ext.sandbox.nova``: see the package."""

from reservation_ext.sandbox.nova import cloud

cloud.main()
