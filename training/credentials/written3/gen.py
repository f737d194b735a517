"""Fill the third set of hand-written sentences with fresh random values and write the row files.

Everyday life and small business, as people tell a personal assistant: family and shared
accounts, wifi notices, door, gate, locker and parcel-box codes, PINs, security-card numbers,
one-time codes, shop POS and admin accounts, kids' devices, password changes, codes read out
in words or spelled, seed phrases, forwarded messages; and the same situations with no secret.

A sentence marks each secret with ⟦...⟧; inside or outside the brackets, {kind} becomes a fresh
random value of that kind (see GEN), {r3_9} a whole number from 3 to 9. {~이야} after a value
is a Korean particle written for the sound the value ends in (이야 after 7 or "kim", 야 after 4
or "sarang2", by how a Korean reads it aloud). What ends up inside brackets is a row's value.

    python training/credentials/written3/gen.py training/credentials/data
"""

# ruff: noqa: SIM905 (word lists read better as one string per pool)
from __future__ import annotations

import gzip
import json
import random
import re
import string
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SEED = 20261207
rng = random.Random(SEED)
USED: set[str] = set()

# Words people build everyday passwords from: pets, kids, teams, foods, places.
PETS = """
Buster Pickles Peanut Ziggy Waffles Maple Rocco Bean Olive Gizmo Sprout Nugget Pumpkin Tater
Mango Bruno Pepper Lulu Murphy Winnie Rufus Cooper Marley Hazel Scout Frankie Poppy Kona
Bandit Tux Cleo Louie Chewy Sadie Gus Penny Ollie Willow Zeus Tilly
""".split()

KIDS = """
ellie noah mia liam ava leo zoe owen lily jack nora ethan ruby max chloe sam emma luke
aiden grace caleb ivy mason piper wyatt hazel eli stella jonah molly
""".split()

SURNAMES = """
garcia nguyen patel okafor murphy kowalski santos brennan delgado hughes
rossi fischer moreno chen walsh novak lindqvist ortega baker dubois
""".split()

PLACES = """
tahoe cancun maui denver austin boston paris lisbon kyoto oahu aspen napa sedona
vegas miami dublin rome seattle
""".split()

TEAMS = "yankees packers celtics steelers cubs lakers dodgers eagles warriors bruins".split()

THINGS = """
sunshine cookie rainbow butterfly dolphin cupcake pancake blueberry marshmallow jellybean
moonlight starfish snowflake popcorn sparkle thunder bubblegum firetruck dinosaur unicorn
""".split()

# Romanized Korean words and names that end up in Korean users' passwords.
KO_WORDS = """
sarang haneul byeol dalbit bomnal gureum baram sonamu dubu mandu kimchi hodu bori
nabi bbobbi dooly pororo kkomi yeppeuni ttoli mongmong seolhwa haru mirae
""".split()

KO_NAMES = """
minji seoyeon jiho doyun hayoon jiwoo sua yejun eunwoo jimin hyunwoo soyeon taeyang
dahye junseo yuna siwoo chaewon minseo jihun
""".split()

KO_SURNAME = "kim lee park choi jung kang cho yoon jang lim han shin".split()

SHOPS = """
bluebakery cafemoa petalhouse dalkomcafe nailbom mintsalon happymart greenfarm hanokstay
sunflowerflorist bobsdeli coffeebean9 goldenscissors pizzaroma dubuhouse ssalbakery
lovelycake tacoloco
""".split()

