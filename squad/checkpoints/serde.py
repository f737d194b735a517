"""The checkpointers' serde, with the credentials of a failed step's error redacted.

When a node raises, LangGraph writes the exception as a pending write of its ``__error__``
channel, and its serde keeps an exception as its ``repr``: a provider's message, a path or
anything else the error quoted. Squad's own values are redacted where they are made (the
executor, the model seam); an exception is the one value nobody made on purpose, so this serde
redacts it on its way in. It is stored as the very string the default serde would store, so it
reads back the same. Everything else passes through untouched (a checkpoint costs nothing
more).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ["RedactingSerde"]


class RedactingSerde:
    """``inner`` (the saver's own serde), with exceptions stored as their redacted repr."""

    def __init__(self, inner: SerializerProtocol) -> None:
        self.inner = inner

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        if isinstance(obj, BaseException):
            from squad.text.secrets import redact

            obj = redact(repr(obj))[0]
        return self.inner.dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.inner.loads_typed(data)
