"""The synchronous client.

    with slotserve.Client("127.0.0.1:50051") as client:
        for chunk in client.generate("In the beginning", max_new_tokens=32, temperature=0):
            print(chunk.text, end="", flush=True)
"""

import grpc

from slotserve import _requests
from slotserve._base import ClientBase, StreamBase, open_channel
from slotserve._stubs import health_pb, pb
from slotserve.errors import from_rpc_error


class GenerationStream(StreamBase):
    """A Generate call in progress: iterate it for Chunks; `finished` is set once the stream
    ended. Leaving a `with` block (or calling cancel()) before the end cancels the request, and
    the server frees its slot."""

    def __iter__(self):
        try:
            for response in self._call:
                if response.HasField("tokens"):
                    yield _requests.chunk(response.tokens)
                elif response.HasField("finished"):
                    self._finish(_requests.finished(response.finished))
            self._ended = True
        except grpc.RpcError as error:
            if self._cancelled and error.code() == grpc.StatusCode.CANCELLED:
                return
            raise from_rpc_error(error) from None

    def text(self):
        """Reads the rest of the stream and returns its text."""
        return "".join(chunk.text for chunk in self)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        if not self._ended:
            self.cancel()


class Client(ClientBase):
    """slotserve.v1 over gRPC. `timeout` (seconds) applies to every call unless a call gives its
    own; None waits as long as the call takes."""

    def __init__(self, target="127.0.0.1:50051", *, timeout=None, options=None,
                 root_certificates=None, certificate_chain=None, private_key=None,
                 server_name=None, api_key=None):
        """TLS: `root_certificates` (PEM bytes of the CA to trust) turns it on;
        `certificate_chain` and `private_key` (PEM bytes) are the client certificate for
        servers that require one; `server_name` overrides the name checked in the server's
        certificate. `api_key` is sent as `authorization: Bearer <key>` with every call."""
        channel = open_channel(grpc, target, options, root_certificates, certificate_chain,
                               private_key, server_name)
        super().__init__(channel, timeout, api_key)

    def generate(self, prompt, *, timeout=None, **options):
        """Streams the completion of `prompt` (text, or a list of token ids). Options: see
        slotserve._requests.build_request (max_new_tokens, temperature, top_k, top_p, min_p,
        repetition/presence/frequency_penalty, seed, stop, stop_token_ids, ignore_eos,
        min_new_tokens, logprobs, request_id, n, keep_session, session, beam_width, n_best,
        length_penalty, source, prompt_logprobs, logit_bias). For an encoder-decoder model pass
        source= (text or ids) and prompt=None or a target prefix."""
        request = _requests.build_request(prompt, **options)
        return GenerationStream(self._stub.Generate(request, timeout=self._timeout_of(timeout),
                                                    metadata=self._metadata))

    def complete(self, prompt, *, timeout=None, **options):
        """The same generation, returned whole as a Completion."""
        request = _requests.build_request(prompt, **options)
        try:
            response = self._stub.Complete(request, timeout=self._timeout_of(timeout),
                                           metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return _requests.completion(response)

    def info(self, *, timeout=None):
        """The model and the live state-slot pool (slotserve.v1.ModelInfo)."""
        try:
            return self._stub.GetModelInfo(pb.GetModelInfoRequest(),
                                           timeout=self._timeout_of(timeout),
                                           metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None

    def health(self, service="", *, timeout=None):
        """"SERVING" or "NOT_SERVING" (draining) from grpc.health.v1."""
        try:
            response = self._health.Check(health_pb.HealthCheckRequest(service=service),
                                          timeout=self._timeout_of(timeout),
                                          metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return _requests.health_name(response)

    def export_session(self, handle, *, timeout=None):
        """A kept session's state as bytes (importable by any server of the same model)."""
        try:
            response = self._stub.ExportSession(pb.ExportSessionRequest(handle=handle),
                                                  timeout=self._timeout_of(timeout),
                                                  metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return response.state

    def import_session(self, state, *, timeout=None):
        """Bytes from export_session as a new session on this server; returns its handle."""
        try:
            response = self._stub.ImportSession(pb.ImportSessionRequest(state=state),
                                                  timeout=self._timeout_of(timeout),
                                                  metadata=self._metadata)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from None
        return response.handle

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
