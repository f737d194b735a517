"""The model's chatter told apart from what it states: each kind, each role, other languages.

The offline model's replies are produced by the offline model itself (never copied here), so a
change to its phrasing is a change these tests see.
"""

from __future__ import annotations

from squad import prompts
from squad.model.offline import answer
from squad.model.types import Message, ToolCall, ToolSpec
from squad.text.chatter import (
    Said,
    chatter_kind,
    is_chatter_message,
    pieces,
    restates,
    substance,
)

FILLER = "Done. The work is written up below.\n- point one\n- point two"


def kinds(text: str, role: str = "assistant", context: tuple[str, ...] = ()) -> list[str | None]:
    return [p.kind for p in pieces(text, role=role, context=context)]


def test_the_offline_models_chat_replies_are_its_fixed_phrases_whole() -> None:
    said = "The docs site is built with MkDocs and deployed from the gh-pages branch."
    for user in (said, "How do I add a page to the docs?", ""):
        reply = answer([Message.user(user)]).content
        assert "offline model" in reply
        assert set(kinds(reply)) == {"offline_model"}, reply
        assert is_chatter_message(reply, "assistant")
        assert substance(reply) == ""


def test_every_line_of_the_offline_models_phrase_file_is_known() -> None:
    sample = dict.fromkeys(
        ("quote", "topics", "terms", "missing", "tool", "result", "title", "description"),
        "Postgres 16 on port 5433",
    ) | {"steps": "1. Step", "expected": ""}
    templates = prompts.offline_phrases()
    texts = [
        templates["chat"]["statement"],
        templates["chat"]["question"],
        templates["review"]["approved"],
        templates["review"]["changes"],
        templates["review"]["empty"],
        templates["work_result_empty"],
    ]
    for template in texts:
        rendered = template.format(**sample)
        assert set(kinds(rendered)) == {"offline_model"}, rendered


def test_the_offline_models_deliverable_restates_its_task_and_nothing_more() -> None:
    task = "Task: Outline the deployment guide for the billing service."
    reply = answer([Message.user(task)]).content
    assert reply.startswith("# Outline the deployment guide")
    assert is_chatter_message(reply, "assistant", context=(task,))
    assert substance(reply, context=(task,)) == ""


def test_a_message_the_offline_model_signed_is_chatter_without_the_prompt_it_answered() -> None:
    task = "Task: Write the morning digest of the billing alerts for the ops channel."
    deliverable = answer([Message.user(task)]).content
    reply = answer([Message.user("We deploy the billing service on Fridays.")]).content
    # recall has the message alone, not the prompt it restated
    assert is_chatter_message(deliverable, "assistant")
    assert is_chatter_message(reply, "assistant")
    assert not is_chatter_message(deliverable, "user")  # a person quoting it says something
    assert not is_chatter_message(deliverable.replace("offline model", "model"), "assistant")


def test_the_offline_models_tool_result_reply_is_a_receipt() -> None:
    tools = [ToolSpec("memory_append", "Append a line.", {"type": "object", "properties": {}})]
    call = ToolCall("call_1", "memory_append", {"section": "Insights", "text": "x"})
    messages = [
        Message.user("Remember that deploys happen on Fridays."),
        Message.assistant("", (call,)),
        Message.tool("call_1", "saved to agents/a/memory.md (Insights); file is now 212 bytes"),
    ]
    reply = answer(messages, tools).content
    assert kinds(reply) == ["tool_receipt", "offline_model"]
    assert is_chatter_message(reply, "assistant")


def test_a_filler_answer_is_all_chatter() -> None:
    assert kinds(FILLER) == ["boilerplate", "boilerplate", "boilerplate"]  # line by line
    assert substance(FILLER) == ""
    assert is_chatter_message(FILLER, "assistant")


def test_thanks_and_acknowledgements_are_chatter_whoever_says_them() -> None:
    assert chatter_kind("Thanks!", role="user") == "acknowledgement"
    assert chatter_kind("Got it, thanks a lot!") == "acknowledgement"
    assert chatter_kind("You're welcome!") == "acknowledgement"
    assert chatter_kind("네, 감사합니다!") == "acknowledgement"
    assert chatter_kind("알겠습니다.", role="user") == "acknowledgement"
    assert chatter_kind("OK, port 8080 then.") is None  # a number is news


