"""What the pages say from data in both languages, as pure functions: a duration keeps the
same precision in Korean as in English, a schedule is worded from its fields, and every
reason the daemon gives for being down reads in Korean on a Korean page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from squad.daemon.lock import LockState
from squad.daemon.status import daemon_status
from squad.daemon.triggers import describe_schedule
from squad.spec.models import Schedule
from squad.web.i18n import Formats
from squad.web.phrases import daemon_reason, schedule_text

KOREAN, ENGLISH = Formats("ko"), Formats("en")
NOW = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)


def test_a_duration_has_the_same_digits_in_korean_and_english_at_every_threshold() -> None:
    """Under a second two significant digits (Babel's ``1초`` rounded all three to one
    second), under ten seconds one decimal, then whole seconds, then the two largest units;
    a zero second unit is left out, a negative or missing time never shows a minus."""
    cases = {
        0.0: ("0 s", "0초"),
        0.0804: ("0.08 s", "0.08초"),
        0.153: ("0.15 s", "0.15초"),
        0.99: ("0.99 s", "0.99초"),
        0.0027: ("0.003 s", "0.003초"),
        0.9996: ("1 s", "1초"),
        4.25: ("4.2 s", "4.2초"),
        9.96: ("10 s", "10초"),
        12.3: ("12 s", "12초"),
        59.6: ("1 min", "1분"),
        180: ("3 min", "3분"),
        185: ("3 min 5 s", "3분 5초"),
        3599.6: ("1 h", "1시간"),
        7800: ("2 h 10 min", "2시간 10분"),
        86_399: ("1 d", "1일"),
        273_600: ("3 d 4 h", "3일 4시간"),
        -2.0: ("0 s", "0초"),
    }
    found = {seconds: (ENGLISH.duration(seconds), KOREAN.duration(seconds)) for seconds in cases}
    assert found == cases
    assert ENGLISH.duration(None) == KOREAN.duration(None) == "-"


def test_an_age_and_an_uptime_read_as_durations_in_either_language() -> None:
    from squad.web.render import environment

    ago = '{{ _("%(time)s ago", time=age|int|duration) }}'
    said = {
        lang: [environment(lang).from_string(ago).render(age=age) for age in (0.4, 1203, 7300)]
        for lang in ("en", "ko")
    }
    assert said == {
        "en": ["0 s ago", "20 min 3 s ago", "2 h 2 min ago"],
        "ko": ["0초 전", "20분 3초 전", "2시간 2분 전"],
    }


def test_a_schedule_is_worded_from_its_fields_and_keeps_a_cron_expression_as_written() -> None:
    words = {"en": ENGLISH.words(), "ko": KOREAN.words()}
    schedules = {
        "interval": Schedule(interval="2h", run_on_start=True),
        "mixed": Schedule(interval="1d2h30m"),
        "seconds": Schedule(interval="45s"),
        "cron": Schedule(cron="0 9 * * 1-5", run_on_start=True),
        "zoned": Schedule(cron="@daily", timezone="Asia/Seoul"),
        "start only": Schedule(run_on_start=True),
        "on demand": Schedule(),
    }
    said = {
        name: {lang: schedule_text(s.model_dump(mode="json"), w) for lang, w in words.items()}
        for name, s in schedules.items()
    }
    assert said == {
        "interval": {"en": "every 2 h, on start", "ko": "2시간마다, 시작 시 실행"},
        "mixed": {"en": "every 1 d 2 h 30 min", "ko": "1일 2시간 30분마다"},
        "seconds": {"en": "every 45 s", "ko": "45초마다"},
        "cron": {
            "en": "cron '0 9 * * 1-5' (UTC), on start",
            "ko": "cron '0 9 * * 1-5' (UTC 기준), 시작 시 실행",
        },
        "zoned": {"en": "cron '@daily' (Asia/Seoul)", "ko": "cron '@daily' (Asia/Seoul 기준)"},
        "start only": {"en": "on start", "ko": "시작 시 실행"},
        "on demand": {"en": "on demand", "ko": "요청 시에만"},
    }
    # the CLI and the API keep their own English line, which this does not change
    assert describe_schedule(schedules["interval"]) == "every 2h, on start"


@dataclass(frozen=True)
class _Beat:
    pid: int
    host: str
    started_at: datetime
    beat_at: datetime
    stopped_at: datetime | None = None


def test_every_reason_the_daemon_gives_for_being_down_reads_in_korean() -> None:
    """Each branch of :func:`daemon_status`, so that a reason reworded there without its
    page wording fails here rather than showing English on a Korean page."""
    started = NOW - timedelta(hours=1)
    states = [
        daemon_status(now=NOW, lock=LockState(False, None), heartbeat=None),
        daemon_status(now=NOW, lock=LockState(False, 41), heartbeat=None, alive=lambda _: False),
        daemon_status(now=NOW, lock=LockState(True, 41), heartbeat=None, alive=lambda _: False),
        daemon_status(now=NOW, lock=LockState(True, 41), heartbeat=None, alive=lambda _: True),
        daemon_status(
            now=NOW,
            lock=LockState(True, 41),
            heartbeat=_Beat(41, "vm", started, NOW, stopped_at=NOW),
            alive=lambda _: True,
        ),
        daemon_status(
            now=NOW,
            lock=LockState(True, 41),
            heartbeat=_Beat(41, "vm", started, NOW - timedelta(seconds=95)),
            alive=lambda _: True,
        ),
    ]
    reasons = [s.reason for s in states]
    assert all(reasons) and len(set(reasons)) == len(reasons)
    korean = [daemon_reason(r, KOREAN.words()) for r in reasons]
    assert korean == [
        "실행 중이 아님",
        "실행 중이 아님 (pid 파일의 pid 41 프로세스가 없음)",
        "pid 41 프로세스가 없음",
        "시작하는 중 (아직 하트비트 없음)",
        "중지하는 중",
        "마지막 하트비트가 1분 35초 전: 데몬이 멈췄거나 데이터베이스에 연결할 수 없음",
    ]
    assert [daemon_reason(r, ENGLISH.words()) for r in reasons][:5] == reasons[:5]
    assert daemon_reason("a reason from a newer daemon", KOREAN.words()) == (
        "a reason from a newer daemon"
    )
