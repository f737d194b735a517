"""Cues and features for the offline fact classifier, English and Korean. Pure, no I/O.

A message is described by two kinds of features. *Cues* are hand-written patterns for how people
mark what they say: deixis to the project ("this repo", "our API", "이 레포", "여기서는"), the
speaker's own preferences, identity and habits ("I prefer", "my name is", "저는 ... 선호해요"),
scope beyond the project ("in every repo", "어느 프로젝트든"), lessons ("rule of thumb", "경험상"),
decisions ("we decided", "하기로 했어요"), rules ("must", "반드시"), concrete project details
(ports, paths, versions, env var names, URLs, owners, dates), corrections ("actually, no — it's
8443 now", "정정할게요"), preferences stated as complaints ("another wall of text", "매번 ... 빼
주셔도 돼요"), and the speech acts that state no fact (questions, one-off requests, status
updates, debugging stories, greetings, thanks, suggestions). In a message of several sentences a
speech act that holds in only some of them is its own feature (``@part_question``), so a greeting
or a closing question does not drown the sentence that states the fact. A few cue
*pairs* carry meaning neither cue has alone (a question that names the project's version, a
request that says "always"). *Lexical* features (words, word pairs, Korean endings and character
bigrams, number shapes) let the trained weights pick up phrasing the cues miss; tech names are
folded into one ``<tech>`` token (only names that are not also everyday words: not "go",
"rest", "code") so that weights learn how things are said, not which stack.

Cues are the part meant to generalise; they were written from how people talk, not from any
evaluation set.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from itertools import combinations

from squad.text.secrets import contains_secret, is_password_manager, is_public_data

__all__ = ["CUES", "cues", "features", "has_secret", "is_korean"]

_I = re.IGNORECASE

_PROJECT_NOUN = (
    r"(?:repo|repository|project|codebase|code base|app|application|service|monorepo|api|backend"
    r"|frontend|stack|system|product|cluster|pipeline|site|website|library|package|server|module"
    r"|platform|workspace|microservices?|deployment|dashboard|client|tool)"
)
_DAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)s?"
_KO_PROJECT_NOUN = (
    r"(?:프로젝트|레포|저장소|서비스|앱|코드베이스|코드|모노레포|API|api|시스템|사이트|라이브러리"
    r"|클러스터|파이프라인|백엔드|프론트|서버|모듈|제품|플랫폼)"
)

CUES: dict[str, str] = {
    # -- the project: deixis and concrete details
    "here": rf"\b(?:this|our|in the|for the) {_PROJECT_NOUN}\b|\bhere\b(?!'s| is the| are the| you)"
    r"|\bin this (?:one|team's)\b|\bwe(?:'re| are) on\b",
    "the_system": rf"^(?:the|our) (?:[\w.-]+ ){{0,2}}{_PROJECT_NOUN}\b",
    "ko_here": rf"(?:이|우리|본|해당|이번) ?{_KO_PROJECT_NOUN}|여기(?:서|는|선|에서)|우리 쪽",
    "port": r"\bports?\b|localhost:\d|127\.0\.0\.1:\d|:\d{4,5}\b|\b(?:on|at) \d{4,5}\b"
    r"|\d{4,5} ?(?:번|포트)|포트",
    "path": r"\b(?:folder|directory|subdirectory)\b|폴더|디렉터리|디렉토리"
    r"|(?<![~\w])(?:[\w.-]+/)+[\w.*<>{}-]*|(?<![~/\w])\.?[\w-]+\.(?:py|ts|tsx|js|jsx|go|rs"
    r"|rb|java|kt|ya?ml|toml|json|env|md|sql|cfg|ini|lock|sh|tf|proto)\b|(?<![~/])\.env\b",
    "home_path": r"~/",
    "version": r"\b[a-z][\w.+#-]* v?\d+(?:\.\d+)+\b|\bv\d+\b|\bversion\b|버전"
    r"|\b(?:python|node|java|go|ruby|php|rust|react|vue|angular|django|rails|postgres|mysql"
    r"|kubernetes|k8s|ios|android|swift|kotlin|\.net|spring boot|next\.js|flutter|laravel"
    r"|elixir|typescript|es) ?\d+\b",
    "env_var": r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b",
    "url": r"https?://|\b[\w-]+\.(?:io|dev|app|com|net|org|co\.kr|kr|cloud|internal|local)\b",
    "owner": r"\bowns?\b|\bowner\b|\bmaintain(?:s|ed)?\b|\b(?:tech )?lead (?:for|on)\b"
    r"|\bresponsible for\b|\bin charge of\b|\bpoint of contact\b|\bassigned to\b|\bon call\b"
    r"|\bask \w+ about\b|\bapproves?\b|\bsigns? off\b|\bowned by\b|\bon point for\b"
    r"|\bthe (?:one|person) to ask\b|\b(?:his|her|their) review\b"
    r"|담당|맡(?:았|고|아|은)|관리해|책임지|물어보|할당|승인해|오너|승인(?:이|을|해|하|받)|소유",
    "person": r"^(?!I\b|The\b|This\b|We\b|Our\b|All\b|Every\b|In\b|For\b|Our\b|Please\b)[A-Z][a-z]+"
    r" (?:is|owns|will|maintains|wrote|handles|leads|approves|reviews|runs|does|takes)\b"
    r"|[가-힣]{2,3} ?님",
    "decision": r"\bwe(?:'ve| have)? (?:decided|agreed|chose|chosen|settled|picked|standardi[sz]ed)"
    r"|\b(?:we|let's) (?:go|stick) with\b|\bthe plan is\b|\bfinal answer\b|^(?:결론|결정)\s*:"
    r"|(?:으로|로) 갑니다|(?:으로|로) 가요"
    r"|\bdecided (?:to|on|against)\b|\bdecision\b|\bwe(?:'re| are| will|'ll) (?:going with|go with"
    r"|use|be using|switch|moving|migrat\w*|drop\w*|adopt\w*|stick(?:ing)? with|not going to"
    r"|no longer)\b|\bswitched\b|\b(?:moved|switched|changed|bumped|pushed) (?:[\w-]+ ){0,3}?"
    r"(?:from|to)\b|\breplaced\b|\bin favou?r of\b"
    r"|\binstead of\b|\bscrap\b|\bscratch\b|\bfinal call\b|\bwe won't\b|\bno more\b"
    r"|\bgoing forward\b|\bconfirmed\b"
    r"|(?:하|쓰|가|바꾸|옮기|않|안 하|안 쓰|통일하|중단하|도입하|유지하|정하|분리해서 가)기로"
    r"|결정|확정|대신|말고|빼고|바꿨|옮겼|교체|전환|채택|바뀌었|바뀌어|바뀐|바뀝|갈아탔",
    "rule": r"\b(?:must|mustn't|have to|has to|needs? to|required|forbidden|not allowed"
    r"|should (?:always|never))\b|\bconvention\b|\bfollow(?:s)? the pattern\b|\bnaming\b"
    r"|\b(?:all|every|each) (?:[\w-]+ )?(?:endpoints?|tables?|components?|prs?|pull requests?"
    r"|commits?|migrations?|handlers?|routes?|functions?|tests?|files?|services?|responses?"
    r"|columns?|modules?|changes?|amounts?|dates?|timestamps?)\b|\bare (?:named|prefixed|suffixed)"
    r"|야 ?(?:해요|합니다|돼요|됩니다|해\b|함)|하면 안 |절대|반드시|꼭|금지|규칙|컨벤션"
    r"|통일|형식으로|형태로",
    "deadline": r"\bdeadline\b|\bdue\b|\bship(?:s|ping)? (?:by|on)\b|\blaunch\w*\b|\brelease\w*\b"
    r"|\bcode freeze\b|\bgo(?:es)? live\b|\bsprint\b|\bdemo\b|\bmilestone\b|\bbeta\b"
    r"|\bscheduled\b|\bdeploy(?:s|ments?)?\b|마감|까지|출시|오픈|데모|배포일|릴리[스즈]|일정"
    r"|스프린트|런칭|론칭",
    "weekday": r"[월화수목금토일]요일(?:마다|은|엔|에는|이랑)",
    "date": rf"\b(?:tomorrow|yesterday|next week|next month|{_DAYS}|january|february|march|april"
    r"|may|june|july|august|september|october|november|december|\d{4}-\d\d-\d\d)\b"
    r"|내일|모레|다음 ?주|다음 ?달|[월화수목금토일]요일|\d{1,2}월|\d{1,2}일",
    "stack": r"\b(?:is|are) (?:built|written|implemented|deployed|hosted|served|stored|managed"
    r"|generated|configured|set up|read|loaded|exposed|shipped|reported|scraped|retried"
    r"|versioned|kept|wired|backed)\b|\b(?:runs?|listens?|lives?) (?:on|in|at|under)\b|\buses\b"
    r"|\bwe (?:use|run|deploy|host|store|ship)\b|\bis (?:a|an) [\w. -]{0,30}(?:app|application"
    r"|service|monolith|site|library|api|backend|frontend|server)\b|\btargets?\b|\bpinned\b"
    r"|\bbased on\b|\bgo(?:es)? (?:to|through|under|into)\b|\bis (?:at|on|in)\b"
    r"|(?:으로|로) (?:만들|되어|돼|짜여|개발|작성|구성|빌드|배포|관리|돌리|돌아|모으|수집|보내)"
    r"|기반|쓰고 있|사용하고|돌아가요|돌아요|떠요|열려|있어요|예요|이에요|입니다",
    "ko_topic_term": r"[가-힣]+(?:은|는|이|가) (?:[가-힣]+ )?[A-Za-z][\w.+#/-]*"
    r"(?:로|으로|예요|이에요|이고|고|를|을|에서|에)(?![가-힣])",
    "flaky": r"\bflak\w*\b|\bintermittent\w*\b|\bknown (?:issue|bug|flake)\b"
    r"|\bfails? (?:randomly|sometimes|intermittently)\b|\bunstable\b|불안정|랜덤하게 실패"
    r"|알려진 (?:문제|버그|이슈)|간헐적|(?:종종|가끔|자주) (?:실패|깨|죽)",
    "test_name": r"\btest_\w+",
    # -- the person: preferences, identity, habits, lessons, scope beyond the project
    "i_pref": r"\bI(?:'d| would)? (?:really |strongly |much |generally |usually |always |never "
    r"|also |just )?(?:prefer|like|love|hate|dislike|can't stand|enjoy|avoid|favou?r|rather"
    r"|care)\b|\bI'?m (?:a big |not a |not much of a |more of a )?fan of\b|\bpersonally\b"
    r"|\bmy (?:preference|go-to|habit|workflow|rule|principle|style|editor|favou?rite)\b"
    r"|\bfor me\b|\bover \w+ for me\b|\bI(?:'m| am) more comfortable\b|\bI don't like\b"
    r"|\bI find (?:it|them|that)\b|\bstop (?:adding|using|writing|doing|suggesting)\b",
    "i_habit": r"\bI (?:always|never|usually|typically|tend to|normally|often|rarely|generally"
    r"|mostly|only|check|review|start|hold|take|sign|write|squash|do)\b",
    "i_identity": r"\bmy name(?:'s| is)\b|\bcall me\b"
    r"|\bI(?:'m| am|'ve been| have been|'ve worked as| worked as) (?:a|an|the) (?:[\w-]+ ){0,3}"
    r"(?:engineer|developer|dev|designer|scientist|analyst|manager|pm|lead|architect|student"
    r"|founder|cto|sre|consultant|researcher|person|admin|teacher)\b|\bI work (?:at|for|with|on)\b"
    r"|\bI(?:'m| am) (?:on|in) the [\w -]+ team\b|\bmy (?:timezone|time zone|pronouns|team|company"
    r"|role|job)\b|\bI(?:'m| am) (?:based|located|living) in\b|\bI live in\b|\bI(?:'m| am) in "
    r"[A-Z]|\bI(?:'m| am) on the (?:east|west) coast\b|\bmy timezone\b|\bI(?:'m| am) the only\b"
    r"|^I'm [A-Z][a-z]+\b",
    "i_trait": r"\bI(?:'m| am) (?:fairly |pretty |very |quite |still )?(?:new to|not (?:very )?"
    r"familiar|colou?r ?blind|dyslexic|hard of hearing|a beginner|learning|not a native"
    r"|a visual)\b|\b(?:second|first|native) language\b|\bI(?:'ve| have) been (?:writing|using"
    r"|doing|working)\b|\bI get overwhelmed\b",
    "schedule": rf"\b(?:on )?{_DAYS}\b.*\b(?:off|offline|work|don't)|\bI (?:don't|do not|never) "
    rf"work\b|\b(?:mornings|afternoons|evenings|weekends)\b|\bI take \w+ off\b|\boffline\b"
    r"|주말(?:에는|엔|은)|오전(?:에는|엔)"
    r"|오후(?:에는|엔)|밤 ?\d+시|아침 ?\d+시|재택|\d+시 (?:전|넘어)|쉬어|쉬는 날|휴무|연차|휴가"
    r"|답장이 늦|답이 늦|출근|퇴근|근무|파트타임|자리 비워"
    r"|\bevery other \w+day\b|\bworking hours\b|\bpart-time\b|\bmy hours\b|\bI(?:'m| am) off\b"
    r"|\bI log off\b|\bnight owl\b|\bfocus day\b",
    "reply_style": r"\b(?:your|you) (?:replies|reply|answers?|responses?|explanations?|messages?)\b"
    r"|\b(?:reply|respond|answer|explain|speak|talk|write)\w* (?:\w+ )?(?:to me|for me"
    r"|in (?:english|korean|\w+ish|british|plain))\b"
    r"|\bwhen you (?:explain|reply|answer|write|suggest|review|mock|give)\b"
    r"|\b(?:bullet points|tables|emojis?|exclamation marks?|preambles?|jargon"
    r"|spelling)\b|\bkeep (?:it|them|your \w+) (?:short|concise|brief|simple)\b"
    r"|\b(?:give|show|tell|explain \w+ to) me\b|\bcode you write\b|\bfor me\b|\bask (?:me )?a "
    r"clarifying"
    r"|답변|대답|설명(?:할 때|은|해 주|해주)|말투|존댓말|반말|말해 주|말해줘|알려 주|알려줘|보여 주"
    r"|보여주|정리해 주|요약|한국어로|영어로|이모지|이모티콘|글머리표|목록으로|표 말고|되물어",
    "global": r"\b(?:any|every|all (?:my|of my|our)|each|whatever|whichever) (?:[\w-]+ )?(?:project"
    r"|repo|repository|codebase|team|language|job|company|code)s?\b|\bacross (?:all )?(?:\w+ )?"
    r"(?:projects|repos|repositories|teams|languages)\b|\bno matter (?:which|what)\b"
    r"|\bregardless of\b|\beverywhere\b|\bin general\b|\bgenerally\b|\bwherever\b|\bever\b"
    r"|\bI've been on\b|\bin any\b"
    r"|어디서든|어디서나|어느 (?:프로젝트|레포|팀|언어|회사)|어떤 (?:프로젝트|레포|팀|언어)"
    r"|모든 (?:프로젝트|레포|저장소|언어|코드)|프로젝트가 바뀌어도|어떤 언어든|어느 언어든",
    "durable": r"\b(?:always|never|from now on|going forward|whenever|every time|in future)\b"
    r"|항상|늘|매번|앞으로|언제나|웬만하면|꼭",
    "lesson": r"\blessons?(?: learned| from)?\b|\bTIL\b|\bturns out\b|\brule of thumb\b|\bpro tip\b"
    r"|\btip\b|\btrick\b|\bin my experience\b|\bI(?:'ve)? learned\b|\bgo-to\b|\bwhenever\b"
    r"|\bthe first thing\b|\busually (?:fixes|works|helps|means)\b|\bsaves? (?:a lot|hours|time)"
    r"|\bpays off\b|\bis always (?:faster|better|safer)\b|^(?:if|when)\b"
    r"|경험상|팁|배운 점|배웠|교훈|요령|하면 (?:대부분|보통|대개)|부터 (?:확인|보|봐|의심|떠|해)"
    r"|^[^,.]{0,25}?(?:하|되|나|이|으|히|키|기|지|리)면 "
    r"|(?:할|일|날|때) ?땐|할 때는|하면 돼요|기본이에요|좋더라|빠르더라|통하는|편해요|습관|원칙",
    "we_habit": r"\bwe (?:always|never|usually)\b|\bas a team\b|우리는 항상|저희는",
    "ko_i": r"(?:^|\s)(?:저는|전|제가|저도|나는|난|내가|저한테|저에게|제게|저랑)\s|^제 "
    r"|\s제 (?:이름|취향|원칙|습관|스타일|방식|생각|경험|역할)",
    "ko_pref": r"좋아해|좋아하|선호|싫어|별로|편해요|편하|좋더라|싶어요|주의예요|편이에요|취향"
    r"|좋겠어요|좋아요\.?$|했으면 해요|마세요|말아 주|편해서|편해|익숙해|잘 맞아|좋았어요"
    r"|도움 됐어요|싫어요|별로예요|딱이에요|나아요|이해가 (?:빨|잘|쉬)",
    "ko_identity": r"제 이름|(?:이|)라고 불러|개발자|엔지니어|디자이너|기획자|CTO|학생|년 ?차"
    r"|에서 일해|에 다녀|소속|시간대|시차|에 살아|살고 있|팀에 있|출신|부를 때|불러 주|라고 해 주"
    r"|라고 하셔도|제 배경|제 소개|팀장|리드",
    "ko_trait": r"초보|처음이라|낯설|서툴|잘 몰라|눈이|익숙하지|배우는 중",
    # -- no fact: speech acts
    "question": r"\?\s*$|^(?:what|why|how|when|where|which|who|is there|are there|any idea|does"
    r"|do you|did|can i|could i|should i)\b",
    "ko_question": r"(?:까요|나요|가요|죠|뭐예요|뭔가요|인가요|을까|ㄹ까|는지|되나요|어요|해요|세요"
    r"|아요|였죠)\s*\?+\s*$|(?:까요|나요|인가요|뭐예요|되나요)[.!]?\s*$|왜 |어떻게 |언제 ",
    "request": r"^(?:please |pls |plz |can (?:you|u)|could (?:you|u)|would you|will you|let's|lets"
    r"|go ahead)\b"
    r"|^(?:fix|add|run|rename|refactor|write|update|remove|delete|check|look|explain|show"
    r"|summari[sz]e|generate|create|make|help|try|review|rerun|deploy|revert|format|put|use)\b",
    "ko_request": r"(?:해|봐|줘|고쳐|바꿔|짜|만들어|돌려|추가해|알려|확인해|설명해|정리해|해석해"
    r"|써|뽑아)\s?(?:주세요|줘|줄래요|줄 수 있어요|주실 수|주시겠어요|줄래)",
    "deictic": r"\b(?:this|that|these|those) (?:function|file|loop|line|query|test|variable|method"
    r"|class|diff|error|bug|stack trace|helper|pr|commit|branch|snippet|code|one|step|part)\b"
    r"|\bline \d+\b|\bthe last (?:diff|commit|run|error)\b|\bthe other one\b"
    r"|이 (?:함수|파일|부분|쿼리|변수|에러|코드|테스트|로그|줄)|방금 올린|\d+번째 줄",
    "transient": r"\b(?:right now|at the moment|currently|just now|for a (?:sec|second|minute|bit)"
    r"|one sec|a minute|hold on|hang on|brb|be back|back in|in progress|in a meeting"
    r"|working on it|still)\b|^wait\b|\b\w+ing (?:now|again)\b|\bnow[.!]?$|\btoday\b"
    r"|\bthis (?:morning|afternoon|evening)\b|^I'm \w+ing\b|\bgive me (?:a|an|one|two|five|ten|\d+)"
    r" (?:sec|second|min|minute|moment|bit|hour)s?\b|\blooking into it\b|^on it\b|\bpushed\b"
    r"|\bhave a look when\b|\d+분만|^네 바로|\bI'll (?:be back|take a look|check"
    r"|look|report)\b|\blet me\b|\bwill report back\b|\bI have updated\b|\bseems to be\b"
    r"|지금|방금|잠깐|잠시|중이에요|중입니다|하는 중|중이라|올게요|볼게요|할게요|드릴게요|오늘|아직"
    r"|자리 비울",
    "greeting": r"^(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|morning|evening"
    r"|howdy)\b|^(?:안녕|하이|반갑|좋은 (?:아침|저녁)|수고|내일 봬|잘 자)",
    "thanks": r"\b(?:thanks|thank you|thx|ty|cheers|appreciated?)\b|감사|고마워|고맙",
    "ack": r"^(?:ok(?:ay)?|k|sure|yes|yeah|yep|no|nope|got it|cool|nice|great|perfect|awesome"
    r"|sounds good|right|fine|lol|haha|hmm+|interesting|done|oops|sorry|never ?mind|no worries"
    r"|fair enough|네|넵|넹|예|응|오케이|ㅇㅋ|알겠|확인했|좋아요|좋습니다|완벽|오|아|앗|헐|흠|ㅋ|ㅎ"
    r"|그렇|맞아|아니요|죄송)",
    "emotive": r"\b(?:ugh|lol|haha|omg|wow|yay|meh|sigh|wild|crazy)\b|:\)|:\(|!!"
    r"|ㅋㅋ|ㅎㅎ|ㅠㅠ|ㅜㅜ|대박|헐|아 진짜|피곤|배고|날씨",
    "hedge": r"\bI think\b|\bI guess\b|\bprobably\b|\bseems?\b|\bmight be\b|\blooks like\b"
    r"|것 같아요|같아요|듯해요|듯요|인 듯",
    "suggest": r"\b(?:maybe|perhaps|what if|how about|should we|could we|we could|we might"
    r"|you (?:could|might|may) (?:also )?(?:consider|try|want)|one option|if you want|if that helps"
    r"|at some point|someday|not sure|it's up to you|alternatively"
    r"|(?:here are|there are) (?:\w+ )?(?:options|ways|approaches|choices|alternatives))\b"
    r"|(?:면|는 게|는 것도) (?:어떨까요|어때요"
    r"|좋을 것 같|괜찮지 않을까|나을까)|볼까요|고민해 봐|나중에|언젠가|원하시면"
    r"|방법도 있|것도 방법|선택지|방법이 (?:몇 가지|두 가지|세 가지|여러 가지)",
    "correction": r"\b(?:actually|correction|misspoke|scratch (?:that|what)|my bad|I was wrong"
    r"|I meant|to correct|correct myself|wait,? no|no,? wait|no no|got (?:it|that|the \w+) wrong"
    r"|mixed (?:it|them|that) up|the other way round|the opposite|forget what I said"
    r"|changed my mind|not \w+ (?:anymore|any more)|I've switched|switched to|come round to"
    r"|used to)\b|, not (?:the |in |on )?[\w.:/-]+(?:[,.;]|$)|\bnot [\w.:/-]+ but\b"
    r"|정정|잘못 말|잘못 알려|헷갈렸|틀렸|아니라|아니고|말고요|거꾸로|반대예요|취소할게"
    r"|번복|바꿨어요|예전엔|예전에",
    "reply_feedback": r"\b(?:wall of text|too (?:long|verbose|wordy|much|many)|way too|next time"
    r"|in future|drives me|(?:stop|quit) \w+ing|drop (?:it|the|them)|tone it down"
    r"|less (?:theory|jargon|hedging|detail|text|talk|fluff)|more (?:code|examples"
    r"|of (?:those|that))|every (?:reply|answer|message|response|time you)"
    r"|at the (?:start|end|top|bottom) of (?:every|each|your)|skip the"
    r"|you (?:don't|do not) (?:have|need) to|no need to|you can skip|keep doing|that's the style"
    r"|the essay|history lesson|stopped reading|had to (?:ask|scroll)|buried the"
    r"|I learn(?: better)?|works (?:better )?for me|how I (?:learn|think|work)|I think in)\b"
    r"|너무 길|길어요|장황|다음부터|다음엔|다음에는|앞으로는|매번|빼 주|빼주|생략하"
    r"|안 하셔도|안 붙이셔도|안 주셔도|않으셔도|그만하|거슬려|부담스러|답답해|하셔도 돼요"
    r"|주셔도 돼요|그렇게 해 주세요|자주 해 주세요|저한테는|저는 그렇게|제가 물어볼게요",
    "debug_story": r"\b(?:I(?:'ve| have)? (?:patched|fixed|found|added|updated|changed|removed"
    r"|renamed|regenerated|rolled back|restarted|rebased|reran|looked through)"
    r"|the (?:failing|broken|flaky|red) (?:test|assertion|job|build|step)"
    r"|was (?:failing|timing out|crashing|skipped|out of date)"
    r"|here's what I found|the (?:likely|root) cause|can't reproduce|couldn't reproduce)\b"
    r"|고쳤|수정했|찾았어요|찾았습니다|추가했|재시작했|롤백|돌리는 중|돌리고 있|원인을 찾"
    r"|재현이 안",
    "error_paste": r"\b(?:Traceback|[A-Z]\w+(?:Error|Exception)):|\bline \d+, in\b",
    # -- no fact: scoped to now, to someone else, to a what-if, to the chat itself
    "one_off": r"\b(?:this time|just this once|this once|for this (?:answer|reply|one|question|task"
    r"|message|pr|ticket|run|session)|(?:just )?for now|for the moment|temporar(?:y|ily)|this week"
    r"|for today|only today|today only|until (?:my|the|I|we|it)\b|in the meantime)\b"
    r"|이번(?:만| 한 번만| 답변만| 답만| 건만)|이번 (?:답변|작업|건|PR|한 번)(?:만|은|에서는)"
    r"|오늘(?:만|은)"
    r"|당분간|임시로|한 번만|이번 주(?:만|는|까지)|\d+분 동안|그때까지",
    "hearsay": r"\b(?:apparently|I(?:'ve)? heard|rumou?rs?|someone (?:said|told|suggested|mentioned"
    r"|proposed)|(?:my|a) (?:friend|colleague|cousin|manager|coworker|co-worker|buddy|boss)"
    r"|(?:he|she|they) (?:said|says|told|swears|thinks)|told me|according to|other teams?"
    r"|(?:another|a different|a bigger|a much bigger) (?:team|company)|at my (?:old|last|previous)"
    r" (?:job|company|team)|the \w+ folks)\b"
    r"|(?:는|한|했|된|쓴|간|온|이|있|없|왔|갔|났)대요|(?:이|였)래요|다던데|라던데|한다던"
    r"|다고 (?:들었|하더라|하던데)|고 들었|소문|말로는|옆 팀|다른 팀|다른 회사"
    r"|친구(?:네|가|는|한테)|동기",
    "hypothetical": r"\b(?:if (?:we|I|you|they) (?:ever|were|had|did|went|moved|switched|upgraded"
    r"|started|rewrote)|suppose|supposing|say we|let's say|imagine|hypothetical(?:ly)?"
    r"|thought experiment|in theory|would(?:'ve| have) been|what would happen if|just curious)\b"
    r"|만약|만일|(?:라|다)면 |한다고 치면|(?:이|라)고 치면|가정(?:하면|인데|해|이에요)|이론상"
    r"|그냥 궁금",
    "quoted": r"\b(?:pasted|quot(?:e|ing)|the (?:docs?|article|blog|post|ad|job ad|readme|talk"
    r"|tweet|thread|book) (?:says?|said|claims?)|(?:read|saw|found) (?:this|an?|that) (?:article"
    r"|post|blog|thread|tweet|talk)|this in our channel)\b|says? ['\"‘“]"
    r"|붙여 넣|붙인 (?:거|코드|로그)|블로그에서|글을 봤|기사|라고 (?:나오|써|적혀|하던데|하더라)"
    r"|그대로 옮기|복붙|던데 (?:ㅋ|믿|맞)",
    "meta_chat": r"\b(?:ignore (?:that|it|this|my last|the last)|meant for (?:a different|another"
    r"|the other)|wrong (?:chat|window|channel|tab|thread)|testing whether you|do you remember"
    r"|scroll up|(?:new|another) chat|no need to remember|don't (?:save|store|remember) (?:this"
    r"|that)|thinking out loud|talking to myself)\b"
    r"|무시하(?:셔도|세요)|신경 쓰지 마|다른 채널|잘못 보냈|기억(?:하실|해 둘|할) 필요|혼잣말"
    r"|없던 얘기|기억나세요",
    "past_event": r"\b(?:yesterday|last (?:night|week|month|time|sprint|monday|tuesday|wednesday"
    r"|thursday|friday)|this morning|earlier today|the other day|went (?:well|better|okay|badly"
    r"|fine)|(?:I|we) (?:restarted|rebooted|reran|tried|lost|spent|had to)|happened)\b"
    r"|어제|그저께|지난번|지난주|오늘 아침|새벽에|했었|었었|났었|뻗었|날렸",
    "offer": r"\b(?:would you like|do you want me to|shall I|want me to|if you'd like|if you want"
    r"|I can (?:also )?(?:switch|add|write|show|make|do|try|run)"
    r"|let me know (?:if|which|whether))\b"
    r"|드릴까요|볼까요|할까요|원하시면|알려 주시면|말씀해 주시면|정해 주시면",
}

_CASED = frozenset({"person", "env_var", "i_identity"})  # capitals carry the meaning here


@functools.cache
def _compiled() -> dict[str, re.Pattern[str]]:
    """:data:`CUES` compiled, on first use: a few hundredths of a second that a run whose
    extractor never classifies a message does not pay at import."""
    return {
        name: re.compile(pattern, 0 if name in _CASED else _I) for name, pattern in CUES.items()
    }


_SCOPE = ("here", "ko_here", "global", "durable", "reply_style", "version", "i_pref", "ko_i")
_ACTS = (
    "question", "ko_question", "request", "ko_request", "transient", "we_habit", "suggest",
    "one_off", "hearsay", "hypothetical",
)  # fmt: skip
_PERSON = (
    "i_pref", "i_habit", "i_identity", "i_trait", "ko_i", "ko_pref", "ko_identity",
    "reply_feedback", "schedule",
)  # fmt: skip
_PROJECTISH = (
    "decision", "rule", "date", "deadline", "here", "ko_here", "port", "path", "version", "stack",
    "correction",
)  # fmt: skip
_PAIRS = frozenset((a, b) for a in _ACTS for b in _SCOPE) | frozenset(
    (a, b) for a in _PERSON for b in _PROJECTISH
)
_LOCAL_ACTS = frozenset(
    (
        *("question", "ko_question", "request", "ko_request", "transient", "greeting", "thanks"),
        *("ack", "emotive", "hedge", "suggest", "debug_story", "error_paste", "one_off"),
        *("hearsay", "hypothetical", "quoted", "meta_chat", "past_event", "offer"),
    )
)
"""Speech acts that belong to one sentence: in a message of several, "thanks!" or a closing
question says nothing of the sentence that states the fact."""
_SENTENCES = re.compile(r"(?<=[.!?。])\s+|\s*\n\s*")

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_WORD = re.compile(r"[A-Za-z][\w'+#.-]*[\w+#]|[A-Za-z]|\d+(?:\.\d+)*|[\uac00-\ud7a3]+")
_TECH = re.compile(
    r"^(?:react|vue|svelte|sveltekit|angular|next\.js|nuxt|django|flask|fastapi|rails|laravel"
    r"|spring boot|nestjs|phoenix|axum|postgres|postgresql|mysql|sqlite|mongodb|redis"
    r"|kafka|rabbitmq|sqs|celery|sidekiq|docker|kubernetes|k8s|helm|terraform|aws|gcp|azure"
    r"|vercel|netlify|heroku|fly\.io|nginx|caddy|jest|vitest|pytest|playwright|cypress|webpack"
    r"|vite|pnpm|npm|yarn|poetry|pip|gradle|maven|typescript|javascript|python|golang|rust|ruby"
    r"|java|kotlin|swift|swiftui|flutter|elixir|node|deno|graphql|grpc|redux|zustand"
    r"|mobx|recoil|jotai|pinia|tailwind|sass|prisma|typeorm|sqlalchemy|alembic|flyway|sentry"
    r"|datadog|grafana|prometheus|loki|elasticsearch|airflow|spark|argo|jwt|oauth|vim|intellij"
    r"|github|gitlab|turborepo|storybook|zod|dramatiq|keycloak|s3|ecs|eks|cdk)$",
    _I,
)
_SECRET_PROSE = re.compile(
    r"(?:password|passwd|passphrase|pass ?code|api[ _-]?key|access[ _-]?key|secret|token|비밀번호"
    r"|패스워드|암호|토큰|키)(?: (?:for|of|on|to) (?:[\w-]+ ){0,3}?[\w-]+)?[^\w\s]{0,3}[ \t]*+"
    r"(?:is|was|=|:|은|는|이|가)[ \t]*+[:=]?[ \t]*+['\"`]?"
    r"(?P<v>(?=[^\s'\"`]*\d)(?=[^\s'\"`]*[A-Za-z])[^\s'\"`,]{6,})",
    _I,
)
_PASSWORD_DIGITS = re.compile(  # "비번 1234", "the password is 4471": a short PIN given as one
    r"(?<![\w-])(?:(?:password|passwd|pw|pwd|passcode|비밀\s?번호|비번|암호|핀\s?번호)"
    r"(?:[ \t]*+(?:is|was|:|=|은|는|이|가))?|pin(?: ?code)?[ \t]*+(?:is|was|:|=))[ \t]*+"
    r"(?P<v>\d{4,8})(?!\d|[.,:/%]\d|%|\s*(?:자리|글자|자|chars?|characters?|digits?|times|번|회|일"
    r"|days?|months?|minutes?|분|초|시간|비트|bits?|바이트|bytes?|rounds?|iterations?|개))",
    _I,
)
_RANDOM_TOKEN = re.compile(r"(?<![\w/+=.-])[A-Za-z0-9_-]{20,}+(?![\w/+=.-])")
"""A run of token characters standing alone: a key or token pasted mid-sentence, no name."""
_BARE_PASSWORD = re.compile(
    r"(?<![^\s`'\"(])(?P<v>[A-Za-z0-9@._-]+[!#$^~][A-Za-z0-9@!#$^~._-]*[A-Za-z0-9@!#$^~])"
    r"(?![^\s`'\").,;:?])"
)
"""A password with no name at all ("try `Wint3r!sComing`", "it's Marble#Falcon61, not ..."):
8-40 characters of upper case, lower case and digits with ! # $ ^ or ~ inside, not an email."""
_OBJECT_ID = re.compile(  # Stripe's object ids: customers, subscriptions, payments, invoices...
    r"(?:cus|sub|pi|ch|in|il|ii|price|prod|evt|acct|txn|req|pm|seti|si|cs|po|py|re|tr|ba|fee)_"
)


