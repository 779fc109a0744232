"""What the sync and asyncio clients share: the stubs on one channel, the default timeout, and
a stream's cancellation bookkeeping."""

from slotserve._stubs import health_grpc, pb_grpc


class ClientBase:
    def __init__(self, channel, timeout):
        self._channel = channel
        self._stub = pb_grpc.SlotServeStub(channel)
        self._health = health_grpc.HealthStub(channel)
        self._timeout = timeout

    def _timeout_of(self, timeout):
        return self._timeout if timeout is None else timeout


class StreamBase:
    """A Generate call: `finished` is set once the stream ended; cancel() ends it early (the
    iteration then just stops) and the server frees the request's slot."""

    def __init__(self, call):
        self._call = call
        self._cancelled = False
        self.finished = None

    def cancel(self):
        self._cancelled = True
        self._call.cancel()
