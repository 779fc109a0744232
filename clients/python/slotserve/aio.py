"""The asyncio client: the same calls as Client, awaitable.

    async with slotserve.AsyncClient("127.0.0.1:50051") as client:
        async for chunk in client.generate("In the beginning", max_new_tokens=32):
            print(chunk.text, end="", flush=True)
"""

import asyncio

import grpc
import grpc.aio

from slotserve import _requests
from slotserve._base import ClientBase, StreamBase, open_channel
from slotserve._stubs import health_pb, pb
from slotserve.errors import from_rpc_error


class AsyncGenerationStream(StreamBase):
    """A Generate call in progress: `async for` it for Chunks; `finished` is set once the
    stream ended. Leaving an `async with` block (or cancel()) before the end cancels the
    request, and the server frees its slot."""

    async def __aiter__(self):
        try:
            async for response in self._call:
                if response.HasField("tokens"):
                    yield _requests.chunk(response.tokens)
                elif response.HasField("finished"):
                    self._finish(_requests.finished(response.finished))
            self._ended = True
        except asyncio.CancelledError:
            if not self._cancelled:
                raise
        except grpc.RpcError as error:
            if self._cancelled and error.code() == grpc.StatusCode.CANCELLED:
                return
            raise from_rpc_error(error) from None

    async def text(self):
        """Reads the rest of the stream and returns its text."""
        return "".join([chunk.text async for chunk in self])

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info):
        if not self._ended:
            self.cancel()


class AsyncClient(ClientBase):
    """slotserve.v1 over gRPC on asyncio (grpc.aio). Create it inside a running event loop."""

    def __init__(self, target="127.0.0.1:50051", *, timeout=None, options=None,
                 root_certificates=None, certificate_chain=None, private_key=None,
                 server_name=None, api_key=None):
        """TLS and `api_key` as Client."""
        channel = open_channel(grpc.aio, target, options, root_certificates, certificate_chain,
                               private_key, server_name)
        super().__init__(channel, timeout, api_key)

    def generate(self, prompt, *, timeout=None, **options):
        """Streams the completion of `prompt`; options as Client.generate."""
        request = _requests.build_request(prompt, **options)
        return AsyncGenerationStream(
            self._stub.Generate(request, timeout=self._timeout_of(timeout),
                                metadata=self._metadata))

    async def complete(self, prompt, *, timeout=None, **options):
        request = _requests.build_request(prompt, **options)
        try:
            response = await self._stub.Complete(request, timeout=self._timeout_of(timeout),
                                                 metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return _requests.completion(response)

    async def info(self, *, timeout=None):
        try:
            return await self._stub.GetModelInfo(pb.GetModelInfoRequest(),
                                                 timeout=self._timeout_of(timeout),
                                                 metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None

    async def health(self, service="", *, timeout=None):
        try:
            response = await self._health.Check(health_pb.HealthCheckRequest(service=service),
                                                timeout=self._timeout_of(timeout),
                                                metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return _requests.health_name(response)

    async def export_session(self, handle, *, timeout=None):
        """A kept session's state as bytes (importable by any server of the same model)."""
        try:
            response = await self._stub.ExportSession(pb.ExportSessionRequest(handle=handle),
                                                  timeout=self._timeout_of(timeout),
                                                  metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return response.state

    async def import_session(self, state, *, timeout=None):
        """Bytes from export_session as a new session on this server; returns its handle."""
        try:
            response = await self._stub.ImportSession(pb.ImportSessionRequest(state=state),
                                                  timeout=self._timeout_of(timeout),
                                                  metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return response.handle

    async def close(self):
        await self._channel.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info):
        await self.close()