def _bare_password(value: str) -> bool:
    if not 8 <= len(value) <= 40 or re.search(r"@[\w-]+\.", value):
        return False
    return all(any(test(c) for c in value) for test in (str.isupper, str.islower, str.isdigit))


def _random_token(value: str) -> bool:
    """Upper case, lower case and digits mixed, no word-like runs, high entropy: a generated
    secret rather than an identifier (hex digests and UUIDs have no capitals)."""
    core = value.strip("_-")
    if not all(any(test(c) for c in core) for test in (str.isupper, str.islower, str.isdigit)):
        return False
    runs = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", core)
    if not runs or sum(map(len, runs)) / len(runs) >= 3.0:
        return False  # words and numbers: ProcessPaymentHandler2024, AcmeCorpProd01
    counts = Counter(core)
    entropy = -sum(n / len(core) * math.log2(n / len(core)) for n in counts.values())
    return entropy >= 3.8


def is_korean(text: str) -> bool:
    """True when ``text`` has any Hangul syllable."""
    return _HANGUL.search(text) is not None


def has_secret(text: str) -> bool:
    """A credential by :func:`contains_secret`, or a password or key spelled out in prose.

    The prose check ("the password is Hunter2024!") is deliberately wider than the memory
    writer's, because a classifier that says "no fact" loses nothing but a fact. So are two
    more: a PIN of 4+ digits after a password word ("비번 1234"), a password-shaped word with
    no name at all (upper case, lower case, digits and a symbol inside: "try Wint3r!sComing"),
    and a generated-looking token pasted with no name at all (20+ characters mixing upper
    case, lower case and digits).
    """
    if contains_secret(text):
        return True
    for m in _SECRET_PROSE.finditer(text):
        value = m["v"].rstrip(".!")
        if value[:1] in ".…*•":
            continue  # "the key ends ...a9f3": masked, the rest of it is not here
        reference = re.fullmatch(r"[A-Z][A-Z0-9_]+|[\w-]+\.\w{1,5}|(?:[\w.-]+/)+[\w.-]*", value)
        if not reference and not is_password_manager(value):
            return True
    if _PASSWORD_DIGITS.search(text):
        return True
    if any(_bare_password(m["v"]) for m in _BARE_PASSWORD.finditer(text)):
        return True
    return any(
        _random_token(m[0]) and not is_public_data(text, m.start()) and not _OBJECT_ID.match(m[0])
        for m in _RANDOM_TOKEN.finditer(text)
    )


