"""``python -m reservation_ext.sandbox.cinder``: see the package."""

from reservation_ext.sandbox.cinder import cloud

cloud.main()
