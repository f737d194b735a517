"""The offline model as a litellm custom provider.

:mod:`squad.model.seam` registers :func:`handler_class` under ``litellm.custom_provider_map``;
litellm then calls its ``completion`` (or ``streaming``) with the OpenAI-format messages and
options, exactly as it would call a real provider. This module never imports litellm: the seam
hands the module in.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from squad.model import offline

__all__ = ["handler_class"]


def handler_class(litellm: Any) -> type:
    """A ``litellm.CustomLLM`` subclass answering with the offline model (``litellm`` passed in)."""

    class OfflineLLM(litellm.CustomLLM):  # type: ignore[misc]
        """litellm's view of :mod:`squad.model.offline`: answers computed, never fetched."""

        def completion(self, *args: Any, **kwargs: Any) -> Any:
            reply, prompt, completion = _offline_answer(kwargs)
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                }
                for c in reply.tool_calls
            ]
            message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
            if calls:
                message["tool_calls"] = calls
            return litellm.ModelResponse(
                id=f"chatcmpl-offline-{_digest(kwargs.get('messages'))}",
                created=0,
                model=offline.MODEL_NAME,
                choices=[
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if calls else "stop",
                    }
                ],
                usage={
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
            )

        def streaming(self, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
            reply, prompt, completion = _offline_answer(kwargs)
            for piece in re.findall(r"\s*\S+\s*", reply.content):
                yield {
                    "text": piece,
                    "is_finished": False,
                    "finish_reason": "",
                    "usage": None,
                    "index": 0,
                    "tool_use": None,
                }
            for i, call in enumerate(reply.tool_calls):
                tool_use = {
                    "id": call.id,
                    "type": "function",
                    "index": i,
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                yield {
                    "text": "",
                    "is_finished": False,
                    "finish_reason": "",
                    "usage": None,
                    "index": 0,
                    "tool_use": tool_use,
                }
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
            yield {
                "text": "",
                "is_finished": True,
                "usage": usage,
                "index": 0,
                "tool_use": None,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }

    return OfflineLLM


def _offline_answer(kwargs: Mapping[str, Any]) -> tuple[offline.OfflineAnswer, int, int]:
    messages = list(kwargs.get("messages") or [])
    options: Mapping[str, Any] = kwargs.get("optional_params") or {}
    reply = offline.answer(messages, options.get("tools") or (), options.get("response_format"))
    prompt, completion = offline.count_usage(messages, reply)
    return reply, prompt, completion


def _digest(value: Any) -> str:
    data = json.dumps(value, sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:16]
