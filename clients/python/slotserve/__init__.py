"""Python client of slotserve's gRPC API (slotserve.v1).

    import slotserve
    with slotserve.Client("127.0.0.1:50051") as client:
        for chunk in client.generate("In the beginning", max_new_tokens=32, temperature=0):
            print(chunk.text, end="", flush=True)
        print(client.complete("And God said", max_new_tokens=16).text)

AsyncClient offers the same calls on asyncio. Failures raise slotserve.errors.SlotServeError
subclasses, one per gRPC status code (InvalidArgumentError, ResourceExhaustedError, ...).
"""

from slotserve import errors
from slotserve.aio import AsyncClient, AsyncGenerationStream
from slotserve.client import Client, GenerationStream
from slotserve.errors import (
    CancelledError,
    DeadlineExceededError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
    SlotServeError,
    UnauthenticatedError,
    UnavailableError,
)
from slotserve.results import Chunk, Completion, Finished, Hypothesis, Timings, TokenLogprob

__version__ = "0.1.0"

__all__ = [
    "AsyncClient", "AsyncGenerationStream", "CancelledError", "Chunk", "Client", "Completion",
    "DeadlineExceededError", "FailedPreconditionError", "Finished", "GenerationStream",
    "Hypothesis", "InvalidArgumentError", "NotFoundError", "ResourceExhaustedError",
    "SlotServeError", "Timings", "TokenLogprob", "UnauthenticatedError", "UnavailableError",
    "errors",
]
