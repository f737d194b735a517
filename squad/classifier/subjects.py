"""Where an offline fact goes in memory.md, and what it is about. Pure, no I/O.

The section follows what kind of statement it is: a choice (``Decisions``), a rule the code
must follow (``Coding Rules``), a description of the stack, layout, ports or people (``Project
Context``), anything else (``Insights``).

The subject key names what a fact is *about*, so that a later fact about the same thing can
supersede it: "backend port", "search indexer owner", "state management", "node version",
"branch naming", "reply language". It is lower case, English where a small lexicon knows the
Korean word (백엔드 -> backend, 상태 관리 -> state management), so a Korean fact can supersede an
English one. None when no rule recognises the subject: a wrong key would supersede a fact that
is still true, a missing one only keeps two facts side by side.
"""

from __future__ import annotations

import re

__all__ = ["section_for", "subject_for"]

_I = re.IGNORECASE

_DECISION = re.compile(
    r"\b(?:we(?:'ve| have)? (?:decided|agreed|chose|settled|picked)|decided|decision|chose|chosen"
    r"|we(?:'ll| will| are going to|'re going to) (?:use|go with|switch|move|migrate|drop|adopt)"
    r"|(?:we're|we are) (?:going with|switching|moving|migrating|dropping|not going to)"
    r"|switched|moved (?:from|to)|replaced|in favou?r of|scrap|scratch that|final call|we won't"
    r"|no longer)\b|하기로|쓰기로|가기로|바꾸기로|옮기기로|않기로|안 하기로|결정|확정|정했",
    _I,
)
_RULE = re.compile(
    r"\b(?:always|never|must|mustn't|must not|have to|has to|need to|needs to|required|forbidden"
    r"|not allowed|convention|don't|do not)\b|규칙|컨벤션|반드시|절대|항상|꼭|금지"
    r"|야 ?(?:해|합|돼|됩)|하면 안|통일",
    _I,
)
_CONTEXT = re.compile(
    r"\b(?:ports?|localhost|runs? on|listens?|built with|written in|is (?:a|an) .{0,40}(?:app"
    r"|service|api|site|monolith|library)|uses?|stack|version|folder|directory|lives? (?:in|under"
    r"|at)|owns?|owner|maintains|lead|in charge|responsible|on call|deployed|hosted|url|staging"
    r"|production|is (?:at|on|in)|go(?:es)? (?:to|through)|loaded|read from|generated|managed"
    r"|reported|scraped|exposed|served|built from)\b|https?://|(?:[\w.-]+/)+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+"
    r"|\d+\.\d+|포트|버전|폴더|디렉터리|담당|맡|관리해|기반|(?:으로|로) (?:만들|되어|돼|개발|빌드"
    r"|관리|돌리|돌아|배포)|써요|쓰고|주소|도메인|에 있어요|아래에|접속",
)
_DATED = re.compile(
    r"\b(?:deadline|due|launch\w*|release\w*|code freeze|go(?:es)? live|demo|beta|sprint"
    r"|flak\w*|intermittent\w*)\b|\d{4}-\d\d-\d\d|마감|출시|오픈|데모|스프린트|불안정|자주 깨",
    _I,
)


def section_for(text: str) -> str:
    """The memory.md section a project fact belongs in."""
    if _DECISION.search(text):
        return "Decisions"
    if _DATED.search(text):  # deadlines, known flaky tests: worth knowing, not a rule
        return "Insights"
    if _RULE.search(text):
        return "Coding Rules"
    if _CONTEXT.search(text):
        return "Project Context"
    return "Insights"