def cues(text: str, role: str = "user") -> list[str]:
    """The names of the cues that fire on ``text``, in :data:`CUES` order."""
    stripped = text.strip()
    found = [name for name, pattern in _compiled().items() if pattern.search(stripped)]
    if role == "assistant":
        found.append("assistant")
    return found


def _shape(word: str) -> str:
    if word[0].isdigit():
        if "." in word:
            return "<ver>"
        return "<port>" if len(word) in (4, 5) else "<num>"
    if _TECH.match(word):
        return "<tech>"
    return word.lower()


def _lexical(text: str) -> list[str]:
    out: list[str] = []
    words = [_shape(w) for w in _WORD.findall(text)]
    previous = "<s>"
    for word in [*words, "</s>"]:
        if word != "</s>":
            out.append("w:" + word)
        out.append("b:" + previous + "_" + word)
        previous = word
        if _HANGUL.match(word):
            out.extend(("ke:" + word[-1:], "ke:" + word[-2:]))
            out.extend("kc:" + word[i : i + 2] for i in range(len(word) - 1))
    return out


def _length(text: str) -> str:
    n = len(_WORD.findall(text))
    return "len:" + ("1" if n <= 1 else "2-3" if n <= 3 else "4-6" if n <= 6 else "7+")


def _localised(text: str, fired: list[str]) -> tuple[list[str], int]:
    """``fired`` with each speech act that holds in only some sentences of ``text`` renamed
    ``part_<act>``, and the number of sentences."""
    sentences = [p.strip() for p in _SENTENCES.split(text.strip()) if re.search(r"\w", p)]
    if len(sentences) < 2:
        return fired, len(sentences)
    out = []
    for name in fired:
        local = name in _LOCAL_ACTS
        if local and not all(_compiled()[name].search(part) for part in sentences):
            name = "part_" + name
        out.append(name)
    return out, len(sentences)


def features(text: str, role: str = "user") -> list[str]:
    """Every feature of one message: cues (``@``), cue pairs (``@a&b``), length and words.

    In a message of several sentences a speech act that holds in only some of them is
    ``@part_<act>``: the weights learn that a greeting before a fact does not make it chatter.
    """
    fired, sentences = _localised(text, cues(text, role))
    marks = ["@" + name for name in fired]
    present = set(fired)
    marks += [f"@{a}&{b}" for a, b in combinations(fired, 2) if (a, b) in _PAIRS]
    marks += [f"@{b}&{a}" for a, b in combinations(fired, 2) if (b, a) in _PAIRS]
    if not present & {"question", "ko_question", "request", "ko_request"}:
        marks.append("@statement")
    marks.append("@lang:" + ("ko" if is_korean(text) else "en"))
    if sentences > 1:
        marks.append("@sentences:" + ("2" if sentences == 2 else "3+"))
    return [*marks, _length(text), *_lexical(text)]
