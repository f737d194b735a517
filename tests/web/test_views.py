"""The pure parts of the pages: tokens and cost per task from a run log, charts, markup."""

from __future__ import annotations

from squad.web.charts import bar_chart
from squad.web.render import markdown, marked
from squad.web.runs import task_costs


def test_model_calls_count_for_the_task_whose_node_was_open_or_that_they_name() -> None:
    events = [
        {"event": "model_call", "agent": "lead", "prompt_tokens": 5, "cost_usd": 0.5},
        {"event": "node_start", "node": "draft"},
        {"event": "model_call", "prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.25},
        {"event": "model_call", "prompt_tokens": 1, "task": "review"},
        {"event": "node_end", "node": "draft"},
        {"event": "model_call", "prompt_tokens": "x", "completion_tokens": True},
    ]
    costs = task_costs(events)
    assert costs["draft"] == {
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "cost_usd": 0.25,
        "calls": 1,
    }
    assert costs["review"]["prompt_tokens"] == 1
    assert costs["lead"]["cost_usd"] == 0.5
    assert costs["run"] == {"prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0, "calls": 1}


def test_a_chart_has_a_title_value_ticks_and_labels_that_do_not_overlap_all_escaped() -> None:
    import xml.etree.ElementTree as ET

    svg = bar_chart(
        [("<b>", "<b> full", 1.0), ("day 2", "day 2", 4.0), ("day 3", "day 3", 0.0)],
        title="Tokens & <runs>",
        value_text=lambda v: f"{v:g} tokens",
        tick_text=lambda v, digits: f"{v:.{digits}f}",
        height=100,
    )
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    bars = root.findall("s:rect", ns)
    assert [b.get("height") for b in bars] == ["25.0", "100.0", "0.0"]  # top tick is 4
    assert bars[0].find("s:title", ns).text == "<b> full: 1 tokens"  # escaped, read back
    assert root.find("s:title", ns).text == "Tokens & <runs>"
    labels = [t.text for t in root.findall("s:text", ns)]
    assert labels[0] == "Tokens & <runs>"
    # value ticks, then bar labels: every other one, as two 28-pixel bars are narrower
    # than a label
    assert labels[1:] == ["0", "1", "2", "3", "4", "<b>", "day 3"]


def test_markdown_from_a_workspace_never_carries_html_or_script_links() -> None:
    html = str(markdown("# Title\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))"))
    assert "<h1>Title</h1>" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html


def test_search_marks_are_the_only_markup_in_a_matched_line() -> None:
    assert str(marked("a <b> needle", [(6, 12)])) == "a &lt;b&gt; <mark>needle</mark>"


KEY = "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90"


def test_a_credential_in_shown_text_is_redacted_and_counted() -> None:
    from squad.web.redaction import redacted_text

    shown, count = redacted_text(f"export OPENAI_API_KEY={KEY}\nplain line\n")
    assert KEY not in shown and "[REDACTED:" in shown and count == 1
    assert redacted_text("nothing here") == ("nothing here", 0)


def test_search_lines_are_redacted_and_a_match_inside_a_credential_is_dropped() -> None:
    from squad.text.grep import compile_query
    from squad.web.redaction import redacted_hits

    pattern = compile_query("key", regex=False, case_sensitive=False)
    matches = [
        {
            "line_number": 1,
            "line": f"api key = {KEY}",
            "spans": [[4, 7]],
            "before": [],
            "after": [{"line_number": 2, "line": f"again {KEY}"}],
        },
        {
            "line_number": 5,
            "line": "no secret key here",
            "spans": [[10, 13]],
            "before": [],
            "after": [],
        },
    ]
    kept, hidden = redacted_hits(matches, pattern, where="notes.md")
    assert [m["line_number"] for m in kept] == [1, 5] and hidden == 2
    assert KEY not in str(kept) and kept[0]["spans"][0] == [4, 7]
    inside = compile_query("Ab12Cd34", regex=False, case_sensitive=True)
    assert redacted_hits(matches[:1], inside, where="notes.md")[0] == []


def test_a_model_key_shows_only_whether_its_variable_is_set() -> None:
    from squad.web.redaction import key_state

    assert key_state("OPENAI_API_KEY", {"OPENAI_API_KEY": KEY}) == "set"
    assert key_state("OPENAI_API_KEY", {}) == "not set"
    assert key_state(None, {}) is None
