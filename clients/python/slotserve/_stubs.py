"""The generated gRPC modules, with a clear error when they have not been generated."""

try:
    from slotserve.v1 import slotserve_pb2 as pb
    from slotserve.v1 import slotserve_pb2_grpc as pb_grpc
    from slotserve._health.v1 import health_pb2 as health_pb
    from slotserve._health.v1 import health_pb2_grpc as health_grpc
except ImportError as error:  # pragma: no cover - a set-up mistake, not a code path
    raise ImportError(
        "slotserve's gRPC stubs are missing: run clients/python/generate_stubs.py (or install "
        "the package with pip, which runs it)") from error

__all__ = ["pb", "pb_grpc", "health_pb", "health_grpc"]
