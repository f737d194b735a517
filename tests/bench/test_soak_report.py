"""How the soak judges its samples: slopes, plateaus and run accounting."""

from __future__ import annotations

from bench.soak_report import account, slope_per_hour, tiny_for, trend


def test_slope_is_per_hour_whatever_the_sampling() -> None:
    points = [(t, 100.0 + t / 60) for t in range(0, 600, 5)]  # +1 a minute

    assert abs(slope_per_hour(points) - 60.0) < 1e-9


def test_a_metric_that_stops_growing_halfway_plateaued() -> None:
    rising = [(float(t), float(min(t, 1800)) * 1000) for t in range(0, 3601, 10)]
    steady = [(float(t), 5.0e6 + 1000 * t) for t in range(0, 3601, 10)]

    assert trend("rows.runs", rising)["plateaued"] is True
    assert trend("rows.runs", steady)["plateaued"] is False
    assert trend("rows.runs", steady)["second_half_slope_per_h"] > 0


def test_two_tiny_slopes_count_as_a_plateau_even_when_the_second_is_larger() -> None:
    mib = 1024 * 1024

    def rss(t: float) -> float:  # +0.1 MiB/h, then +1 MiB/h from the middle on
        return 100 * mib + (0.1 * min(t, 1800) + 1.0 * max(0, t - 1800)) / 3600 * mib

    points = [(float(t), rss(t)) for t in range(0, 3601, 10)]

    row = trend("rss_bytes", points)

    assert row["second_half_slope_per_h"] > row["first_half_slope_per_h"]
    assert row["tiny_per_h"] == tiny_for("rss_bytes") == 2 * mib
    assert row["plateaued"] is True


def _run(squad: str, status: str = "succeeded", trigger: str = "schedule") -> dict[str, str]:
    return {"squad": squad, "trigger": trigger, "status": status}


def test_accounting_finds_a_lost_a_duplicated_and_a_running_run() -> None:
    events = [
        {"event": "run_start", "squad": "a", "trigger": "schedule"},
        {"event": "run_start", "squad": "a", "trigger": "schedule"},  # lost: one run only
        {"event": "run_start", "squad": "b", "trigger": "schedule"},  # b got two runs
        {"event": "run_start", "squad": "c", "trigger": "schedule"},
        {"event": "run_end", "squad": "c", "run_id": "c1", "status": "succeeded"},
        {"event": "run_end", "squad": "c", "run_id": "c1", "status": "succeeded"},  # twice
        {"event": "run_start", "squad": "d", "trigger": "schedule"},
        {"event": "run_skipped", "squad": "d", "trigger": "schedule"},  # not lost
        {"event": "run_coalesced", "squad": "d", "trigger": "schedule"},
    ]
    runs = {
        "a1": _run("a"),
        "b1": _run("b"),
        "b2": _run("b", "running"),
        "c1": _run("c"),
        "x1": _run("a", trigger="manual"),  # a person's run is not the schedule's
    }

    counted = account(
        runs=runs, events=events, intervals_s={"a": 60, "b": 60, "c": 60, "d": 60}, window_s=130
    )

    assert counted["expected"] == 8
    assert counted["fired"] == 6
    assert counted["started"] == 4
    assert counted["finished"] == 3
    assert counted["lost"] == 1
    assert counted["duplicated"] == 2
    assert counted["left_running"] == 1
    assert counted["skipped"] == 1
