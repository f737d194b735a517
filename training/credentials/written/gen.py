"""Fill hand-written sentences with fresh random values and write the two row files.

A sentence marks each secret with ⟦...⟧; inside or outside the brackets, {kind} is replaced by
a fresh random value of that kind. What ends up inside brackets is a row's value.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SEED = 20260603
rng = random.Random(SEED)
USED: set[str] = set()

WORDS = [
    "acorn",
    "anchor",
    "apricot",
    "arrow",
    "aspen",
    "badger",
    "bagel",
    "banjo",
    "barley",
    "basil",
    "beacon",
    "beetle",
    "biscuit",
    "blossom",
    "bramble",
    "breeze",
    "brook",
    "bubble",
    "buckle",
    "bumble",
    "burrow",
    "cabin",
    "camel",
    "candle",
    "canoe",
    "caramel",
    "cedar",
    "cherry",
    "chestnut",
    "cinder",
    "clover",
    "cobble",
    "coconut",
    "cocoa",
    "compass",
    "coral",
    "cosmo",
    "cricket",
    "crumpet",
    "cypress",
    "daisy",
    "dingo",
    "dolphin",
    "domino",
    "donut",
    "dusky",
    "ember",
    "emerald",
    "falcon",
    "fennel",
    "ferret",
    "fig",
    "firefly",
    "fjord",
    "flint",
    "fossil",
    "foxglove",
    "freckle",
    "gadget",
    "galaxy",
    "garnet",
    "gecko",
    "ginger",
    "glacier",
    "goblin",
    "gopher",
    "granite",
    "gravel",
    "grizzly",
    "guava",
    "hamster",
    "harbor",
    "hazel",
    "hedgehog",
    "heron",
    "hickory",
    "honey",
    "hopper",
    "husky",
    "igloo",
    "indigo",
    "iris",
    "ivory",
    "jackal",
    "jasmine",
    "jelly",
    "juniper",
    "kayak",
    "kettle",
    "kiwi",
    "koala",
    "lagoon",
    "lantern",
    "larch",
    "lava",
    "lemur",
    "lilac",
    "lobster",
    "lotus",
    "lynx",
    "magpie",
    "mango",
    "maple",
    "marmot",
    "meadow",
    "melon",
    "merlin",
    "mint",
    "mocha",
    "molten",
    "mongoose",
    "moose",
    "mosaic",
    "muffin",
    "mustang",
    "nectar",
    "nimbus",
    "nutmeg",
    "oak",
    "olive",
    "onyx",
    "orchid",
    "osprey",
    "otter",
    "oyster",
    "paddle",
    "pebble",
    "pelican",
    "peony",
    "pepper",
    "pickle",
    "pinecone",
    "pistachio",
    "plum",
    "polar",
    "pony",
    "poppy",
    "puffin",
    "pumpkin",
    "quail",
    "quartz",
    "quince",
    "rabbit",
    "radish",
    "raven",
    "reindeer",
    "ripple",
    "robin",
    "rocket",
    "saffron",
    "salmon",
    "sapphire",
    "sequoia",
    "shamrock",
    "sherpa",
    "sparrow",
    "spruce",
    "squid",
    "starling",
    "sprocket",
    "sundae",
    "swallow",
    "tadpole",
    "tamarind",
    "thistle",
    "thimble",
    "tinsel",
    "toffee",
    "topaz",
    "toucan",
    "truffle",
    "tulip",
    "tundra",
    "turnip",
    "velvet",
    "vulture",
    "walnut",
    "wasabi",
    "weasel",
    "whisker",
    "willow",
    "wombat",
    "yonder",
    "yucca",
    "zephyr",
    "zinnia",
    "bonfire",
    "cactus",
    "caboose",
    "dynamo",
    "eclipse",
    "fiddle",
    "gazebo",
    "harpoon",
    "jigsaw",
    "kazoo",
    "lollipop",
    "marzipan",
    "noodle",
    "origami",
    "pretzel",
    "quokka",
    "rhubarb",
    "scooter",
    "teapot",
    "ukulele",
    "waffle",
    "yodel",
]

SEED_WORDS = [
    "abandon",
    "bridge",
    "cotton",
    "desert",
    "elbow",
    "fabric",
    "gallery",
    "hybrid",
    "inmate",
    "jungle",
    "kitchen",
    "ladder",
    "mammal",
    "napkin",
    "oblige",
    "pact",
    "quantum",
    "rally",
    "saddle",
    "tackle",
    "umbrella",
    "vacuum",
    "wagon",
    "yard",
    "zone",
    "absorb",
    "bronze",
    "coyote",
    "denial",
    "engine",
    "famous",
    "genius",
    "hollow",
    "impulse",
    "jealous",
    "kidney",
    "lumber",
    "mandate",
    "nominee",
    "orbit",
    "palace",
    "quiz",
    "rescue",
    "scatter",
    "tenant",
    "uncover",
    "vessel",
    "wealth",
    "yellow",
    "zero",
    "abstract",
    "brush",
    "cousin",
    "depart",
    "envelope",
    "fault",
    "gesture",
    "horror",
    "inhale",
    "jazz",
    "kingdom",
    "lunar",
    "margin",
    "novel",
    "odor",
    "pattern",
    "quote",
    "reveal",
    "sausage",
    "timber",
    "unfold",
    "venue",
    "wisdom",
    "youth",
    "crater",
    "dwarf",
    "exhaust",
    "figure",
    "glimpse",
    "hurdle",
    "inquiry",
    "journey",
    "keen",
    "laundry",
    "maximum",
    "neglect",
    "outdoor",
    "pepper",
    "radar",
    "shrug",
    "thrive",
    "unveil",
    "vintage",
    "witness",
]

NAMES = [
    "Rover",
    "Biscuit",
    "Mochi",
    "Nala",
    "Bella",
    "Coco",
    "Luna",
    "Max",
    "Charlie",
    "Daisy",
    "Toby",
    "Hana",
    "Dubu",
    "Bori",
    "Kkami",
    "Choco",
    "Moka",
    "Jjangu",
    "Nabi",
    "Bomi",
    "Yuki",
    "Simba",
    "Oreo",
    "Pepper",
    "Ruby",
    "Teddy",
    "Ziggy",
    "Otis",
    "Milo",
    "Juno",
]

HANGUL = [
    "고양이",
    "강아지",
    "하늘",
    "바다",
    "별빛",
    "나무",
    "노을",
    "구름",
    "바람",
    "호수",
    "달빛",
    "봄날",
    "여름",
    "가을",
    "겨울",
    "토끼",
    "무지개",
    "햇살",
    "소나무",
    "민들레",
    "해바라기",
    "은하수",
    "꽃잎",
    "눈사람",
    "도토리",
    "다람쥐",
    "코끼리",
    "호랑이",
    "사자",
    "펭귄",
    "여우",
    "부엉이",
    "감자",
    "고구마",
    "떡볶이",
    "김밥",
    "만두",
    "라면",
    "딸기",
    "수박",
    "참외",
    "복숭아",
    "자두",
    "귤",
    "사과",
    "포도",
    "바나나",
]


def _fresh(make) -> str:
    for _ in range(500):
        value = make()
        if value not in USED:
            USED.add(value)
            return value
    raise RuntimeError("ran out of fresh values")


def _take(pool: list[str]) -> str:
    left = [w for w in pool if w not in USED]
    return rng.choice(left)


def _digits(n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _pw() -> str:
    style = rng.randrange(9)
    w = _take(WORDS)
    if style == 0:
        return w.capitalize() + str(rng.randrange(10, 9999)) + rng.choice("!@#$%&*?")
    if style == 1:
        return w.translate(str.maketrans("aeios", "4310$")) + rng.choice(["", "!", "#", "77", "99"])
    if style == 2:
        return _pws()
    if style == 3:
        joint = rng.choice(["_", ".", "-", ""])
        return f"{w.capitalize()}{joint}{_take(WORDS).capitalize()}{rng.randrange(1, 99)}"
    if style == 4:
        return w + str(rng.randrange(1, 999))
    if style == 5:
        return rng.choice(NAMES) + str(
            rng.choice([rng.randrange(1975, 2024), rng.randrange(10, 99)])
        )
    if style == 6:
        return "".join(c.upper() if rng.random() < 0.3 else c for c in w) + _digits(
            rng.randrange(2, 5)
        )
    if style == 7:
        return (
            rng.choice(["I", "i", "We"])
            + rng.choice(["love", "Love", "<3", "miss"])
            + w.capitalize()
            + rng.choice(["!", "!!", "1", "22"])
        )
    return w[:4] + rng.choice("!@#$") + _take(WORDS)[:4] + _digits(2)


def _pws() -> str:
    chars = string.ascii_letters + string.digits + "!@#$%^&*"
    while True:
        v = "".join(rng.choice(chars) for _ in range(rng.randrange(12, 19)))
        if any(c.isdigit() for c in v) and any(c.isupper() for c in v):
            return v


def _pwl() -> str:
    return _take(WORDS) + _digits(rng.randrange(2, 5))


def _pwc() -> str:
    return _take(WORDS).capitalize() + _digits(rng.randrange(2, 5)) + rng.choice("!@#$%&*?")


def _pwp() -> str:
    sep = rng.choice(["-", ".", "_", " "])
    words = rng.sample([w for w in WORDS if w not in USED], rng.randrange(3, 5))
    return sep.join(words) + (sep + str(rng.randrange(1, 99)) if rng.random() < 0.5 else "")


def _pwu() -> str:
    """A password as it sits in a URL: odd characters, some percent-encoded."""
    w = _take(WORDS)
    style = rng.randrange(5)
    if style == 0:
        return w.capitalize() + "%40" + _digits(3) + "%21"
    if style == 1:
        return w + "!" + _digits(2) + "~" + _take(WORDS)[:3]
    if style == 2:
        return w.upper()[:4] + "%23" + w[4:] + _digits(2) + "%24"
    if style == 3:
        return w + "(" + _digits(2) + ")" + rng.choice("*!")
    return w.capitalize() + "%2F" + _digits(4) + "%3D"


def _hpw() -> str:
    return (
        rng.choice(HANGUL)
        + rng.choice(HANGUL)
        + rng.choice(
            ["", "123", "7", str(rng.randrange(1980, 2024)), "!", "^^", str(rng.randrange(10, 99))]
        )
    )


# two-set (dubeolsik) keyboard: jamo <-> key
_CHO = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
_JUNG = "ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ"
_JONG = [
    "",
    "ㄱ",
    "ㄲ",
    "ㄳ",
    "ㄴ",
    "ㄵ",
    "ㄶ",
    "ㄷ",
    "ㄹ",
    "ㄺ",
    "ㄻ",
    "ㄼ",
    "ㄽ",
    "ㄾ",
    "ㄿ",
    "ㅀ",
    "ㅁ",
    "ㅂ",
    "ㅄ",
    "ㅅ",
    "ㅆ",
    "ㅇ",
    "ㅈ",
    "ㅊ",
    "ㅋ",
    "ㅌ",
    "ㅍ",
    "ㅎ",
]
_KEY = dict(
    zip(
        "ㅂㅈㄷㄱㅅㅛㅕㅑㅐㅔㅁㄴㅇㄹㅎㅗㅓㅏㅣㅋㅌㅊㅍㅠㅜㅡ",
        "qwertyuiopasdfghjklzxcvbnm",
        strict=True,
    )
)
_KEY.update({"ㅃ": "Q", "ㅉ": "W", "ㄸ": "E", "ㄲ": "R", "ㅆ": "T", "ㅒ": "O", "ㅖ": "P"})
_SPLIT = {
    "ㅘ": "ㅗㅏ",
    "ㅙ": "ㅗㅐ",
    "ㅚ": "ㅗㅣ",
    "ㅝ": "ㅜㅓ",
    "ㅞ": "ㅜㅔ",
    "ㅟ": "ㅜㅣ",
    "ㅢ": "ㅡㅣ",
    "ㄳ": "ㄱㅅ",
    "ㄵ": "ㄴㅈ",
    "ㄶ": "ㄴㅎ",
    "ㄺ": "ㄹㄱ",
    "ㄻ": "ㄹㅁ",
    "ㄼ": "ㄹㅂ",
    "ㄽ": "ㄹㅅ",
    "ㄾ": "ㄹㅌ",
    "ㄿ": "ㄹㅍ",
    "ㅀ": "ㄹㅎ",
    "ㅄ": "ㅂㅅ",
}
_JOIN = {v: k for k, v in _SPLIT.items()}
_LETTER = {v: k for k, v in _KEY.items()}


def hangul_keys(word: str) -> str:
    """What a Hangul word becomes when typed with the keyboard left in English."""
    out = []
    for ch in word:
        code = ord(ch) - 0xAC00
        if 0 <= code < 11172:
            parts = [_CHO[code // 588], _JUNG[(code % 588) // 28], _JONG[code % 28]]
        else:
            parts = [ch]
        for p in parts:
            for j in _SPLIT.get(p, p):
                out.append(_KEY.get(j, j))
    return "".join(out)


def korean_ime(text: str) -> str:
    """What an ASCII password becomes when typed with the keyboard left in Korean."""
    jamo = [_LETTER.get(c, _LETTER.get(c.lower(), c)) for c in text]
    out: list[str] = []
    i = 0
    vowels = set(_JUNG)
    cons = set(_CHO) | {j for j in _JONG if j}

    def is_v(x: str) -> bool:
        return x in vowels

    while i < len(jamo):
        c = jamo[i]
        if c in _CHO and i + 1 < len(jamo) and is_v(jamo[i + 1]):
            cho = c
            v = jamo[i + 1]
            i += 2
            if i < len(jamo) and is_v(jamo[i]) and v + jamo[i] in _JOIN:
                v = _JOIN[v + jamo[i]]
                i += 1
            jong = ""
            if (
                i < len(jamo)
                and jamo[i] in cons
                and jamo[i] in _JONG
                and not (i + 1 < len(jamo) and is_v(jamo[i + 1]))
            ):
                jong = jamo[i]
                i += 1
                if (
                    i < len(jamo)
                    and jong + jamo[i] in _JOIN
                    and not (i + 1 < len(jamo) and is_v(jamo[i + 1]))
                ):
                    jong = _JOIN[jong + jamo[i]]
                    i += 1
            out.append(
                chr(0xAC00 + _CHO.index(cho) * 588 + _JUNG.index(v) * 28 + _JONG.index(jong))
            )
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _kbd() -> str:
    return hangul_keys(rng.choice(HANGUL) + rng.choice(HANGUL)) + rng.choice(
        ["", _digits(2), _digits(4), "!"]
    )


def _ime() -> str:
    while True:
        base = rng.choice(
            [_take(WORDS), _take(WORDS) + _digits(2), rng.choice(NAMES).lower() + _digits(4)]
        )
        v = korean_ime(base)
        if sum("\u3131" <= c <= "\ud7a3" for c in v) >= 3:
            return v


_EN = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_KO = ["공", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구"]


def _en_words(n: int) -> str:
    ds = _digits(n)
    words = [("oh" if d == "0" and rng.random() < 0.4 else _EN[int(d)]) for d in ds]
    return rng.choice([" ", " ", "-", ", "]).join(words)


def _ko_words(n: int) -> str:
    ds = _digits(n)
    words = [("영" if d == "0" and rng.random() < 0.3 else _KO[int(d)]) for d in ds]
    return rng.choice([" ", " ", "", "-"]).join(words)


def _sep() -> str:
    return rng.choice(["-", " ", ".", "-"]).join(_digits(rng.choice([4, 4, 5, 6])))


def _keypad() -> str:
    d = _digits(rng.randrange(4, 7))
    return rng.choice([f"#{d}*", f"*{d}#", f"{d}#", f"#{d}", f"*{d}*", f"{d}*"])


def _app() -> str:
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(4)) for _ in range(4))


def _rc() -> str:
    style = rng.randrange(3)
    if style == 0:
        return _digits(4) + "-" + _digits(4)
    if style == 1:
        a = string.ascii_lowercase + string.digits
        return (
            "".join(rng.choice(a) for _ in range(4))
            + "-"
            + "".join(rng.choice(a) for _ in range(4))
        )
    return _digits(8)


def _rcu() -> str:
    a = string.ascii_uppercase + string.digits
    return "-".join("".join(rng.choice(a) for _ in range(5)) for _ in range(2))


def _b62(n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def _hex(n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _uuid() -> str:
    return "-".join(_hex(k) for k in (8, 4, 4, 4, 12))


def _up(n: int) -> str:
    return "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(n))


def _dial() -> str:
    a, b, c = (rng.randrange(1, 100) for _ in range(3))
    return rng.choice([f"{a}-{b}-{c}", f"R{a} L{b} R{c}", f"{a}/{b}/{c}", f"{a} {b} {c}"])


GEN = {
    "pw": _pw,
    "pws": _pws,
    "pwl": _pwl,
    "pwc": _pwc,
    "pwp": _pwp,
    "pwu": _pwu,
    "hpw": _hpw,
    "kbd": _kbd,
    "ime": _ime,
    "word": lambda: _take(WORDS),
    "seed": lambda: _take(SEED_WORDS),
    "pet": lambda: rng.choice(NAMES),
    "year": lambda: str(rng.randrange(1978, 2024)),
    "d2": lambda: _digits(2),
    "d3": lambda: _digits(3),
    "d4": lambda: _digits(4),
    "d5": lambda: _digits(5),
    "d6": lambda: _digits(6),
    "d7": lambda: _digits(7),
    "d8": lambda: _digits(8),
    "d10": lambda: _digits(10),
    "d12": lambda: _digits(12),
    "n2": lambda: str(rng.randrange(2, 100)),
    "en3": lambda: _en_words(3),
    "en4": lambda: _en_words(4),
    "en6": lambda: _en_words(6),
    "ko4": lambda: _ko_words(4),
    "ko6": lambda: _ko_words(6),
    "sep": _sep,
    "keypad": _keypad,
    "app": _app,
    "rc": _rc,
    "rcu": _rcu,
    "dial": _dial,
    "b8": lambda: _b62(8),
    "b12": lambda: _b62(12),
    "b16": lambda: _b62(16),
    "b20": lambda: _b62(20),
    "b24": lambda: _b62(24),
    "b32": lambda: _b62(32),
    "b40": lambda: _b62(40),
    "hex7": lambda: _hex(7),
    "hex8": lambda: _hex(8),
    "hex12": lambda: _hex(12),
    "hex16": lambda: _hex(16),
    "hex32": lambda: _hex(32),
    "hex40": lambda: _hex(40),
    "uuid": _uuid,
    "up4": lambda: _up(4),
    "up6": lambda: _up(6),
    "up8": lambda: _up(8),
    "up10": lambda: _up(10),
    "phone": lambda: f"010-{_digits(4)}-{_digits(4)}",
    "usphone": lambda: f"({rng.randrange(201, 989)}) {rng.randrange(200, 999)}-{_digits(4)}",
    "zip": lambda: _digits(5),
    "date": lambda: f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}",
    "time": lambda: f"{rng.randrange(7, 23)}:{rng.choice(['00', '15', '30', '45'])}",
    "ver": lambda: f"{rng.randrange(0, 9)}.{rng.randrange(0, 30)}.{rng.randrange(0, 12)}",
    "price": lambda: f"{rng.randrange(3, 500)}.{rng.choice(['00', '99', '50', '49'])}",
    "won": lambda: f"{rng.randrange(3, 990)},{rng.choice(['000', '500', '900'])}",
    "card4": lambda: _digits(4),
    "aws": lambda: _digits(12),
    "ip": lambda: f"10.{rng.randrange(0, 255)}.{rng.randrange(0, 255)}.{rng.randrange(1, 255)}",
}

_SLOT = re.compile(r"\{(" + "|".join(sorted(GEN, key=len, reverse=True)) + r")\}")
_BRACKET = re.compile("⟦(.*?)⟧", re.DOTALL)


def _fill(s: str) -> str:
    return _SLOT.sub(lambda m: _fresh(GEN[m.group(1)]), s)


def realize(sentence: str) -> tuple[str, list[str]]:
    """The sentence with its slots filled, and the values inside its brackets."""
    for _ in range(200):
        filled = _fill(sentence)
        values = _BRACKET.findall(filled)
        text = _BRACKET.sub(lambda m: m.group(1), filled)
        if all(text.count(v) == values.count(v) for v in values):
            return text, values
    raise RuntimeError(f"value collides with its text: {sentence!r}")


def build(items: list[tuple[str, str]], lang: str, credential: bool) -> list[dict]:
    rows = []
    for form, sentence in items:
        text, values = realize(sentence)
        if credential:
            assert values, sentence
            rows.append({"text": text, "lang": lang, "values": values, "form": form})
        else:
            assert not values, sentence
            rows.append({"text": text, "lang": lang, "form": form})
    return rows


def write(path: Path, rows: list[dict]) -> None:
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
    write(out / "written_credentials.jsonl.gz", creds)
    write(out / "written_lookalikes.jsonl.gz", looks)
    print(len(creds), len(looks))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
