"""Word classes the learned detector sees beside the words themselves. Pure data.

A context word is a feature of its own ("netflix", "예약번호"), so the model learns it only
where the training text used that very word. Its class is a second feature every word of the
class shares: a password given for a service no training row named ("the peacock account
takes ...") still follows an ``account`` word, and a number after a label no row used ("PNR
...", "등기번호 ...") still follows an ``id_label`` word. The classes are general knowledge
about how people name things, not fitted to any corpus; the weights of each class are learned.

- ``account``: things a person logs into or unlocks: services, devices, networks, systems.
- ``access``: verbs of getting in: typing, entering, unlocking, opening.
- ``id_label``: labels of identifiers and reference numbers that are not secrets.
- ``share``: verbs and nouns of handing something over: send, tell, share, 알려, 보내.
"""

from __future__ import annotations

from squad.text.secrets._values import word_set

__all__ = ["CLASSES", "word_class"]

_ACCOUNT = word_set(
    """
    account accounts acct login logins portal console dashboard admin administrator root
    superuser sudo user username profile vpn sso ldap ad wifi wi-fi wlan router modem
    hotspot ssid network laptop desktop pc computer mac macbook imac ipad iphone tablet phone
    android galaxy kindle tv smarttv roku firestick chromecast xbox playstation ps4 ps5 psn
    switch nintendo steam epic netflix hulu disney disney+ hbo max peacock paramount spotify
    youtube twitch prime amazon apple icloud itunes google gmail outlook hotmail yahoo office
    microsoft teams zoom slack discord whatsapp telegram signal facebook instagram twitter
    tiktok linkedin reddit github gitlab bitbucket jira confluence notion figma canva dropbox
    box onedrive drive sharepoint salesforce hubspot zendesk shopify stripe paypal venmo
    bank banking card atm crm erp pos kiosk server database db postgres mysql redis mongo
    jenkins grafana kibana vault safe locker lockbox padlock door gate garage alarm keypad
    intercom camera nas synology printer email mail inbox wallet metamask ledger exchange
    coinbase binance upbit bithumb
    계정 아이디 로그인 포털 관리자 와이파이 공유기 노트북 컴퓨터 태블릿 아이패드 핸드폰
    휴대폰 폰 티비 넷플릭스 유튜브 디즈니 왓챠 티빙 웨이브 쿠팡 쿠팡플레이 멜론 지니 카톡
    카카오톡 카카오 네이버 다음 구글 지메일 인스타 페북 토스 뱅킹 은행 인터넷뱅킹 카드
    공인인증서 인증서 서버 디비 데이터베이스 그룹웨어 사내망 메신저 금고 사물함 락커
    도어락 현관 공동현관 대문 차고 택배함 보관함 자물쇠 자전거 지갑 거래소 업비트 빗썸
    메일 이메일 홈페이지 사이트 앱 어플
    """
)
_ACCESS = word_set(
    """
    type typed typing enter entered entering punch punched key keyed input unlock unlocks
    unlocked unlocking open opens opened opening log logged logging sign signed get gets
    into in use uses used using try tried works worked accept accepts accepted takes took
    입력 입력해 입력하면 입력하세요 누르 누르면 눌러 열려 열려요 열어 열면 열리 들어가
    들어가요 들어가면 접속 로그인해 치면 쳐 쳐요 넣고 넣으면 써 써요 쓰면 풀려 풀어
    """
)
_ID_LABEL = word_set(
    """
    order invoice receipt ticket tracking shipment parcel package waybill reference ref
    booking reservation confirmation pnr itinerary flight seat gate-number room suite unit
    case claim policy member membership customer client-id tenant subscription plan sku
    model serial asset tag part catalog isbn issue bug pr build job run commit revision
    version release sprint error errno exit status http zip postal postcode extension ext
    fax phone tel mobile cell employee staff student badge id no number num iban swift
    routing sort-code account-number vat tax ein ssn-last last ending last4
    주문 주문번호 송장 송장번호 운송장 등기 등기번호 예약 예약번호 접수번호 티켓 사번
    학번 회원번호 고객번호 관리번호 자산번호 시리얼 일련번호 모델 모델명 품번 버전 빌드
    에러 오류 코드번호 우편번호 내선 호실 호수 좌석 게이트 계좌 계좌번호 사업자 사업자번호
    전화 전화번호 번호표 대기번호 차량 차량번호 끝자리 뒷자리 뒤4자리 마지막
    """
)
_SHARE = word_set(
    """
    send sent sending tell told telling share shared sharing give gave giving here here's
    heres use remember note save saved paste pasted dm dmed text texted
    알려 알려줘 알려줄게 알려드릴게 알려드려요 보내 보내줘 보낼게 보내드려요 보내드릴게
    공유 공유해 공유할게 적어 적어둘게 메모 기억해 저장 저장해 여기 이거 이걸로
    """
)

CLASSES: dict[str, frozenset[str]] = {
    "account": _ACCOUNT,
    "access": _ACCESS,
    "id_label": _ID_LABEL,
    "share": _SHARE,
}


_CLASS_OF: dict[str, str] = {}
for _name, _words in reversed(CLASSES.items()):  # the first class listing a word wins
    _CLASS_OF.update(dict.fromkeys(_words, _name))


def word_class(word: str) -> str | None:
    """The class of a normalised context word, or None (the first class listing it wins)."""
    return _CLASS_OF.get(word)
