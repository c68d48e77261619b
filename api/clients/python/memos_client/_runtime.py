"""The hand-written part of the client: the HTTP call, errors and options.

_generated.py adds one method per operation and an error class per kind.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Mapping, Optional, Type

#: Where ``memos serve`` listens by default.
DEFAULT_BASE_URL = "http://127.0.0.1:7077"

#: How long a call may take by default, in seconds.
DEFAULT_TIMEOUT = 30.0


class MemosError(Exception):
    """A failed call.

    ``kind`` is the API's error kind (not_found, invalid, forbidden, ...),
    ``status`` the HTTP status, 0 when no answer came (the server could not
    be reached or the call timed out). There is a subclass per kind:
    NotFoundError, InvalidError, ForbiddenError, ...
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "internal",
        status: int = 0,
        operation: str = "",
        request_id: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.status = status
        self.operation = operation
        self.request_id = request_id

    def __str__(self) -> str:
        where = self.operation + ": " if self.operation else ""
        return "%s%s (%s, HTTP %d)" % (where, self.message, self.kind, self.status)


#: Error classes by kind, filled by _generated.py.
ERROR_CLASSES: Dict[str, Type[MemosError]] = {}


def _error(kind: str, message: str, **fields: Any) -> MemosError:
    cls = ERROR_CLASSES.get(kind, MemosError)
    return cls(message, kind=kind, **fields)


class BaseClient:
    """The transport of Client: base URL, token, namespace, timeout.

    A client holds no connection and no state that calls change: one may be
    shared by threads.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        token: Optional[str] = None,
        namespace: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        """Args:
        base_url: the server's URL (default http://127.0.0.1:7077); a path
            prefix is kept.
        token: a bearer token (server.tokens / MEMOS_TOKEN on the server).
        namespace: the namespace of calls that name none (default: the
            server's, or the token's only one).
        timeout: how long a call may take, in seconds (default 30).
        headers: extra headers sent with every call.
        """
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                "memos: base_url %r must be an http or https URL, e.g. %s" % (base_url, DEFAULT_BASE_URL)
            )
        if not timeout > 0:
            raise ValueError("memos: timeout %r must be a positive number of seconds" % (timeout,))
        self.base_url = base_url.rstrip("/")
        self.namespace = namespace or None
        self.timeout = float(timeout)
        self._token = token or None
        self._headers = dict(headers or {})

    def call(self, operation: str, body: Optional[Mapping[str, Any]] = None) -> Any:
        """Call an operation by name and return its decoded JSON answer.

        What each generated method does; useful for an operation newer than
        this client. Fields whose value is None are not sent.
        """
        payload = {k: v for k, v in (body or {}).items() if v is not None}
        if "namespace" not in payload and self.namespace is not None:
            payload["namespace"] = self.namespace
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        return self._request(operation, "/api/mem/" + operation, "POST", data)

    def health(self) -> Dict[str, Any]:
        """GET /healthz: ``{"status": "ok", "version": ...}`` when the server is up."""
        return self._request("healthz", "/healthz", "GET", None)

    def _request(self, operation: str, path: str, method: str, data: Optional[bytes]) -> Any:
        headers = {"Accept": "application/json"}
        headers.update(self._headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        req = urllib.request.Request(self.base_url + path, data=data, headers=headers, method=method)
        status, request_id = 0, ""
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                status = res.status
                request_id = res.headers.get("X-Request-ID", "")
                text = res.read()
        except urllib.error.HTTPError as err:
            status = err.code
            request_id = err.headers.get("X-Request-ID", "") if err.headers else ""
            try:
                text = err.read()
            except (OSError, socket.timeout):
                text = b""
            finally:
                err.close()
            raise self._failure(operation, status, request_id, text) from None
        except (socket.timeout, TimeoutError) as err:
            raise _error(
                "deadline_exceeded",
                "no answer from %s within %g s" % (self.base_url, self.timeout),
                status=status,
                operation=operation,
                request_id=request_id,
            ) from err
        except urllib.error.URLError as err:
            if isinstance(err.reason, (socket.timeout, TimeoutError)):
                raise _error(
                    "deadline_exceeded",
                    "no answer from %s within %g s" % (self.base_url, self.timeout),
                    operation=operation,
                ) from err
            raise _error(
                "unavailable", "cannot reach memos at %s: %s" % (self.base_url, err.reason), operation=operation
            ) from err
        except OSError as err:  # a connection reset while reading
            raise _error(
                "unavailable", "reading the answer from %s: %s" % (self.base_url, err), status=status, operation=operation
            ) from err
        try:
            return json.loads(text)
        except ValueError:
            raise _error(
                "internal",
                "HTTP %d with a body that is not memos' JSON: %r" % (status, text[:200]),
                status=status,
                operation=operation,
                request_id=request_id,
            ) from None

    @staticmethod
    def _failure(operation: str, status: int, request_id: str, text: bytes) -> MemosError:
        try:
            detail = json.loads(text)["error"]
            kind, message = detail["kind"], detail["message"]
            if not isinstance(kind, str):
                raise TypeError(kind)
        except (ValueError, KeyError, TypeError):
            # Not memos' answer (a proxy's error page, a truncated body).
            kind = "unavailable" if status >= 500 else "invalid"
            message = "HTTP %d with a body that is not memos' JSON: %r" % (status, text[:200])
        return _error(kind, str(message), status=status, operation=operation, request_id=request_id)
