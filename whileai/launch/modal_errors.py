"""What modal's own exceptions mean for an arm (modal 1.6.4, modal/exception.py): imported only by
whileai.launch.modal_app, the one module that imports modal.

Three kinds, by who the exception speaks for:
- the client cannot ask at all (no token, no network, a closed client): `InfraError`, and the
  collect stops with nothing marked (whileai.launch.executor);
- the server could not answer this one question (gRPC statuses UNAVAILABLE, UNKNOWN, CANCELLED and
  DEADLINE_EXCEEDED are ServiceError, INTERNAL is InternalError, RESOURCE_EXHAUSTED,
  NOT_FOUND and PERMISSION_DENIED their own classes: modal/_grpc_client.py:27-44), or a client
  timeout of modal's own: the arm stays pending and the next collect asks again. Its call may
  well still run, so it is never marked failed (and `--relaunch-failed` never starts a second
  copy of it);
- the call ended: its result is the outcome (FunctionCall.get re-raises what the call ended with,
  modal/_utils/function_utils.py:527-574): past its timeout (FunctionTimeoutError), the container
  ended without a result (RemoteError: OOM, a crash; Modal restarts a preempted input itself, so a
  preemption is a restart, not this), Modal gave the input up after its own retries
  (InternalFailure), or the remote function raised. These are failed, with the log tail.
"""

from __future__ import annotations

import modal.exception as mx

from whileai.launch.executor import InfraError

CLIENT: tuple[type[BaseException], ...] = (mx.AuthError, mx.ConnectionError, mx.ClientClosed,
                                           ConnectionError)
SERVER: tuple[type[BaseException], ...] = (
    mx.ServiceError, mx.InternalError, mx.ResourceExhaustedError, mx.NotFoundError,
    mx.PermissionDeniedError, mx.UnimplementedError, mx.DataLossError)


def name(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def infra(e: BaseException) -> InfraError:
    """The InfraError for an exception of the client (CLIENT)."""
    return InfraError(name(e))


def unanswered(e: BaseException) -> str | None:
    """Why the server did not answer (SERVER, or a modal timeout that is not the call's own):
    the note of an arm left pending; None when `e` is not one of those."""
    if isinstance(e, (mx.FunctionTimeoutError, mx.OutputExpiredError)):
        return None
    if isinstance(e, SERVER) or isinstance(e, mx.TimeoutError):
        return f"Modal did not answer ({name(e)}); the next --collect asks again"
    return None


def ended(e: BaseException, timeout: int) -> str:
    """Why a call that ended without a record failed (the log tail is added by the caller)."""
    if isinstance(e, mx.FunctionTimeoutError):
        return f"ran past its timeout ({timeout} s per attempt): {e}"
    if isinstance(e, mx.InternalFailure):
        return f"Modal gave the input up after its own retries (InternalFailure): {e}"
    if isinstance(e, mx.RemoteError):
        return f"the container ended without a result ({name(e)}: e.g. out of memory or a crash)"
    return f"the remote call raised {name(e)}"


__all__ = ["CLIENT", "SERVER", "ended", "infra", "name", "unanswered"]
