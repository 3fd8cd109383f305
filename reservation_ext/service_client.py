"""The keystoneauth1 adapter of the reservation service user.

``[reservation_client]`` holds keystoneauth1's session, auth and adapter
options; Nova and Cinder are found through the catalog. Failed
connections and 5xx answers are retried with backoff (the adapter's
``connect_retries`` and ``status_code_retries``, 3 unless configured).
"""

from keystoneauth1 import loading as ks_loading

from reservation_ext import conf as conf_mod

DEFAULT_RETRIES = 3
RETRIED_STATUS_CODES = (500, 502, 503, 504)


def adapter(conf, service_type, **kwargs):
    """An adapter for ``service_type`` (extra adapter arguments allowed)."""
    group = conf_mod.CLIENT_GROUP
    auth = ks_loading.load_auth_from_conf_options(conf, group)
    session = ks_loading.load_session_from_conf_options(conf, group,
                                                        auth=auth)
    result = ks_loading.load_adapter_from_conf_options(
        conf, group, session=session, auth=auth, service_type=service_type,
        **kwargs)
    for option in ('connect_retries', 'status_code_retries'):
        if getattr(result, option) is None:
            setattr(result, option, DEFAULT_RETRIES)
    result.retriable_status_codes = list(RETRIED_STATUS_CODES)
    return result
