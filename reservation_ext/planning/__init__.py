"""Planning: which capacity is free when, and booking it.

:mod:`.planner` finds free hosts (one SQL statement) and books whole hosts
or instance slices with Placement-style generation checks;
:mod:`.capabilities` compiles capability queries into that statement;
:mod:`.volume_capacity` books reservable block storage GB;
:mod:`.pool_snapshot` is the scheduler's view of the host pools, reloaded
when their generation moves. Nothing here calls Nova or Cinder.
"""