# Seed words for recovery phrases (common English words, lowercase, four letters and up).
SEEDS = """
acoustic admit aerobic afford agent alley almost amateur ankle antique apology arena armor
artwork athlete auction august average bamboo banner barrel beyond bicycle blanket bleak
blossom border bounce brave brisk broccoli bubble cabbage canal canvas carbon carpet casino
castle cereal chalk charge cherry chimney circle citizen clever cliff cluster coconut collect
comic copper coral craft cricket cruise cupboard curtain damp dawn decade delay dinosaur
dolphin donkey drama drift eager eagle echo elegant elder embrace empty enlist erode essay
evoke exotic fabric faint fence festival fiction flame flavor fluid foam forest fragile frost
gadget garlic gentle giraffe glove goose gossip grape gravity guitar harvest hedgehog hobby
hockey honey hover husband icon idle ignore illegal inch indoor input insect island ivory
jacket jelly joke juice kettle kiwi knock ladder lava lemon lizard lobster loyal lyrics
magnet mango marble meadow melody mercy mimic mirror monkey muffin mushroom napkin nephew
noodle oyster paddle panther parrot peanut pencil pigeon pillow planet plunge pony portion
puzzle pyramid rabbit radar raven recipe ribbon riddle robust rocket rookie saddle salad
salmon scissors sketch slender smoky snack soccer sphere spider squirrel stadium sugar
sunset swallow tennis thunder tiger toast tomato tornado trophy tulip tunnel turtle twelve
umbrella unique upgrade velvet violin volcano walnut wheat whisper wizard yogurt zebra
""".split()

HANGUL_WORDS = """
사랑해 우리집 행복 하늘별 보물 엄마 아빠 고양이 강아지 햇님 달님 딸기 봄날 무지개 토끼
꽃님 곰돌이 해바라기 초코 바다 구름 새벽 여름밤 다람쥐 호박 감자 떡볶이 만두 복숭아
""".split()

_DIGIT_KO = "영일이삼사오육칠팔구"
_DIGIT_EN = "zero one two three four five six seven eight nine".split()
_LETTER_KO = dict(
    zip(
        string.ascii_lowercase,
        """에이 비 씨 디 이 에프 지 에이치 아이 제이 케이 엘 엠 엔 오 피 큐 알 에스 티 유 브이
        더블유 엑스 와이 지""".split(),
        strict=True,
    )
)
_NATO = dict(
    zip(
        string.ascii_lowercase,
        """alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november
        oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu""".split(),
        strict=True,
    )
)


def _fresh(make: Callable[[], str]) -> str:
    """A value not drawn before; short ones (a PIN's two digits, a pet's name) may repeat."""
    for _ in range(200):
        value = make()
        if value not in USED or len(value) < 4:
            USED.add(value)
            return value
    return value


def _pick(pool: list[str]) -> str:
    return rng.choice(pool)


