"""memos' Python client: Client has a method per operation of the HTTP API.

Standard library only (urllib), Python 3.9 or later. Errors are MemosError
subclasses named after the API's error kind (NotFoundError, InvalidError,
ForbiddenError, ...), each with ``kind`` and ``status``. See docs/clients.md.
"""

from ._generated import *  # noqa: F401,F403
from ._generated import __all__ as _generated_all
from ._runtime import DEFAULT_BASE_URL, DEFAULT_TIMEOUT, ERROR_CLASSES, BaseClient, MemosError

__all__ = sorted(
    set(_generated_all) | {"DEFAULT_BASE_URL", "DEFAULT_TIMEOUT", "ERROR_CLASSES", "BaseClient", "MemosError"}
)
