"""The Cinder side of the sandbox: one child process with all of Cinder.

    python -m reservation_ext.sandbox.cinder --state-dir DIR \
        --listen cinder=FD --ready-fd FD

See :mod:`reservation_ext.sandbox.cinder.cloud`. Cinder runs under
eventlet, as its own services do: like ``cinder.cmd``, this package
monkey patches the process before any other module of Cinder is imported.
Nova cannot share the process (both configure the global ``cfg.CONF``
with clashing options), hence a child of its own.
"""

from cinder import monkey_patch

monkey_patch.patch()
