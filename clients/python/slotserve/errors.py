"""Typed errors: one exception class per gRPC status code the server answers with.

Every class derives from SlotServeError, which keeps the code and the server's message (the
message names the bad field, e.g. "sampling.top_p must be in (0, 1] (1 = off), got 1.5").
The ones a client meets in practice:

    InvalidArgumentError    a bad request field (the message names it)
    ResourceExhaustedError  the server's queue is full; retry later
    UnavailableError        the server is down, unreachable or draining (shutting down)
    DeadlineExceededError   the call's timeout passed
    CancelledError          the call was cancelled (by this client, or the server cut it off)
"""

import grpc


class SlotServeError(Exception):
    """A call to slotserve failed; `code` is the grpc.StatusCode, `details` the message."""

    code = grpc.StatusCode.UNKNOWN

    def __init__(self, details, code=None):
        super().__init__(details)
        self.details = details
        if code is not None:
            self.code = code

    def __str__(self):
        return f"{self.code.name}: {self.details}"


class CancelledError(SlotServeError):
    code = grpc.StatusCode.CANCELLED


class UnknownError(SlotServeError):
    code = grpc.StatusCode.UNKNOWN


class InvalidArgumentError(SlotServeError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceededError(SlotServeError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFoundError(SlotServeError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExistsError(SlotServeError):
    code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDeniedError(SlotServeError):
    code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhaustedError(SlotServeError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPreconditionError(SlotServeError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class AbortedError(SlotServeError):
    code = grpc.StatusCode.ABORTED


class OutOfRangeError(SlotServeError):
    code = grpc.StatusCode.OUT_OF_RANGE


class UnimplementedError(SlotServeError):
    code = grpc.StatusCode.UNIMPLEMENTED


class InternalError(SlotServeError):
    code = grpc.StatusCode.INTERNAL


class UnavailableError(SlotServeError):
    code = grpc.StatusCode.UNAVAILABLE


class DataLossError(SlotServeError):
    code = grpc.StatusCode.DATA_LOSS


class UnauthenticatedError(SlotServeError):
    code = grpc.StatusCode.UNAUTHENTICATED


_BY_CODE = {cls.code: cls for cls in SlotServeError.__subclasses__()}


def from_rpc_error(error):
    """The typed exception for a grpc.RpcError (sync or asyncio)."""
    code = error.code() if callable(getattr(error, "code", None)) else grpc.StatusCode.UNKNOWN
    details = error.details() if callable(getattr(error, "details", None)) else str(error)
    return _BY_CODE.get(code, SlotServeError)(details or "", code)