_KO_WORDS = {
    "백엔드": "backend",
    "프론트엔드": "frontend",
    "프론트": "frontend",
    "웹": "web",
    "앱": "app",
    "어드민": "admin",
    "관리자 페이지": "admin",
    "api 서버": "api",
    "레디스": "redis",
    "카프카": "kafka",
    "데이터베이스": "database",
    "db": "database",
    "인프라": "infra",
    "데이터 파이프라인": "data pipeline",
    "검색": "search",
    "결제": "payments",
    "알림": "notifications",
    "인증": "auth",
}
_SERVICE = re.compile(
    r"\b(?P<name>backend|frontend|api|web|admin(?: panel| ui)?|db|database|postgres|mysql|redis"
    r"|kafka|grafana|websocket server|dev server|gateway|mail service|keycloak|mongodb|worker"
    r"|dashboard)\b|(?P<ko>백엔드|프론트엔드|프론트|웹|어드민|관리자 페이지|API 서버|레디스|카프카"
    r"|데이터베이스|DB)",
    _I,
)
_COMPONENT = re.compile(
    r"^(?:the|our|this) (?P<name>frontend|backend|api|mobile app|ios (?:app|client)|android app"
    r"|website|web app|infra(?:structure)?|data pipeline|worker|admin(?: panel)?|dashboard"
    r"|mobile client)(?: here| for this \w+| of this \w+)? (?:is|uses|runs|was)\b"
    r"|^(?:우리 (?:서비스 |프로젝트 )?)?(?P<ko>백엔드|프론트엔드|프론트|앱|인프라|데이터 파이프라인"
    r"|어드민|웹)(?:는|은) ",
    _I,
)
_PORT = re.compile(r"\bports?\b|localhost:\d|:\d{4,5}\b|\b(?:on|at) \d{4,5}\b|\d{4,5} ?번|포트", _I)
_OWNER_EN = re.compile(
    r"\b(?:owns|maintains|wrote and maintains|leads|is responsible for|is in charge of"
    r"|is the (?:tech )?lead (?:for|on)|is the point of contact for|is on call for)"
    r" (?:the |all |anything (?:in|touching) the )?(?P<what>[\w -]+?)"
    r"(?: in| on| for| this|[,.;:]|$)"
    r"|\b(?:the )?(?P<what2>[\w -]+?) (?:is|are) (?:owned|maintained|led) by\b"
    r"|\b(?:the )?(?P<what3>[\w -]+?) (?:is|are) assigned to\b",
    _I,
)
_OWNER_KO = re.compile(
    r"(?P<what>[\w ]{1,30}?)(?: 쪽| 관련 \w+)?(?:은|는) \w{1,4} ?님(?:이|한테|께) ?"
    r"(?:\w+ )?(?:담당|맡|관리|승인|물어|할당)"
)
_TOPICS: tuple[tuple[str, str, str | None], ...] = (
    # (key, words naming the topic, tech names that imply it in a decision)
    ("state management", r"state management|상태 ?관리", r"redux|zustand|mobx|recoil|jotai|pinia"),
    ("test runner", r"test runner|테스트 러너", r"jest|vitest|mocha|pytest"),
    ("package manager", r"package manager|패키지 매니저", r"pnpm|yarn|poetry|\bnpm\b|\buv\b"),
    ("orm", r"\borm\b", r"prisma|typeorm|sqlalchemy|sequelize|hibernate"),
    ("message queue", r"\bqueue\b|\bbroker\b|큐", r"rabbitmq|\bsqs\b|kafka|celery|dramatiq"),
    ("auth", r"\bauthentication\b|\bauth\b(?! module| service)|인증", r"jwt|oauth|session"),
    ("hosting", r"\bhosting\b|\bhosted on\b|호스팅", r"heroku|fly\.io|vercel|netlify|amplify"),
    ("reverse proxy", r"reverse proxy|리버스 프록시", r"nginx|caddy|traefik"),
    ("styling", r"\bstyling\b|스타일링", r"\bcss\b|tailwind|styled-components|sass"),
    ("api style", r"api style", r"graphql|\brest\b|grpc"),
    ("request validation", r"validation|유효성", r"\bzod\b|pydantic|joi"),
    ("api docs", r"api (?:docs|documentation)|api 문서", r"swagger|redoc"),
    ("date format", r"iso ?8601|date format|날짜 형식|날짜는", None),
    ("timezone", r"timezone|time zone|타임존|시간대", None),
    ("column naming", r"column names?|컬럼명|컬럼 이름", None),
    ("default branch", r"(?:main|default|메인|기본) ?(?:branch|브랜치)", None),
    (
        "branch naming",
        r"branch(?:es)? (?:name|naming)|branch names|브랜치 ?(?:이름|명)|브랜치는",
        None,
    ),
    ("commit messages", r"commit messages?|커밋 메시지", None),
    ("indentation", r"indentation|들여쓰기|탭 너비|\d[- ]space", None),
    ("line length", r"line length|\d+ columns\b|줄 길이", None),
    ("pagination", r"pagination|페이지네이션", None),
    ("api versioning", r"/v\d+\b|api version", None),
    ("migrations", r"\bmigrations\b|마이그레이션", None),
    ("cache", r"\bcach(?:e|ing)\b|캐시", None),
    ("feature flags", r"feature flags?|피처 ?플래그", None),
    ("error tracking", r"sentry|bugsnag|rollbar|error (?:tracking|reporting)|에러는", None),
    ("logging", r"\blogs?\b|\blogging\b|\blogger\b|로그|로거", None),
    ("metrics", r"\bmetrics\b|prometheus|메트릭|모니터링", None),
    ("code review", r"\bapprovals?\b|\breviewers?\b|리뷰어", None),
    ("test setup", r"before (?:running )?the tests|tests? need|(?:돌리|실행하)기 전", None),
    ("database", r"\bdatabase\b|데이터베이스|\bdb\b", r"postgres|mysql|mongodb|sqlite"),
)
_PERSONAL: tuple[tuple[str, str], ...] = (
    ("name", r"\bmy name\b|\bcall me\b|제 이름|라고 불러"),
    ("timezone", r"timezone|time zone|\butc ?[+-]|\bkst\b|\bpst\b|시간대|시차|시간 기준"),
    (
        "reply language",
        r"(?:reply|answer|respond|speak|talk|write)\w* (?:to me )?in (?:english"
        r"|korean|\w+ish)|한국어로|영어로",
    ),
    (
        "reply format",
        r"bullet points|tables?|emojis?|exclamation|이모지|이모티콘|글머리표|목록으로",
    ),
    (
        "reply length",
        r"concise|short|brief|preambles?|짧|장황|핵심만|길게|자세히|\b(?:long|lengthy|detailed"
        r"|verbose|thorough)\b (?:\w+ )?(?:answers?|replies|responses|explanations?)",
    ),
    ("review style", r"\breviews?\b.*\b(?:direct|blunt|problems)|리뷰.*(?:직설|문제점)"),
    ("commit messages", r"commit messages?|커밋 메시지"),
    ("editor", r"\beditor\b|\bvim\b|vs ?code|intellij|emacs|에디터"),
    ("indentation", r"indentation|들여쓰기|\btabs\b|스페이스 ?\d칸"),
    (
        "work schedule",
        r"\bmornings?\b|\bafternoons?\b|\bevenings?\b|\bweekends?\b|days? off"
        r"|\bnight owl\b|오전|오후|주말|재택|저녁형|아침형|\d+시",
    ),
)
_EVENT = re.compile(
    r"\b(?P<e>release|launch|beta|demo|code freeze|deadline|go-live|sprint)\b"
    r"|(?P<k>마감|출시|오픈|데모|배포|릴리스|스프린트)",
    _I,
)
_KO_EVENTS = {"마감": "deadline", "출시": "launch", "오픈": "launch", "데모": "demo"}
_KO_EVENTS |= {"배포": "deployment", "릴리스": "release", "스프린트": "sprint"}
_VERSION = re.compile(
    r"\b(?P<tech>python|node|java|go|ruby|php|rust|react|vue|angular|django|rails|postgres"
    r"|mysql|kubernetes|k8s|ios|android|kotlin|typescript|next\.js|flutter|laravel|elixir"
    r"|spring boot)\s?v?\d+(?:\.\d+)*\b|(?P<ko>\w+) 버전",
    _I,
)
_TEST = re.compile(r"\btest_[A-Za-z0-9_]+")
_ENV_VAR = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
_DATE = re.compile(r"\d{4}-\d\d-\d\d|\b(?:tomorrow|next \w+|\w+day)\b|내일|모레|요일", _I)
_URL_KIND = re.compile(r"\b(?P<k>staging|production|prod|preview)\b|(?P<ko>스테이징|운영)", _I)


