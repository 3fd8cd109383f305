"""The lease service: what a lease is and what may happen to it.

:mod:`.service` creates, shows, lists, updates and deletes leases in one
writer transaction each, calling the resource plugins to book; the
request parsing it does first lives in :mod:`.requests`, and the
``lease_params`` hint of server and volume creates in :mod:`.hints`.
:mod:`.states` names the lease, reservation and event statuses and the
moves between them; :mod:`.views` renders leases as Blazar's v1 views,
which are also the payload of :mod:`.notifications`.
"""
