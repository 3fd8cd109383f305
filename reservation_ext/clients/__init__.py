"""The calls reservation-ext makes to other OpenStack services.

Each client speaks to one service, as the reservation service user of
``[reservation_client]`` (:mod:`.service_user`): :mod:`.compute` (Nova),
:mod:`.block_storage` (Cinder) and :mod:`.image` (the image API). Every
call is idempotent so that an engine may repeat an action another left
half done.
"""