def _clean(phrase: str) -> str:
    phrase = re.sub(r"^(?:the|our|this|all|any|a|an)\s+", "", phrase.strip(), flags=_I)
    return re.sub(r"\s+", " ", phrase).lower()


def _ko(word: str) -> str:
    return _KO_WORDS.get(word.lower(), word.lower())


def _korean_topic(phrase: str) -> str:
    """The last one or two words of a Korean topic, after any time or place phrase ("...에")."""
    words = phrase.split()
    for i in range(len(words) - 1, -1, -1):
        if words[i].endswith(("에", "에서", "때")):
            words = words[i + 1 :]
            break
    return _ko(" ".join(words[-2:]))


def _service(text: str) -> str | None:
    m = _SERVICE.search(text)
    if m is None:
        return None
    return _ko(m["ko"]) if m["ko"] else _ko(m["name"])


def _project_subject(text: str) -> str | None:
    if _PORT.search(text):
        service = _service(text)
        return f"{service} port" if service else "port"
    if m := _OWNER_EN.search(text):
        return _clean(next(w for w in (m["what"], m["what2"], m["what3"]) if w)) + " owner"
    if m := _OWNER_KO.search(text):
        return _korean_topic(m["what"]) + " owner"
    if m := _TEST.search(text):
        return m[0]
    if (m := _URL_KIND.search(text)) and re.search(r"https?://|\w\.\w{2,4}\b", text):
        kind = (m["k"] or {"스테이징": "staging", "운영": "production"}[m["ko"]]).lower()
        return ("production" if kind == "prod" else kind) + " url"
    if m := _ENV_VAR.search(text):
        return m[0].lower() + " env var"
    decided = _DECISION.search(text) is not None
    for key, words, techs in _TOPICS:
        if re.search(words, text, _I) or (decided and techs and re.search(techs, text, _I)):
            return key
    if m := _COMPONENT.search(text.strip()):
        return _ko(m["name"] or m["ko"]) + " stack"
    if m := _VERSION.search(text):
        return _ko(m["tech"] or m["ko"]) + " version"
    if (m := _EVENT.search(text)) and _DATE.search(text):
        event = m["e"].lower() if m["e"] else _KO_EVENTS[m["k"]]
        return event if event in ("deadline", "code freeze") else f"{event} date"
    return None


def subject_for(text: str, scope: str) -> str | None:
    """A short normalised key for what the fact is about, or None when none is recognised."""
    if scope == "project":
        return _project_subject(text)
    for key, pattern in _PERSONAL:
        if re.search(pattern, text, _I):
            return key
    return None