def test_tool_receipts_are_chatter() -> None:
    for receipt in (
        'memory_append answered: "saved to agents/writer/memory.md (Insights)"',
        "saved to agents/writer/memory.md (Insights); file is now 1,234 bytes",
        "I've saved that to memory.",
        "Memory updated.",
    ):
        assert chatter_kind(receipt) == "tool_receipt", receipt
    assert chatter_kind("I've noted in memory that the API listens on 8080.") is None


def test_refusals_and_disclaimers_are_chatter_in_a_reply_only() -> None:
    assert chatter_kind("I'm sorry, but I can't help with that.") == "refusal"
    assert chatter_kind("As an AI language model, I have no opinions on editors.") == "refusal"
    assert chatter_kind("I don't have access to the internet.") == "refusal"
    assert chatter_kind("죄송하지만 그 요청은 도와드릴 수 없습니다.") == "refusal"
    # A person saying so states something about themselves, or a status: not a model's refusal.
    assert chatter_kind("I can't access the prod database from home.", role="user") is None


def test_talk_about_the_answer_is_boilerplate_from_a_model_and_a_preference_from_a_person() -> None:
    for line in (
        "Hope this helps!",
        "Let me know if you need anything else.",
        "Here's the summary:",
        "The work is written up below.",
    ):
        assert chatter_kind(line) == "boilerplate", line
    assert chatter_kind("Answer first, details below.", role="user") is None
    assert chatter_kind("Answer first, details below.") == "boilerplate"


def test_a_restatement_of_the_user_is_chatter_and_news_is_not() -> None:
    user = ("The staging database runs Postgres 16 on port 5433.",)
    noted = "Noted: the staging database runs Postgres 16 on port 5433."
    assert chatter_kind(noted, context=user) == "restatement"
    assert chatter_kind(noted) is None  # without the user's words there is nothing to restate
    changed = "The staging database runs Postgres 16 on port 5434."
    assert chatter_kind(changed, context=user) is None  # a new number is news
    added = "The staging database runs Postgres 16 on port 5433 behind PgBouncer in Frankfurt."
    assert chatter_kind(added, context=user) is None
    said = Said()  # the same context, grown message by message as a batch is read
    said.add("Hi there.")
    said.add(user[0])
    assert chatter_kind(noted, context=said) == "restatement"
    assert restates(noted, user[0])  # one text is one text, not a sequence of letters


def test_answering_a_question_with_its_own_words_is_news() -> None:
    asked = ("Which port does the API listen on, 8080 or 9090?",)
    assert chatter_kind("Yes, the API listens on 8080.", context=asked) is None
    assert not restates("The API listens on 8080.", "")


def test_substance_keeps_the_fact_between_the_chatter() -> None:
    reply = "Got it! The staging database runs Postgres 16.\nLet me know if you need anything else."
    assert substance(reply) == "The staging database runs Postgres 16."
    assert not is_chatter_message(reply, "assistant")


def test_korean_content_is_never_chatter_for_being_korean() -> None:
    fact = "이 프로젝트는 배포를 금요일에 해요."
    assert chatter_kind(fact) is None
    reply = "알겠습니다. 판례 DB 스키마 변경은 김 변호사님 승인 후에만 머지되도록 할게요."
    assert substance(reply) == "판례 DB 스키마 변경은 김 변호사님 승인 후에만 머지되도록 할게요."
    assert not is_chatter_message("배포 주기는 격주 화요일입니다.", "assistant")


def test_code_blocks_are_substance_and_are_kept_whole() -> None:
    reply = "Here is the fix:\n```python\nx = 1\n\ny = 2\n```\nThanks!"
    assert substance(reply) == "Here is the fix:\n```python\nx = 1\n\ny = 2\n```"


def test_tool_and_system_messages_are_chatter_whole() -> None:
    assert is_chatter_message("saved to agents/a/memory.md (Insights)", "tool")
    assert is_chatter_message("You are the writer of the docs squad.", "system")
    assert not is_chatter_message("", "assistant")
