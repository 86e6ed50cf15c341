"""The proxy's one error type: a message for the user, then a non-zero exit."""


class ProxyError(Exception):
    pass
