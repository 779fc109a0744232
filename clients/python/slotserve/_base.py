"""What the sync and asyncio clients share: the channel's credentials, the stubs on one
channel, the default timeout, the API key, and a stream's cancellation bookkeeping."""

import grpc

from slotserve._stubs import health_grpc, pb_grpc


def channel_settings(root_certificates, certificate_chain, private_key, server_name, options):
    """(credentials or None for plaintext, options) for grpc's channel constructors.

    TLS is on when `root_certificates` (PEM bytes of the CA to trust) is given; a client
    certificate (`certificate_chain` and `private_key`, PEM bytes) is for servers started with
    --tls-client-ca; `server_name` overrides the name checked in the server's certificate."""
    options = list(options or [])
    # No cap on what the server sends: an exported session is a whole state (a softmax model's
    # is past gRPC's default 4 MiB). An option the caller gave wins.
    if not any(name == "grpc.max_receive_message_length" for name, _ in options):
        options.append(("grpc.max_receive_message_length", -1))
    if root_certificates is None:
        if certificate_chain is not None or private_key is not None or server_name is not None:
            raise ValueError("certificate_chain, private_key and server_name need "
                             "root_certificates (which turns TLS on)")
        return None, options
    if (certificate_chain is None) != (private_key is None):
        raise ValueError("certificate_chain and private_key must be given together")
    credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates,
                                               private_key=private_key,
                                               certificate_chain=certificate_chain)
    if server_name is not None:
        options.append(("grpc.ssl_target_name_override", server_name))
    return credentials, options


def open_channel(grpc_module, target, options, root_certificates, certificate_chain,
                 private_key, server_name):
    """A channel of `grpc_module` (grpc or grpc.aio): plaintext, or TLS as channel_settings
    says."""
    credentials, options = channel_settings(root_certificates, certificate_chain, private_key,
                                            server_name, options)
    if credentials is None:
        return grpc_module.insecure_channel(target, options=options)
    return grpc_module.secure_channel(target, credentials, options=options)


class ClientBase:
    def __init__(self, channel, timeout, api_key=None):
        self._channel = channel
        self._stub = pb_grpc.SlotServeStub(channel)
        self._health = health_grpc.HealthStub(channel)
        self._timeout = timeout
        # Sent with every call (as per-call metadata rather than call credentials, which
        # grpc only sends over TLS: a key must work on a plaintext loopback channel too).
        self._metadata = (("authorization", f"Bearer {api_key}"),) if api_key else None

    def _timeout_of(self, timeout):
        return self._timeout if timeout is None else timeout


class StreamBase:
    """A Generate call: `finished` is set once the stream ended (with n > 1 choices: the last
    choice to end; `finished_choices` holds every choice's, in the order they ended); cancel()
    ends it early (the iteration then just stops) and the server frees the request's slots."""

    def __init__(self, call):
        self._call = call
        self._cancelled = False
        self.finished = None
        self.finished_choices = []
        self._ended = False  # the server ended the stream (every choice finished)

    def _finish(self, finished):
        self.finished_choices.append(finished)
        self.finished = finished

    def cancel(self):
        self._cancelled = True
        self._call.cancel()