def _digits(n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _mmdd() -> str:
    return f"{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}"


def _year() -> str:
    return str(rng.randrange(1958, 2024))


def _sym() -> str:
    return rng.choice("!!!@#$*?")


def _fam() -> str:
    """A family password: a pet, kid or surname with a birthday, a year or a lucky number."""
    who = rng.choice([_pick(PETS), _pick(KIDS), _pick(KIDS).capitalize(), _pick(SURNAMES)])
    tail = rng.choice([_mmdd(), _year(), _year()[2:], _digits(2), _digits(3)])
    return who + tail + rng.choice(["", "", "", "!", "1"])


def _pw() -> str:
    """An everyday password of the kinds people pick."""
    style = rng.randrange(8)
    if style == 0:
        return _pick(THINGS) + _digits(rng.randrange(2, 5))
    if style == 1:
        return _pick(THINGS).capitalize() + _year() + _sym()
    if style == 2:
        return _pick(TEAMS) + _digits(2) + rng.choice(["", "!"])
    if style == 3:
        return (
            rng.choice(["ilove", "ILove", "love", "my"])
            + _pick(PETS).lower()
            + _digits(rng.randrange(1, 4))
        )
    if style == 4:
        return _pick(PLACES).capitalize() + rng.choice(["", "_", "."]) + _year()
    if style == 5:
        w = _pick(THINGS)
        return w.translate(str.maketrans("aeio", "4310")) + _digits(2)
    if style == 6:
        return _pick(PETS) + "&" + _pick(PETS) + _digits(2)
    return _pick(KIDS).capitalize() + _pick(SURNAMES).capitalize() + _digits(rng.randrange(1, 4))


def _pwsym() -> str:
    """A password that meets a portal's rules: capital, digits, a symbol."""
    style = rng.randrange(4)
    if style == 0:
        return _pick(THINGS).capitalize() + _sym() + _digits(4)
    if style == 1:
        return _pick(PLACES).capitalize() + _digits(2) + _sym() + _pick(TEAMS)[:3]
    if style == 2:
        return _pick(KIDS).capitalize() + _sym() + _mmdd() + _sym()
    return _pick(SEEDS).capitalize() + _pick(SEEDS).capitalize() + _sym() + _digits(2)


def _pwx() -> str:
    """A long generated password, the kind a bank or password manager suggests."""
    chars = string.ascii_letters + string.digits + "!@#$%^&*-_"
    while True:
        v = "".join(rng.choice(chars) for _ in range(rng.randrange(11, 17)))
        if (
            any(c.isdigit() for c in v)
            and any(c.isupper() for c in v)
            and any(c.islower() for c in v)
        ):
            return v


def _kidpw() -> str:
    """A password a school or a parent sets for a child."""
    style = rng.randrange(4)
    if style == 0:
        return _pick(THINGS) + _digits(2)
    if style == 1:
        return "super" + _pick(PETS).lower() + _digits(1)
    if style == 2:
        return (
            rng.choice(["blue", "red", "green", "pink", "purple"])
            + _pick(["cat", "dog", "fox", "owl", "frog", "bear"])
            + _digits(2)
        )
    return _pick(PETS) + _pick(["rocks", "rules", "zoom"]) + _digits(1)


def _kpw() -> str:
    """A Korean user's password: romanized words and names, initials, birthdays, key rows."""
    style = rng.randrange(9)
    if style == 0:
        return _pick(KO_WORDS) + _mmdd()
    if style == 1:
        return _pick(KO_NAMES) + _digits(rng.choice([2, 4])) + rng.choice(["", "!", "!!", "@"])
    if style == 2:
        return _pick(KO_SURNAME)[0] + _pick(KO_NAMES)[:2] + _year() + rng.choice(["", "!"])
    if style == 3:
        return (
            rng.choice(["qwer", "asdf", "zxcv", "qwert", "1q2w3e"])
            + _digits(4)
            + rng.choice(["", "!", "!!", "^^"])
        )
    if style == 4:
        return _keys()
    if style == 5:
        return _pick(KO_WORDS).capitalize() + _sym() + _digits(rng.randrange(2, 5))
    if style == 6:
        return _pick(KO_SURNAME) + _pick(KO_NAMES) + _digits(2)
    if style == 7:
        return (
            rng.choice(["i", "I", ""])
            + rng.choice(["love", "luv"])
            + _pick(KO_NAMES)
            + _digits(rng.randrange(1, 4))
        )
    return _pick(KO_WORDS) + _pick(KO_WORDS) + _digits(rng.randrange(1, 4))


def _wifi() -> str:
    """A wifi password as shops, hosts and families set them."""
    style = rng.randrange(6)
    if style == 0:
        return _digits(rng.choice([8, 9, 10]))
    if style == 1:
        return _pick(SHOPS) + _digits(rng.randrange(2, 5))
    if style == 2:
        return _pick(THINGS) + _pick(THINGS) + _digits(rng.randrange(0, 3))
    if style == 3:
        return (
            _pick(PLACES).capitalize() + rng.choice(["Guest", "House", "Stay", "home"]) + _digits(2)
        )
    if style == 4:
        return (
            rng.choice(["welcome", "Welcome", "guest", "coffee", "relax", "stay"])
            + _digits(rng.randrange(3, 5))
            + rng.choice(["", "!"])
        )
    return _pick(SEEDS) + _pick(SEEDS).capitalize() + _digits(1)


def _kwifi() -> str:
    """A wifi password as Korean shops and homes set them: a phone number, a romanized word."""
    style = rng.randrange(5)
    if style == 0:
        return "010" + _digits(8)
    if style == 1:
        return _pick(KO_WORDS) + _digits(4)
    if style == 2:
        return typed_in_english(_pick(HANGUL_WORDS)) + _digits(rng.choice([2, 4]))
    if style == 3:
        return _pick(SHOPS) + _digits(rng.randrange(2, 5))
    return _digits(rng.choice([8, 10]))


def _shop() -> str:
    """A small shop's admin or POS account password."""
    style = rng.randrange(4)
    if style == 0:
        return _pick(SHOPS) + _digits(rng.randrange(2, 5)) + rng.choice(["", "!", "@"])
    if style == 1:
        return _pick(SHOPS).capitalize() + _year() + _sym()
    if style == 2:
        return (
            rng.choice(["shop", "store", "owner", "admin", "manager", "boss"]) + _digits(4) + _sym()
        )
    return _pick(SHOPS)[:5] + _sym() + _pick(SHOPS)[-4:] + _digits(2)


def _door() -> str:
    """A keypad code with the separators people type or write: #, *, -, spaces."""
    d = _digits(rng.choice([4, 4, 5, 6]))
    style = rng.randrange(8)
    if style == 0:
        return f"#{d}*"
    if style == 1:
        return f"*{d}#"
    if style == 2:
        return f"{d}#"
    if style == 3:
        return f"#{d}"
    if style == 4:
        return f"{d[:2]}-{d[2:]}"
    if style == 5:
        return " ".join(d)
    if style == 6:
        return f"{d}*"
    return f"*{d[:2]}*{d[2:]}#"


def _spaced() -> str:
    """Digits of a dial or wheel lock, spaced or hyphenated."""
    d = _digits(rng.choice([3, 4, 4, 5]))
    return rng.choice([" ", "-", "-", " - "]).join(d)


def _en(n: int) -> str:
    ds = _digits(n)
    words = [("oh" if d == "0" and rng.random() < 0.5 else _DIGIT_EN[int(d)]) for d in ds]
    return rng.choice([" ", " ", "-", ", "]).join(words)


def _ko(n: int) -> str:
    ds = _digits(n)
    words = [("공" if d == "0" and rng.random() < 0.6 else _DIGIT_KO[int(d)]) for d in ds]
    return rng.choice(["", "", " ", "-"]).join(words)


def _spell() -> str:
    """A password spelled out a character at a time."""
    short = [w for w in THINGS + [p.lower() for p in PETS] + KO_WORDS if len(w) <= 7]
    base = _pick(short) + _digits(2)
    style = rng.randrange(4)
    if style == 0:
        return "-".join(base)
    if style == 1:
        return " ".join(base)
    if style == 2:
        return ", ".join(base)
    first = base[0]
    return f"capital {first.upper()}, " + ", ".join(base[1:])


def _nato() -> str:
    """A short code read out in the phonetic alphabet, with its digits."""
    letters = [rng.choice(string.ascii_lowercase) for _ in range(rng.randrange(3, 5))]
    parts = [_NATO[c].capitalize() for c in letters] + [
        str(rng.randrange(10)) for _ in range(rng.randrange(2, 4))
    ]
    return " ".join(parts)


def _spellko() -> str:
    """A password spelled a letter at a time the way Koreans read Latin letters and digits."""
    base = rng.choice([_pick(KO_WORDS)[:5] + _digits(2), _pick(KO_NAMES) + _digits(2)])
    out = []
    for c in base:
        out.append(_LETTER_KO[c] if c.isalpha() else _DIGIT_KO[int(c)])
    return rng.choice([" ", " ", ", "]).join(out)


def _dial() -> str:
    a, b, c = (rng.randrange(1, 60) for _ in range(3))
    return rng.choice([f"{a}-{b}-{c}", f"{a} {b} {c}", f"R{a} L{b} R{c}"])


# two-set (dubeolsik) Korean keyboard
_CHO = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
_JUNG = "ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ"
_JONG = ["", *"ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"]
_KEYS = dict(
    zip(
        "ㅂㅈㄷㄱㅅㅛㅕㅑㅐㅔㅁㄴㅇㄹㅎㅗㅓㅏㅣㅋㅌㅊㅍㅠㅜㅡ",
        "qwertyuiopasdfghjklzxcvbnm",
        strict=True,
    )
)
_KEYS.update({"ㅃ": "Q", "ㅉ": "W", "ㄸ": "E", "ㄲ": "R", "ㅆ": "T", "ㅒ": "O", "ㅖ": "P"})
_PAIRS = {
    "ㅘ": "ㅗㅏ", "ㅙ": "ㅗㅐ", "ㅚ": "ㅗㅣ", "ㅝ": "ㅜㅓ", "ㅞ": "ㅜㅔ", "ㅟ": "ㅜㅣ",
    "ㅢ": "ㅡㅣ", "ㄳ": "ㄱㅅ", "ㄵ": "ㄴㅈ", "ㄶ": "ㄴㅎ", "ㄺ": "ㄹㄱ", "ㄻ": "ㄹㅁ",
    "ㄼ": "ㄹㅂ", "ㄽ": "ㄹㅅ", "ㄾ": "ㄹㅌ", "ㄿ": "ㄹㅍ", "ㅀ": "ㄹㅎ", "ㅄ": "ㅂㅅ",
}  # fmt: skip
_JAMO = {v: k for k, v in _KEYS.items()}
_JOINED = {v: k for k, v in _PAIRS.items()}


def _jamo(ch: str) -> list[str]:
    code = ord(ch) - 0xAC00
    if not 0 <= code < 11172:
        return [ch]
    parts = [_CHO[code // 588], _JUNG[code % 588 // 28], _JONG[code % 28]]
    return [j for p in parts if p for j in _PAIRS.get(p, p)]


def typed_in_english(word: str) -> str:
    """The keys a Hangul word takes, as it comes out with the keyboard left in English."""
    return "".join(_KEYS.get(j, j) for ch in word for j in _jamo(ch))


def typed_in_korean(text: str) -> str:
    """What ASCII letters come out as with the keyboard left in Korean, jamo joined."""
    jamo = [_JAMO.get(c, _JAMO.get(c.lower(), c)) for c in text]
    vowels = set(_JUNG)
    out: list[str] = []
    i = 0
    while i < len(jamo):
        if jamo[i] in _CHO and i + 1 < len(jamo) and jamo[i + 1] in vowels:
            cho, vowel = jamo[i], jamo[i + 1]
            i += 2
            if i < len(jamo) and vowel + jamo[i] in _JOINED:
                vowel, i = _JOINED[vowel + jamo[i]], i + 1
            jong = ""
            if (
                i < len(jamo)
                and jamo[i] in _JONG[1:]
                and not (i + 1 < len(jamo) and jamo[i + 1] in vowels)
            ):
                jong, i = jamo[i], i + 1
                both = jong + jamo[i] if i < len(jamo) else ""
                if both in _JOINED and not (i + 1 < len(jamo) and jamo[i + 1] in vowels):
                    jong, i = _JOINED[both], i + 1
            out.append(
                chr(0xAC00 + _CHO.index(cho) * 588 + _JUNG.index(vowel) * 28 + _JONG.index(jong))
            )
        else:
            out.append(jamo[i])
            i += 1
    return "".join(out)


def _keys() -> str:
    return typed_in_english(_pick(HANGUL_WORDS)) + rng.choice(
        ["", _digits(2), _digits(4), "!", "1004"]
    )


def _ime() -> str:
    while True:
        v = typed_in_korean(
            rng.choice([_pick(THINGS), _pick(KO_NAMES) + _digits(2), _pick(SEEDS) + _digits(3)])
        )
        if sum("가" <= c <= "힣" for c in v) >= 3:
            return v


def _hpw() -> str:
    return _pick(HANGUL_WORDS) + rng.choice(["123", "!", _digits(2), _digits(4), "^^", "1004"])


# look-alike values
def _rrn() -> str:
    """A resident registration number as sites show it, the back half masked."""
    front = f"{rng.randrange(50, 100):02d}{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}"
    return rng.choice(
        [
            f"{front}-{rng.choice('12')}******",
            f"{front}-*******",
            f"{front}-{rng.choice('1234')}XXXXXX",
        ]
    )


def _acct() -> str:
    """A Korean bank account number given for a transfer."""
    return rng.choice(
        [
            f"110-{_digits(3)}-{_digits(6)}",
            f"{_digits(6)}-{_digits(2)}-{_digits(6)}",
            f"3333-{_digits(2)}-{_digits(7)}",
            f"1002-{_digits(3)}-{_digits(6)}",
            f"{_digits(3)}-{_digits(6)}-{_digits(5)}",
            f"352-{_digits(4)}-{_digits(4)}-{_digits(2)}",
        ]
    )


def _lotto() -> str:
    return " ".join(str(n) for n in sorted(rng.sample(range(1, 46), 6)))


GEN: dict[str, Callable[[], str]] = {
    "fam": _fam,
    "pw": _pw,
    "pwsym": _pwsym,
    "pwx": _pwx,
    "kidpw": _kidpw,
    "kpw": _kpw,
    "keys": _keys,
    "ime": _ime,
    "hpw": _hpw,
    "wifi": _wifi,
    "kwifi": _kwifi,
    "shop": _shop,
    "door": _door,
    "spaced": _spaced,
    "en4": lambda: _en(4),
    "en6": lambda: _en(6),
    "ko4": lambda: _ko(4),
    "ko6": lambda: _ko(6),
    "spell": _spell,
    "nato": _nato,
    "spellko": _spellko,
    "dial": _dial,
    "seed": lambda: _pick(SEEDS),
    "pet": lambda: _pick(PETS),
    "kid": lambda: _pick(KIDS),
    "surname": lambda: _pick(SURNAMES),
    "place": lambda: _pick(PLACES),
    "koname": lambda: _pick(KO_NAMES),
    "word": lambda: _pick(THINGS),
    "mmdd": _mmdd,
    "year": _year,
    "d1": lambda: _digits(1),
    "d2": lambda: _digits(2),
    "d3": lambda: _digits(3),
    "d4": lambda: _digits(4),
    "d5": lambda: _digits(5),
    "d6": lambda: _digits(6),
    "d7": lambda: _digits(7),
    "d8": lambda: _digits(8),
    "d9": lambda: _digits(9),
    "d10": lambda: _digits(10),
    "d11": lambda: _digits(11),
    "d12": lambda: _digits(12),
    "d13": lambda: _digits(13),
    "up2": lambda: "".join(rng.choice(string.ascii_uppercase) for _ in range(2)),
    "up3": lambda: "".join(rng.choice(string.ascii_uppercase) for _ in range(3)),
    "up6": lambda: "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(6)),
    "card4": lambda: _digits(4),
    "phone": lambda: f"010-{_digits(4)}-{_digits(4)}",
    "usphone": lambda: f"({rng.randrange(201, 989)}) {rng.randrange(200, 999)}-{_digits(4)}",
    "date": lambda: f"{rng.randrange(1, 13)}/{rng.randrange(1, 29)}",
    "kdate": lambda: f"{rng.randrange(1, 13)}월 {rng.randrange(1, 29)}일",
    "time": lambda: f"{rng.randrange(7, 12)}:{rng.choice(['00', '15', '30', '45'])}",
    "dong": lambda: str(rng.randrange(101, 116)),
    "ho": lambda: f"{rng.randrange(1, 25)}0{rng.randrange(1, 5)}",
    "rrn": _rrn,
    "acct": _acct,
    "lotto": _lotto,
    "ver": lambda: f"{rng.randrange(1, 9)}.{rng.randrange(0, 20)}.{rng.randrange(0, 10)}",
}

_SLOT = re.compile(r"\{(" + "|".join(sorted(GEN, key=len, reverse=True)) + r"|r\d+_\d+)\}")
_BRACKET = re.compile("⟦(.*?)⟧", re.DOTALL)
_PARTICLE = re.compile(r"\{~([가-힣]+)\}")

# particle: (after a final consonant, after a vowel); 으로 takes 로 after ㄹ as well
PARTICLES = {
    "이야": ("이야", "야"),
    "으로": ("으로", "로"),
    "이고": ("이고", "고"),
    "이에요": ("이에요", "예요"),
    "이요": ("이요", "요"),
    "이라": ("이라", "라"),
    "이래": ("이래", "래"),
    "이래요": ("이래요", "래요"),
    "이랑": ("이랑", "랑"),
    "이었나": ("이었나", "였나"),
    "이었어": ("이었어", "였어"),
    "이라고": ("이라고", "라고"),
    "이니까": ("이니까", "니까"),
    "이거든": ("이거든", "거든"),
    "이지": ("이지", "지"),
    "이면": ("이면", "면"),
    "은": ("은", "는"),
    "이": ("이", "가"),
    "을": ("을", "를"),
    "이네요": ("이네요", "네요"),
    "인데": ("인데", "인데"),
    "임": ("임", "임"),
}
# How a Korean reads the last character aloud: "" no final consonant, "ㄹ", or "other".
_DIGIT_FINAL = dict(
    zip("0123456789", ["other", "ㄹ", "", "other", "", "", "other", "ㄹ", "ㄹ", ""], strict=True)
)
_LETTER_FINAL = {"l": "ㄹ", "r": "ㄹ", "m": "other", "n": "other"}
_SYMBOL_FINAL = {"#": "other", "*": "ㄹ"}


def final_sound(ch: str) -> str:
    """The final consonant a Korean hears at the end of ``ch``: "", "ㄹ" or "other"."""
    code = ord(ch) - 0xAC00
    if 0 <= code < 11172:
        jong = _JONG[code % 28]
        return "" if not jong else "ㄹ" if jong == "ㄹ" else "other"
    if ch.isdigit():
        return _DIGIT_FINAL[ch]
    if ch.isascii() and ch.isalpha():
        return _LETTER_FINAL.get(ch.lower(), "")
    return _SYMBOL_FINAL.get(ch, "")


def _attach(text: str) -> str:
    """Each {~particle} written for the sound the word before it ends in."""

    def one(m: re.Match[str]) -> str:
        before = text[: m.start()].rstrip("⟧'\"」』”)")
        final = final_sound(before[-1]) if before else ""
        after_consonant, after_vowel = PARTICLES[m.group(1)]
        if m.group(1) == "으로" and final == "ㄹ":
            return "로"
        return after_consonant if final else after_vowel

    return _PARTICLE.sub(one, text)


def _slot(kind: str) -> str:
    """A fresh value of ``kind``; ``r3_9`` is a whole number from 3 to 9 (a size, a score)."""
    if re.fullmatch(r"r\d+_\d+", kind):
        lo, hi = map(int, kind[1:].split("_"))
        return str(rng.randint(lo, hi))
    return _fresh(GEN[kind])


def _fill(s: str) -> str:
    return _SLOT.sub(lambda m: _slot(m.group(1)), s)


def realize(sentence: str) -> tuple[str, list[str]]:
    """The sentence with its slots filled and particles attached, and the values in its brackets."""
    for _ in range(300):
        filled = _attach(_fill(sentence))
        values = _BRACKET.findall(filled)
        text = _BRACKET.sub(lambda m: m.group(1), filled)
        if all(text.count(v) == values.count(v) for v in values):
            return text, values
    raise RuntimeError(f"a value keeps colliding with its text: {sentence!r}")


def build(items: list[tuple[str, str]], lang: str, credential: bool) -> list[dict[str, object]]:
    """Rows for one module's sentences: a credential row has its values, a look-alike none."""
    rows: list[dict[str, object]] = []
    for form, sentence in items:
        text, values = realize(sentence)
        if credential:
            assert values, sentence
            rows.append({"text": text, "lang": lang, "values": values, "form": form})
        else:
            assert not values, sentence
            rows.append({"text": text, "lang": lang, "form": form})
    return rows


def check(creds: list[dict[str, object]], looks: list[dict[str, object]]) -> None:
    """Every value verbatim where placed and nowhere else, no text twice, no slot left unfilled."""
    texts = [str(r["text"]) for r in creds + looks]
    assert len(set(texts)) == len(texts), "duplicate texts"
    for text in texts:
        assert not re.search(r"\{~?\w+\}|⟦|⟧", text), text
    for row in creds:
        text, values = str(row["text"]), list(row["values"])  # type: ignore[call-overload]
        for v in values:
            assert v and text.count(v) == values.count(v), (v, text)


def write(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(path, "wb", mtime=0) as raw:
        raw.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))


def main(out: Path) -> None:
    import cred_en
    import cred_ko
    import look_en
    import look_ko

    creds = build(cred_en.ROWS, "en", True) + build(cred_ko.ROWS, "ko", True)
    looks = build(look_en.ROWS, "en", False) + build(look_ko.ROWS, "ko", False)
    check(creds, looks)
    write(out / "written3_credentials.jsonl.gz", creds)
    write(out / "written3_lookalikes.jsonl.gz", looks)
    for name, rows in (("credentials", creds), ("look-alikes", looks)):
        langs = {lang: sum(r["lang"] == lang for r in rows) for lang in ("en", "ko")}
        print(f"{name}: {len(rows)} rows, {langs}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
