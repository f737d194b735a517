"""Realistic text with and without credentials, for :mod:`squad.text.secrets`.

``POSITIVES`` are ``(kind, text)`` pairs where each credential value is wrapped in ⟦ ⟧: the
test strips the brackets, then expects exactly those spans to be found with that kind and
replaced by ``[REDACTED:<kind>]``, everything else untouched. ``NEGATIVES`` must yield nothing.
``FOLLOWUPS`` and ``FOLLOWUP_NEGATIVES`` are the same for a message read after the messages
before it (``previous``): "what's the db password?" / "hunter2x".

The cases after "as people write them in chat" are credentials as they are pasted into a chat
or a note, not as a provider prints them: cut short, spaced out, in prose, in both languages.

Every credential here is fake and assembled at import time from a seeded generator, so this
file holds no token-shaped literal for secret scanners (GitHub push protection, CI) to trip on.
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20261129)
B62 = string.ascii_letters + string.digits
URLSAFE = B62 + "-_"
B64 = B62 + "+/"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits


def _classes(chars: str) -> int:
    return sum(any(test(c) for c in chars) for test in (str.islower, str.isupper, str.isdigit))


def fake(alphabet: str, length: int) -> str:
    """Random characters, mixing character classes the way real tokens do."""
    while True:
        out = "".join(_rng.choice(alphabet) for _ in range(length))
        if _classes(out) >= min(2, _classes(alphabet)):
            return out


def digits(length: int) -> str:
    return str(_rng.randrange(10 ** (length - 1), 10**length))


def uuid4() -> str:
    return f"{fake(HEX, 8)}-{fake(HEX, 4)}-4{fake(HEX, 3)}-a{fake(HEX, 3)}-{fake(HEX, 12)}"


def b64url(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# -- fake credentials, one per shape ---------------------------------------------------------

OPENAI_LEGACY = "sk-" + fake(B62, 48)
OPENAI_PROJ = "sk-" + "proj-" + fake(URLSAFE, 120)
OPENAI_SVC = "sk-" + "svcacct-" + fake(URLSAFE, 90)
ANTHROPIC = "sk-" + "ant-api03-" + fake(URLSAFE, 93) + "AA"
AWS_ID = "AK" + "IA" + fake(UPPER_DIGITS, 16)
AWS_STS_ID = "AS" + "IA" + fake(UPPER_DIGITS, 16)
AWS_SECRET = fake(B64, 40)
GH_PAT_CLASSIC = "gh" + "p_" + fake(B62, 36)
GH_OAUTH = "gh" + "o_" + fake(B62, 36)
GH_USER = "gh" + "u_" + fake(B62, 36)
GH_APP = "gh" + "s_" + fake(B62, 36)
GH_REFRESH = "gh" + "r_" + fake(B62, 76)
GH_FINE = "github" + "_pat_" + fake(B62, 22) + "_" + fake(B62, 59)
GITLAB = "gl" + "pat-" + fake(URLSAFE, 20)
SLACK_BOT = "xo" + "xb-" + digits(12) + "-" + digits(13) + "-" + fake(B62, 24)
SLACK_USER = "xo" + "xp-" + digits(12) + "-" + digits(12) + "-" + digits(13) + "-" + fake(HEX, 32)
SLACK_APP_OLD = "xo" + "xa-2-" + digits(12) + "-" + fake(B62, 24)
SLACK_APP = "xa" + "pp-1-A" + fake(UPPER_DIGITS, 10) + "-" + digits(13) + "-" + fake(HEX, 64)
SLACK_HOOK = "T" + fake(UPPER_DIGITS, 8) + "/B" + fake(UPPER_DIGITS, 10) + "/" + fake(B62, 24)
STRIPE_LIVE = "sk" + "_live_" + fake(B62, 99)
STRIPE_TEST = "sk" + "_test_" + fake(B62, 24)
STRIPE_RESTRICTED = "rk" + "_live_" + fake(B62, 24)
STRIPE_WHSEC = "wh" + "sec_" + fake(B62, 32)
GOOGLE_KEY = "AI" + "za" + fake(B62, 35)
GOOGLE_OAUTH = "ya" + "29." + fake(URLSAFE, 150)
HF = "hf" + "_" + fake(string.ascii_letters, 34)
NPM = "np" + "m_" + fake(B62, 36)
PYPI = "py" + "pi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 150)
TEST_PYPI = "py" + "pi-AgENdGVzdC5weXBpLm9yZw" + fake(URLSAFE, 120)
SENDGRID = "SG" + "." + fake(URLSAFE, 22) + "." + fake(URLSAFE, 43)
TWILIO_KEY = "S" + "K" + fake(HEX, 32)
TWILIO_SID = "A" + "C" + fake(HEX, 32)
TWILIO_AUTH = fake(HEX, 32)
AZURE_KEY = fake(B64, 86) + "=="
AZURE_SIG = fake(B62, 30) + "%2B" + fake(B62, 8) + "%3D"
TELEGRAM = digits(10) + ":" + "AA" + fake(URLSAFE, 33)
DISCORD = "MT" + fake(B62, 24) + "." + fake(URLSAFE, 6) + "." + fake(URLSAFE, 38)
JWT = ".".join(
    [
        b64url({"alg": "HS256", "typ": "JWT"}),
        b64url({"sub": "agent-7", "iat": 1764417600, "scope": "memory:write"}),
        fake(URLSAFE, 43),
    ]
)
OPAQUE = fake(B62, 40)
BASIC = base64.b64encode(("deploy:" + fake(B62, 18)).encode()).decode()
HEX32 = fake(HEX, 32)
RANDOM40 = fake(B62, 40)
GOOGLE_CLIENT_SECRET = "GOC" + "SPX-" + fake(URLSAFE, 28)
DJANGO_SECRET = "django-insecure-" + fake(B62 + "!@#%^&*(-_=+)", 50).replace("'", "")
PEM_BODY = "\n".join(fake(B64, 64) for _ in range(4)) + "\n" + fake(B64, 20) + "=="


def pem(label: str, body: str = PEM_BODY, headers: str = "") -> str:
    return f"-----BEGIN {label}-----\n{headers}{body}\n-----END {label}-----"


RSA_KEY = pem("RSA PRIVATE KEY")
EC_KEY = pem("EC PRIVATE KEY")
OPENSSH_KEY = pem("OPENSSH PRIVATE KEY")
PKCS8_KEY = pem("PRIVATE KEY")
ENCRYPTED_KEY = pem("ENCRYPTED PRIVATE KEY")
PGP_KEY = pem("PGP PRIVATE KEY BLOCK", headers="Version: GnuPG v2\n\n")
LEGACY_ENCRYPTED_RSA = pem(
    "RSA PRIVATE KEY", headers="Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,8A9F0C1D2E3B4A5C\n"
)
JSON_ESCAPED_KEY = pem("PRIVATE KEY").replace("\n", "\\n")
TRUNCATED_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + fake(B64, 70) + "\n" + fake(B64, 70)

# Standalone token-shaped credentials: what the property test embeds in random text.
TOKENS: list[tuple[str, str]] = [
    ("openai_api_key", OPENAI_LEGACY),
    ("openai_api_key", OPENAI_PROJ),
    ("openai_api_key", OPENAI_SVC),
    ("anthropic_api_key", ANTHROPIC),
    ("aws_access_key_id", AWS_ID),
    ("github_token", GH_PAT_CLASSIC),
    ("github_token", GH_FINE),
    ("gitlab_token", GITLAB),
    ("slack_token", SLACK_BOT),
    ("slack_token", SLACK_APP),
    ("stripe_secret_key", STRIPE_LIVE),
    ("stripe_webhook_secret", STRIPE_WHSEC),
    ("google_api_key", GOOGLE_KEY),
    ("google_oauth_token", GOOGLE_OAUTH),
    ("huggingface_token", HF),
    ("npm_token", NPM),
    ("pypi_token", PYPI),
    ("sendgrid_api_key", SENDGRID),
    ("twilio_api_key", TWILIO_KEY),
    ("telegram_bot_token", TELEGRAM),
    ("discord_bot_token", DISCORD),
    ("jwt", JWT),
    ("private_key", RSA_KEY),
    ("private_key", OPENSSH_KEY),
]


def _p(kind: str, text: str) -> tuple[str, str]:
    return kind, text


POSITIVES: list[tuple[str, str]] = [
    # OpenAI
    _p("openai_api_key", f"OPENAI_API_KEY=⟦{OPENAI_PROJ}⟧\nOPENAI_ORG=org-acme\n"),
    _p("openai_api_key", f'export OPENAI_API_KEY="⟦{OPENAI_LEGACY}⟧"'),
    # a body may end in '_' or '-' (URL-safe base64): a long token keeps its last character
    _p("openai_api_key", "it leaked ⟦sk-proj-" + fake(URLSAFE, 38) + "_⟧"),
    _p("github_token", "push with ⟦ghp_" + fake(B62, 35) + "-⟧ please"),
    _p("openai_api_key", f"The eval runner used key ⟦{OPENAI_SVC}⟧ until Friday."),
    _p("openai_api_key", f'client = OpenAI(api_key="⟦{OPENAI_PROJ}⟧")'),
    _p("openai_api_key", f'{{"provider": "openai", "api_key": "⟦{OPENAI_LEGACY}⟧"}}'),
    _p(
        "openai_api_key",
        f"curl https://api.openai.com/v1/models -H 'Authorization: Bearer ⟦{OPENAI_PROJ}⟧'",
    ),
    # Anthropic
    _p("anthropic_api_key", f"ANTHROPIC_API_KEY=⟦{ANTHROPIC}⟧"),
    _p("anthropic_api_key", f"llm:\n  provider: anthropic\n  api_key: ⟦{ANTHROPIC}⟧\n"),
    _p(
        "anthropic_api_key",
        f'curl https://api.anthropic.com/v1/messages -H "x-api-key: ⟦{ANTHROPIC}⟧"',
    ),
    # AWS
    _p("aws_access_key_id", f"[default]\naws_access_key_id = ⟦{AWS_ID}⟧\nregion = eu-west-1\n"),
    _p("aws_access_key_id", f"The CI user is ⟦{AWS_ID}⟧ (rotated in March)."),
    _p(
        "aws_access_key_id",
        f'{{"AccessKeyId": "⟦{AWS_STS_ID}⟧", "Expiration": "2026-11-29T13:00:00Z"}}',
    ),
    _p("aws_secret_access_key", f"aws_secret_access_key = ⟦{AWS_SECRET}⟧\n"),
    _p("aws_secret_access_key", f"export AWS_SECRET_ACCESS_KEY=⟦{AWS_SECRET}⟧"),
    _p("aws_secret_access_key", f'{{"SecretAccessKey": "⟦{AWS_SECRET}⟧", "SessionToken": null}}'),
    _p("aws_secret_access_key", f"AWS_SECRET: '⟦{AWS_SECRET}⟧'"),
    # GitHub
    _p("github_token", f"GITHUB_TOKEN=⟦{GH_PAT_CLASSIC}⟧"),
    _p("github_token", f"git clone https://x-access-token:⟦{GH_APP}⟧@github.com/acme/api.git"),
    _p("github_token", f"curl -H 'Authorization: token ⟦{GH_OAUTH}⟧' https://api.github.com/user"),
    _p("github_token", f"The release bot uses ⟦{GH_FINE}⟧ with contents:write."),
    _p("github_token", f"user token ⟦{GH_USER}⟧, refresh ⟦{GH_REFRESH}⟧"),
    _p("github_token", f"    token: ⟦{GH_PAT_CLASSIC}⟧  # expires in 30 days\n"),
    # GitLab
    _p("gitlab_token", f"GITLAB_TOKEN=⟦{GITLAB}⟧"),
    _p(
        "gitlab_token",
        f'curl --header "PRIVATE-TOKEN: ⟦{GITLAB}⟧" https://gitlab.example.com/api/v4/projects',
    ),
    _p("gitlab_token", f"Deploy with ⟦{GITLAB}⟧ for now."),
    # Slack
    _p("slack_token", f"SLACK_BOT_TOKEN=⟦{SLACK_BOT}⟧"),
    _p("slack_token", f"slack:\n  user_token: ⟦{SLACK_USER}⟧\n  app_token: ⟦{SLACK_APP}⟧\n"),
    _p("slack_token", f"legacy workspace token ⟦{SLACK_APP_OLD}⟧"),
    _p(
        "slack_token",
        f'curl -H "Authorization: Bearer ⟦{SLACK_BOT}⟧" https://slack.com/api/auth.test',
    ),
    _p("slack_webhook", f"ALERTS_WEBHOOK=https://hooks.slack.com/services/⟦{SLACK_HOOK}⟧"),
    _p("slack_webhook", f'{{"webhook": "https://hooks.slack.com/services/⟦{SLACK_HOOK}⟧"}}'),
    _p("slack_webhook", f"Post alerts to https://hooks.slack.com/services/⟦{SLACK_HOOK}⟧ please."),
    # Stripe
    _p("stripe_secret_key", f"STRIPE_SECRET_KEY=⟦{STRIPE_LIVE}⟧"),
    _p("stripe_secret_key", f"stripe.api_key = '⟦{STRIPE_TEST}⟧'"),
    _p("stripe_secret_key", f"curl https://api.stripe.com/v1/charges -u ⟦{STRIPE_RESTRICTED}⟧:"),
    _p("stripe_webhook_secret", f"STRIPE_WEBHOOK_SECRET=⟦{STRIPE_WHSEC}⟧"),
    _p("stripe_webhook_secret", f"The endpoint signing secret is ⟦{STRIPE_WHSEC}⟧."),
    _p("stripe_webhook_secret", f"stripe:\n  webhook_secret: ⟦{STRIPE_WHSEC}⟧\n"),
    # Google
    _p("google_api_key", f"GOOGLE_API_KEY=⟦{GOOGLE_KEY}⟧"),
    _p(
        "google_api_key",
        f"https://maps.googleapis.com/maps/api/geocode/json?address=Seoul&key=⟦{GOOGLE_KEY}⟧",
    ),
    _p(
        "google_api_key",
        f'const firebaseConfig = {{ apiKey: "⟦{GOOGLE_KEY}⟧", projectId: "acme" }};',
    ),
    _p("google_oauth_token", f"access token: ⟦{GOOGLE_OAUTH}⟧"),
    _p("google_oauth_token", f'{{"access_token": "⟦{GOOGLE_OAUTH}⟧", "expires_in": 3599}}'),
    _p(
        "google_oauth_token",
        f'curl -H "Authorization: Bearer ⟦{GOOGLE_OAUTH}⟧" https://www.googleapis.com/drive/v3/files',
    ),
    # Hugging Face, npm, PyPI
    _p("huggingface_token", f"HF_TOKEN=⟦{HF}⟧"),
    _p("huggingface_token", f"huggingface-cli login --token ⟦{HF}⟧"),
    _p("huggingface_token", f'login(token="⟦{HF}⟧")'),
    _p("npm_token", f"//registry.npmjs.org/:_authToken=⟦{NPM}⟧"),
    _p("npm_token", f"NPM_TOKEN: ⟦{NPM}⟧"),
    _p("npm_token", f"npm config set //registry.npmjs.org/:_authToken ⟦{NPM}⟧"),
    _p("pypi_token", f"[pypi]\n  username = __token__\n  password = ⟦{PYPI}⟧\n"),
    _p("pypi_token", f"TWINE_PASSWORD=⟦{TEST_PYPI}⟧ twine upload dist/*"),
    _p("pypi_token", f"uv publish --token ⟦{PYPI}⟧"),
    # SendGrid, Twilio
    _p("sendgrid_api_key", f"SENDGRID_API_KEY=⟦{SENDGRID}⟧"),
    _p("sendgrid_api_key", f'sg = SendGridAPIClient("⟦{SENDGRID}⟧")'),
    _p(
        "sendgrid_api_key",
        f"curl -H 'Authorization: Bearer ⟦{SENDGRID}⟧' https://api.sendgrid.com/v3/mail/send",
    ),
    _p("twilio_api_key", f"TWILIO_API_KEY=⟦{TWILIO_KEY}⟧\nTWILIO_ACCOUNT_SID={TWILIO_SID}\n"),
    _p("twilio_api_key", f"Use API key ⟦{TWILIO_KEY}⟧ for the SMS sender."),
    _p("twilio_api_key", f'client = Client("⟦{TWILIO_KEY}⟧", api_secret, account_sid)'),
    _p("secret_assignment", f"TWILIO_AUTH_TOKEN=⟦{TWILIO_AUTH}⟧"),
    # Azure
    _p(
        "azure_storage_key",
        "DefaultEndpointsProtocol=https;AccountName=acmelogs;"
        f"AccountKey=⟦{AZURE_KEY}⟧;EndpointSuffix=core.windows.net",
    ),
    _p(
        "azure_storage_key",
        '"ServiceBus": "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;'
        f'SharedAccessKey=⟦{AZURE_KEY}⟧"',
    ),
    _p(
        "azure_sas_signature",
        "https://acmelogs.blob.core.windows.net/logs/app.log?sv=2022-11-02&ss=b&srt=o&sp=r"
        f"&se=2026-12-01T00:00:00Z&sig=⟦{AZURE_SIG}⟧",
    ),
    _p(
        "azure_sas_signature",
        f"SAS_URL='https://x.blob.core.windows.net/c?sp=racwdl&sig=⟦{AZURE_SIG}⟧'",
    ),
    _p(
        "azure_storage_key",
        'az storage blob list --connection-string "AccountName=acmelogs;'
        f'AccountKey=⟦{AZURE_KEY}⟧" --container-name logs',
    ),
    _p(
        "azure_sas_signature",
        '{"sasUrl": "https://acme.blob.core.windows.net/in?sv=2022-11-02&sp=w'
        f'&sig=⟦{AZURE_SIG}⟧"}}',
    ),
    # Telegram, Discord
    _p("telegram_bot_token", f"TELEGRAM_BOT_TOKEN=⟦{TELEGRAM}⟧"),
    _p("telegram_bot_token", f"curl https://api.telegram.org/bot⟦{TELEGRAM}⟧/getMe"),
    _p("telegram_bot_token", f"BotFather gave us ⟦{TELEGRAM}⟧ for @acme_alerts_bot."),
    _p("discord_bot_token", f"DISCORD_TOKEN=⟦{DISCORD}⟧"),
    _p("discord_bot_token", f"client.run('⟦{DISCORD}⟧')"),
    _p("discord_bot_token", f"headers = {{'Authorization': 'Bot ⟦{DISCORD}⟧'}}"),
    # JWT, Bearer, Basic
    _p("jwt", f"Authorization: Bearer ⟦{JWT}⟧"),
    _p("jwt", f"session cookie was ⟦{JWT}⟧ (expired)"),
    _p("jwt", f'{{"id_token": "⟦{JWT}⟧"}}'),
    _p(
        "bearer_token",
        f"curl -H 'Authorization: Bearer ⟦{OPAQUE}⟧' https://internal.acme.dev/v1/jobs",
    ),
    _p("bearer_token", f'headers = {{"Authorization": f"Bearer ⟦{OPAQUE}⟧"}}'),
    _p("bearer_token", f"Authorization: Token ⟦{HEX32}{HEX32[:8]}⟧"),
    _p("basic_auth", f"Authorization: Basic ⟦{BASIC}⟧"),
    _p("basic_auth", f'curl -H "Authorization: basic ⟦{BASIC}⟧" https://registry.acme.dev/v2/'),
    _p("basic_auth", f'requests.get(url, headers={{"Authorization": "Basic ⟦{BASIC}⟧"}})'),
    _p("cli_password", "curl -u admin:⟦Tr0ub4dor-3⟧ https://jenkins.acme.dev/api/json"),
    _p("cli_password", "curl --user 'deploy:⟦s3cr3t!Pass⟧' https://nexus.acme.dev"),
    _p("cli_password", 'curl -s -u "ci-bot:⟦Bu1ld-T0ken⟧" https://ci.acme.dev/job/api/build'),
    _p("cli_flag_secret", "mysql -u root --password ⟦hunter2pass⟧ shop"),
    _p("cli_flag_secret", "vault login --token ⟦hvs-Cq8tT4xL2m⟧ and then list"),
    _p("cli_flag_secret", 'deploy.sh --api-key "⟦ak_9f8e7d6c5b⟧" --env prod'),
    _p("cli_flag_secret", "gpg --batch --passphrase '⟦cereal dragon cushion 759⟧' -d x.gpg"),
    # PEM private keys
    _p("private_key", f"⟦{RSA_KEY}⟧\n"),
    _p("private_key", f"Old deploy key, do not reuse:\n\n⟦{EC_KEY}⟧\n\nReplaced on 2026-10-01."),
    _p("private_key", f"```\n⟦{OPENSSH_KEY}⟧\n```"),
    _p("private_key", f"tls:\n  key: |\n    ⟦{PKCS8_KEY.replace(chr(10), chr(10) + '    ')}⟧\n"),
    _p("private_key", f"⟦{ENCRYPTED_KEY}⟧"),
    _p("private_key", f"⟦{PGP_KEY}⟧"),
    _p("private_key", f"⟦{LEGACY_ENCRYPTED_RSA}⟧"),
    _p(
        "private_key",
        f'{{"type": "service_account", "private_key": "⟦{JSON_ESCAPED_KEY}⟧\\n",'
        ' "client_email": "x@y.iam.gserviceaccount.com"}',
    ),
    _p(
        "private_key",
        f"The key starts like this:\n⟦{TRUNCATED_KEY}⟧\n\nand the rest is in the vault.",
    ),
    # passwords in URLs
    _p("url_password", "DATABASE_URL=postgresql://user:⟦pass⟧@host/db"),
    _p("url_password", "redis://:⟦r3d1s-Secret⟧@cache.internal:6379/0"),
    _p("url_password", "postgres://app_user:⟦Xv9#pLq2wR⟧@db.internal:5432/orders"),  # a raw #
    _p(
        "url_password",
        f"git remote add origin https://alice:⟦{RANDOM40}⟧@git.acme.dev/acme/api.git",
    ),
    _p(
        "url_password",
        "mongodb+srv://app:⟦Xk9-pQ2z⟧@cluster0.abcde.mongodb.net/prod?retryWrites=true",
    ),
    _p(
        "url_password",
        'engine = create_engine("mysql+pymysql://root:⟦p@ss:w0rd⟧@127.0.0.1:3306/app")',
    ),
    _p(
        "url_password",
        "amqp://guest:⟦Rabbit2024⟧@mq:5672/ and ftp://ftpuser:⟦Ftp-9911⟧@files.acme.dev/",
    ),
    _p("url_password", "proxy: http://svc:⟦123456789⟧@proxy.acme.dev:3128"),
    # passwords spelled out in prose
    _p("password_prose", "FYI the prod DB password is ⟦Tr0ub4dor&3⟧ until Friday."),
    _p("password_prose", "운영 DB 비밀번호는 ⟦Abcd1234!x⟧ 입니다"),
    _p("password_prose", "The password for the staging box was ⟦Sup3rS3cret⟧, rotate it."),
    # connection strings
    _p("password_assignment", "Server=db.acme.dev;Database=app;User Id=sa;Password=⟦Pa$$w0rd!⟧;"),
    _p(
        "password_assignment",
        "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;Pwd=⟦Xk92!mq⟧;",
    ),
    _p("password_assignment", "Driver={PostgreSQL};Server=db;UID=app;PWD={⟦brace;d-Pass1⟧};"),
    _p(
        "password_assignment",
        "host=db port=5432 dbname=app user=app password=⟦N0tS0Secret⟧ sslmode=require",
    ),
    _p(
        "password_assignment",
        "jdbc:postgresql://db:5432/app?user=app&password=⟦Jdbc-Pass-77⟧&ssl=true",
    ),
    # password-style assignments
    _p("password_assignment", "DB_PASSWORD=⟦hunter2⟧"),
    _p("password_assignment", "database:\n  user: app\n  password: ⟦s3cr3t-Pa55⟧\n"),
    _p("password_assignment", '{"username": "admin", "password": "⟦hunter2⟧"}'),
    _p("password_assignment", 'password = "⟦correct horse battery staple⟧"'),
    _p("password_assignment", 'conn = psycopg.connect(host="db", password="⟦Tr0ub4dor&3⟧")'),
    _p("password_assignment", 'password: str = "⟦hunter2⟧"'),
    _p("password_assignment", "export PGPASSWORD='⟦Sup3rS3cret!⟧'"),
    _p("password_assignment", "The staging admin password: ⟦letmein⟧"),
    _p("password_assignment", "[mysql]\npasswd = ⟦Winter2024⟧\n"),
    _p("password_assignment", "pwd = ⟦x9y8z7⟧"),
    _p("password_assignment", "- DB password: `⟦hunter2⟧`"),
    _p("password_assignment", "**Password:** ⟦Hunter2024⟧"),
    _p("password_assignment", "spring.datasource.password=⟦Spr1ng!Boot⟧"),
    _p("password_assignment", "    environment:\n      MYSQL_ROOT_PASSWORD: ⟦rootpw-991⟧\n"),
    _p("password_assignment", "mysqldump --password=⟦Dump2024x⟧ app > app.sql"),
    _p("password_assignment", "$password = '⟦php-Secret-1⟧';"),
    _p("password_assignment", "'password' => '⟦laravel-99⟧',"),
    _p("password_assignment", 'password := "⟦go-pass-42⟧"'),
    _p("password_assignment", 'config["password"] = "⟦dict-Pass-5⟧"'),
    _p("password_assignment", "SMTP_PASS=⟦mailpass77⟧"),
    _p("password_assignment", "DB_PASSWORD_PROD=⟦prodPass#1⟧"),
    _p("password_assignment", "passphrase: '⟦tangerine dream 1974⟧'"),
    _p("password_assignment", "wifi password: ⟦48213977⟧"),
    _p("password_assignment", "dbPassword: ⟦CamelCase9⟧"),
    _p("password_assignment", "스테이징 DB 비밀번호: ⟦Hunter2024⟧"),
    _p("password_assignment", "관리자 패스워드 = '⟦admin!2345⟧'"),
    _p("password_assignment", "{user: app, password: ⟦Flow-Style1⟧}"),
    # secret/token/API-key assignments
    _p("google_client_secret", f"client_secret: ⟦{GOOGLE_CLIENT_SECRET}⟧"),
    _p(
        "google_client_secret",
        '{"client_id": "123.apps.googleusercontent.com",'
        f' "client_secret": "⟦{GOOGLE_CLIENT_SECRET}⟧"}}',
    ),
    _p("secret_assignment", f'api_key = "⟦{HEX32}⟧"'),
    _p("secret_assignment", f"apikey: ⟦{HEX32}⟧"),
    _p("secret_assignment", "token: ⟦abc123def⟧"),
    _p("secret_assignment", f'curl -H "X-API-Key: ⟦{HEX32}⟧" https://api.acme.dev/v1/things'),
    _p("secret_assignment", f'private_key = "⟦0x{fake(HEX, 64)}⟧"'),
    _p("secret_assignment", f"SECRET_KEY = '⟦{DJANGO_SECRET}⟧'"),
    _p("secret_assignment", f"authtoken: ⟦{fake(B62, 49)}⟧"),
    _p("secret_assignment", f"refresh_token=⟦{fake(URLSAFE, 64)}⟧"),
    _p("secret_assignment", "JWT_SECRET=⟦my-jwt-signing-secret⟧"),
    _p("secret_assignment", 'webhook_secret: "⟦whk-2024-rotate⟧"'),
    _p("secret_assignment", f'[auth]\nclient_secret = "⟦{RANDOM40}⟧"\n'),
    _p("secret_assignment", f"SecretAccessKey: ⟦{fake(B62, 20)}⟧"),
    _p("secret_assignment", f"ENCRYPTION_KEY=⟦{fake(B62, 43)}⟧"),
    # generic high-entropy values under KEY/TOKEN/SECRET names
    _p("generic_secret", f"STRIPE_KEY=⟦{RANDOM40}⟧"),
    _p("generic_secret", f"MAPBOX_KEY: ⟦{fake(B62, 32)}⟧"),
    _p("generic_secret", f'{{"key": "⟦{fake(B62, 24)}⟧"}}'),
    _p("generic_secret", f"SECRET_KEY_BASE=⟦{fake(HEX, 128)}⟧"),
    _p("generic_secret", f'credentials = "⟦{fake(URLSAFE, 48)}⟧"'),
    _p("generic_secret", f"SIGNING_KEY_B64=⟦{fake(B64, 43)}=⟧"),
    _p("generic_secret", f"datadog:\n  dd_key: ⟦{fake(HEX, 32)}⟧\n"),
]

NEGATIVES: list[str] = [
    'pass it as --password "the one from the vault" when the prompt asks',
    # masked, placeholder and variable values where a password goes
    "jdbc:postgresql://pg-ha:5432/claims user=claims_svc password=[PROTECTED]",
    "~ master_password = (sensitive value)",
    "INFO AuthFilter - 요청 헤더 X-Api-Key=****3544 uri=/v1/members",
    '[mysql]\nuser = "crawler"\n접속암호 = "여기에_입력"',
    "KAKAO_CLIENT_SECRET=발급받은_키_입력",
    # a date near a code's or a password's word: when it expires or changes
    "OTP 의무화는 2026-03-12부터, 아직 등록 안 한 분은 등록해 주세요",
    "접속암호 변경 주기가 90일이라 다음 변경일은 2026-07-25 입니다",
    "the verification code rules change on 2026.04.01 for every tenant",
    "the docs live at https://docs.example.com:8443/#/guide@latest, see the setup page",
    "mysql -u root --password --host db.internal shop",
    "pass the token with --token $VAULT_TOKEN",
    "use --api-key <your key> when calling it",
    "the --password flag is required for remote hosts",
    "the --token option overrides the config file",
    "The password policy is 12 characters with a symbol.",
    "The password for staging is in 1Password under 'infra'.",
    "The password was rotated on 2026-11-29 after the audit.",
    "비밀번호는 1Password에 있어요",
    # prose about secrets, no value
    "the password policy requires 12 characters",
    "rotate the API key monthly",
    "the token budget is 2000",
    "set password= in the env file",
    "Password: ask Bob in #ops for the staging one.",
    "Token: the smallest unit of text a model reads",
    "The secret to good prompts is clarity.",
    "API key: rotate monthly, owner is the platform team",
    "password: required",
    "Basic authentication is disabled; use a bearer token for auth.",
    "비밀번호 정책은 12자 이상입니다",
    "API 키는 1Password의 'OpenAI prod' 항목에 있습니다",
    "비밀번호: 관리자에게 문의하세요",
    "DB password: 1Password, vault 'Engineering'",
    # placeholders and empty values
    "api_key: ${OPENAI_API_KEY}",
    "password: <your password>",
    "password=***",
    "token: null",
    "DB_PASSWORD=",
    'password = ""',
    "OPENAI_API_KEY=sk-...",
    "api_key = YOUR_API_KEY",
    "token: xxxx",
    "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "SLACK_BOT_TOKEN=xoxb-your-token-here",
    "password: changeme",
    "postgresql://user:password@localhost:5432/app",
    "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "Authorization: Bearer <token>",
    "secret: true",
    # references to where a secret lives
    "the key is in $OPENAI_API_KEY",
    'api_key = os.environ["API_KEY"]',
    'token = os.getenv("GITHUB_TOKEN")',
    "token: {{ secrets.TOKEN }}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'password: "{{ vault_db_password }}"',
    "client_secret: !secret google_client_secret",
    "password = getpass.getpass()",
    "api_key=settings.openai_api_key",
    "connect(user=user, password=password)",
    "DATABASE_URL=postgresql://app:${DB_PASSWORD}@db/app",
    'curl -H "Authorization: Bearer $TOKEN" https://api.acme.dev',
    'curl -u "$USER:$PASS" https://nexus.acme.dev',
    "password: ENC[AES256_GCM,data:Tr4k2Q==,iv:abc,tag:def,type:str]",
    "password_file: /run/secrets/db_password",
    "ssh_key: ~/.ssh/id_ed25519",
    'password: str = Field(..., description="database password")',
    # numbers and settings that mention secrets
    "PASSWORD_MIN_LENGTH=12",
    "max_tokens: 2000",
    "token_count=512",
    "token: 2000",
    "token_ttl_seconds: 3600",
    "secretName: tls-cert",
    "aws_access_key_id_env: AWS_ACCESS_KEY_ID",
    "eos_token: </s>",
    "sort_key: created_at",
    "primary_key=True",
    f"idempotency_key: {uuid4()}",
    "key: app.kubernetes.io/name",
    "key: production-db-primary-2024",
    f"public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{fake(B62, 43)} me@laptop",
    f"TWILIO_ACCOUNT_SID={TWILIO_SID}",
    "STRIPE_PUBLISHABLE_KEY=pk" + "_live_" + fake(B62, 24),
    "docker run -u 1000:1000 app",
    "login(user, password=pw)",
    # URLs without passwords
    "postgresql://user@host/db",
    "https://github.com/org/repo",
    "https://example.com:8443/path?q=1",
    "redis://localhost:6379/0",
    "ssh://git@github.com:22/acme/api.git",
    "mailto:ops@acme.dev",
    "git push -u origin main",
    # identifiers, digests, times and versions
    f"fixed in commit {fake(HEX, 40)}",
    f"image digest sha256:{fake(HEX, 64)}",
    f"run id {uuid4()}",
    "2026-11-29T12:00:00Z and 12:34:56",
    "langchain-core>=1.0,<1.8.4 and squad v0.1.0",
    "/home/me/.ssh/id_rsa",
    "C:\\Users\\me\\.ssh\\id_rsa",
    f"![chart](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{fake(B64, 60)})",
    "eyJhbGciOiJIUzI1NiJ9 is just a JWT header",
    "123456789:ABC is not a bot token",
    "We use scikit-learn and sk-learn style estimators for task-management-2024-roadmap.",
    "hf_hub_download(repo_id='acme/model', filename='config.json')",
    "npm_config_cache=/tmp/npm",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIB\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkq\n-----END CERTIFICATE-----",
]

# -- as people write them in chat: cut short, spaced out, in prose, in English and Korean ----


def b64_secret(size: int) -> str:
    """Base64 of ``size`` random bytes, as a key or a shared secret is pasted."""
    while True:
        out = base64.b64encode(bytes(_rng.randrange(256) for _ in range(size))).decode()
        if _classes(out) == 3 and not out.startswith("AAAA") and ("+" in out or "/" in out):
            return out


def grouped(prefix: str, alphabet: str, width: int, groups: int) -> str:
    """A token written in groups for reading: ``sk-proj-Ab12Cd34 Ef56Gh78 ...``."""
    return prefix + " ".join(fake(alphabet, width) for _ in range(groups))


OPENAI_SHORT = "sk-" + "proj-" + fake(URLSAFE, 14)
OPENAI_SHORT_2 = "sk-" + "proj-" + fake(B62, 9)
ANTHROPIC_SHORT = "sk-" + "ant-api03-" + fake(URLSAFE, 20)
SLACK_DIGITS = "xo" + "xb-" + digits(12) + "-" + digits(13)
SLACK_SHORT = "xo" + "xb-" + digits(4) + "-" + fake(B62, 6)
GH_SHORT = "gh" + "p_" + fake(B62, 12)
GITLAB_SHORT = "gl" + "pat-" + fake(URLSAFE, 10)
STRIPE_SHORT = "sk" + "_live_" + fake(B62, 12)
HF_SHORT = "hf" + "_" + fake(B62, 18)
GOCSPX_SHORT = "GOC" + "SPX-" + fake(B62, 12)
GROQ = "gs" + "k_" + fake(B62, 52)
XAI = "xa" + "i-" + fake(B62, 80)
VAULT = "hv" + "s." + fake(URLSAFE, 90)
SPACED_PROJ = grouped("sk-" + "proj-", B62, 8, 4)
SPACED_GH = grouped("gh" + "p_", B62, 6, 6)
SPACED_AWS = "AK" + "IA " + " ".join(fake(UPPER_DIGITS, 4) for _ in range(4))
SPACED_ANTHROPIC = grouped("sk-" + "ant-api03-", URLSAFE, 10, 4)
ZWSP_STRIPE = "sk" + "_live_" + fake(B62, 16) + "\u200b" + fake(B62, 16)
RSA_BODY = "MIIEpAIBAAKCAQEA" + fake(B64, 48) + "\n" + "\n".join(fake(B64, 64) for _ in range(3))
PKCS8_BODY = "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQ" + fake(B64, 14)
OPENSSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW" + (
    "QyNTUxOQAAACA" + fake(B64, 51)
)
EC_BODY = "MHcCAQEEI" + fake(B64, 55) + "\n" + fake(B64, 64)
SHARED_SECRET = b64_secret(32)
WEBHOOK_KEY = b64_secret(24)
SESSION_KEY = b64_secret(48)
TOKEN_HEX = fake(HEX, 32)
TOKEN_B62 = fake(B62, 18)

POSITIVES += [
    # provider tokens whose body is not the provider's canonical length or alphabet
    _p("openai_api_key", f"OPENAI_API_KEY=⟦{OPENAI_SHORT}⟧"),
    _p("openai_api_key", f"my key is ⟦{OPENAI_SHORT_2}⟧ (a test one)"),
    _p("anthropic_api_key", f"use ⟦{ANTHROPIC_SHORT}⟧ for the eval"),
    _p("slack_token", f"SLACK_BOT_TOKEN=⟦{SLACK_DIGITS}⟧"),
    _p("slack_token", f"슬랙 봇 토큰 ⟦{SLACK_SHORT}⟧ 으로 바꿨어요"),
    _p("github_token", f"gh auth login with ⟦{GH_SHORT}⟧"),
    _p("gitlab_token", f"CI_JOB_TOKEN 말고 ⟦{GITLAB_SHORT}⟧ 쓰세요"),
    _p("stripe_secret_key", f"test with ⟦{STRIPE_SHORT}⟧ first"),
    _p("huggingface_token", f"HF token: ⟦{HF_SHORT}⟧"),
    _p("google_client_secret", f"the OAuth client secret ⟦{GOCSPX_SHORT}⟧ is for dev"),
    _p("provider_token", f"GROQ_API_KEY=⟦{GROQ}⟧"),
    _p("provider_token", f"xAI 키는 ⟦{XAI}⟧ 입니다"),
    _p("provider_token", f"vault token: ⟦{VAULT}⟧"),
    # keys with spaces or zero-width characters inserted
    _p("openai_api_key", f"here: ⟦{SPACED_PROJ}⟧"),
    _p("github_token", f"PAT ⟦{SPACED_GH}⟧ (split so Slack does not revoke it)"),
    _p("aws_access_key_id", f"access key id ⟦{SPACED_AWS}⟧"),
    _p("anthropic_api_key", f"키: ⟦{SPACED_ANTHROPIC}⟧"),
    _p("stripe_secret_key", f"stripe ⟦{ZWSP_STRIPE}⟧"),
    # private key bodies pasted without their header
    _p("private_key", f"⟦{RSA_BODY}⟧"),
    _p("private_key", f"key body: ⟦{PKCS8_BODY}⟧"),
    _p("private_key", f"배포 키 본문입니다\n⟦{OPENSSH_BODY}⟧"),
    _p("private_key", f"the EC key is\n⟦{EC_BODY}⟧\nkeep it safe"),
    # base64 blobs standing alone
    _p("base64_token", f"the webhook signing key: ⟦{WEBHOOK_KEY}⟧"),
    _p("secret_prose", f"shared secret is `⟦{SHARED_SECRET}⟧`"),
    _p("base64_token", f"here you go: `⟦{SHARED_SECRET}⟧`"),
    _p("base64_token", f"세션 키는 ⟦{SESSION_KEY}⟧ 이고 매주 바뀝니다"),
    _p("base64_token", f"⟦{SHARED_SECRET}⟧"),
    # passwords in prose, English
    _p("password_prose", "the passphrase is ⟦tangerine-dream-1974⟧"),
    _p("password_prose", 'The passphrase is "⟦purple monkey dishwasher⟧".'),
    _p("password_prose", "my pw is ⟦hunter2x⟧ lol"),
    _p("password_prose", "username admin, password ⟦Xk9pq2Lm⟧"),
    _p("password_prose", "the wifi passcode is ⟦88cafe!21⟧"),
    _p("password_prose", "the root password was changed to ⟦Winter2025!⟧ yesterday"),
    _p("password_prose", "password - ⟦Tr0ub4dor&3⟧"),
    # passwords in prose, Korean
    _p("password_prose", "DB 비번은 ⟦hunter2x⟧ 입니다"),
    _p("password_prose", "비번은 ⟦qwerty⟧예요"),
    _p("password_prose", "스테이징 서버 암호는 ⟦Qwer1234!⟧ 야"),
    _p("password_prose", "와이파이 비번 ⟦cafe2024!⟧ 이에요"),
    _p("password_prose", "관리자 패스워드는 ⟦Adm1n-Pass⟧입니다"),
    _p("password_prose", "루트 비밀번호가 ⟦r00tMe!⟧로 바뀌었어요"),
    _p("password_prose", "메일 계정 암호가 ⟦Mail#2024⟧ 이고 아이디는 ops예요"),
    # any value assigned to a password-like key
    _p("password_assignment", "root pw: ⟦Tr0ub4dor⟧"),
    _p("password_assignment", "host=db user=app pw=⟦hunter2⟧ port=5432"),
    _p("password_assignment", "DSN: host=db port=5432 user=app pw=⟦Kx82!mq⟧ sslmode=require"),
    _p("password_assignment", "PW: ⟦Winter2025!⟧"),
    _p("password_assignment", 'admin_pw = "⟦letmein99⟧"'),
    _p("password_assignment", "pass: ⟦hunter2x⟧"),
    _p("password_assignment", "user: deploy\npass: ⟦ftp-Upl0ad⟧\n"),
    _p("password_assignment", "rootpw=⟦tangerine⟧"),
    _p("password_assignment", "비번: ⟦hunter2x⟧"),
    _p("password_assignment", "암호 = '⟦s3cr3t!!⟧'"),
    _p("password_assignment", "패스워드=⟦Pw2024!!⟧"),
    _p("password_assignment", "VPN 비밀 번호: ⟦vpn-Acme-7⟧"),
    _p("password_assignment", "passcode: ⟦4471-9920⟧"),
    _p("secret_assignment", f"토큰: ⟦{TOKEN_B62}⟧"),
    _p("cli_flag_secret", "openconnect vpn.acme.dev --user ops --passphrase ⟦Vpn!2024x⟧"),
    # command lines
    _p("cli_password", "mysql -u root -p⟦S3cretPass⟧ shop"),
    _p("cli_password", "mysqldump -uroot -p'⟦dump!Pass9⟧' app > app.sql"),
    _p("cli_password", "mariadb -h db -P 3306 -u app -p⟦Maria2024x⟧"),
    _p("cli_password", "docker exec -it db mysql -uroot -p⟦rootpass⟧ -e 'show databases'"),
    _p("cli_password", "sshpass -p ⟦Tr0ub4dor⟧ ssh deploy@10.0.0.5"),
    _p("cli_password", "redis-cli -h cache -a ⟦r3dis!Pass⟧ ping"),
    _p("cli_password", "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:⟦p12-Export9⟧"),
    # user/password pairs in prose
    _p("credential_pair", "login is admin / ⟦hunter2x⟧"),
    _p("credential_pair", "계정은 deploy / ⟦Xk9!pass⟧ 이에요"),
    _p("credential_pair", "creds: ci-bot/⟦Bu1ld-2024⟧"),
    _p("credential_pair", "username/password: admin/⟦Adm1n!23⟧"),
    _p("credential_pair", "아이디/비번은 admin/⟦hunter2x⟧"),
    _p("credential_pair", "접속 정보: root / ⟦Qwer1234⟧"),
    _p("credential_pair", "Log in with jenkins / ⟦J3nk1ns!⟧ on the old box"),
    _p("credential_pair", "the staging login is qa@acme.dev / ⟦Qa-Test-77x⟧"),
    _p("credential_pair", "로그인은 admin / ⟦P@ssw0rd⟧ 로 하세요"),
    _p("credential_pair", "grafana account: viewer:⟦View3r!x⟧"),
    # tokens named in prose
    _p("secret_prose", f"the API key is ⟦{TOKEN_HEX}⟧"),
    _p("secret_prose", f"The staging token is ⟦{TOKEN_B62}⟧."),
    _p("secret_prose", f"API 키는 ⟦{TOKEN_B62}⟧ 이에요"),
    _p("secret_prose", f"토큰은 ⟦{TOKEN_HEX}⟧입니다"),
    _p("secret_prose", "the client secret was ⟦Q2x9-Lm81-Zp04⟧"),
    # a bare value on the line after its cue
    _p("followup_secret", "staging password:\n⟦hunter2x⟧"),
    _p("followup_secret", "database:\n  password:\n    ⟦Tr0ub4dor&3⟧\n"),
    _p("followup_secret", "DB 비번은\n⟦qwer1234!⟧"),
    _p("followup_secret", f"**API token:**\n`⟦{TOKEN_B62}⟧`"),
]

NEGATIVES += [
    "the password field needs 12 characters",
    "sk-learn",
    "pw is short for password",
    "비밀번호는 12자 이상이어야 해요",
    "token budget is 2000",
    "the token budget per turn is 2000 tokens",
    "set max_tokens=4096 and temperature=0.2",
    "the passphrase is required for the key",
    "the password is wrong, try again",
    "the password is case-sensitive",
    "the password is at least 12 characters",
    "my password is stored in 1Password",
    "The passphrase is at least 5 words long.",
    "the API key is rotated every 90 days",
    "the token is valid for 3600 seconds",
    "the secret is out",
    "password hashing uses argon2id",
    "the password is sha256-hashed with a salt",
    "password-protected zip",
    "PIN is 4 digits",
    "pwd prints the working directory",
    "run `pwd` to see where you are",
    "pass: all tests green",
    "tests pass: 42/42",
    "Pass: 98%",
    "비번은 1Password에 저장돼 있어요",
    "비밀번호는 vault에 있어요",
    "비밀번호는 admin 계정에서 바꿀 수 있어요",
    "비밀번호는 email로 보내드려요",
    "암호화 키는 KMS에서 관리해요",
    "암호화 방식은 AES-256-GCM이에요",
    "비번 변경 주기는 90일이에요",
    "토큰 수는 2000개로 제한돼요",
    "토큰은 2000개까지 써요",
    "API 키는 환경변수 OPENAI_API_KEY에 있어요",
    "API 키는 매달 교체해요",
    "계정은 admin / 비번은 1Password에",
    "login is via SSO / Okta",
    "the account is read/write",
    "account: acme/prod",
    "login page: /admin/login",
    "credentials are in vault/prod",
    "sign in with Google: OAuth2",
    "Login: 2026-11-29T10:00:00Z",
    "The login is admin / the password is in the vault",
    "use user/pass auth for the proxy",
    "use mysql -u root -p and type it at the prompt",
    "mysql -u root -p$MYSQL_ROOT_PASSWORD shop",
    "docker run -u 1000 -p8080:80 app",
    "mkdir -p /tmp/build",
    "ssh -p 2222 deploy@host",
    'sshpass -p "$SSHPASS" ssh host',
    "redis-cli -a $REDIS_PASSWORD ping",
    "xoxb- tokens are bot tokens",
    "ghp_ is the prefix of classic GitHub tokens",
    "sk-proj- keys replaced the old sk- keys",
    "sk-ant- keys are Anthropic's",
    "AKIA is the prefix of long-lived AWS access keys",
    "AKIA IS THE PREFIX OF LONG LIVED KEYS",
    "xai-sdk and gsk_helpers are packages",
    "npm_config_registry=https://registry.npmjs.org/",
    "hf_HubDownloadHelperClass is internal",
    "import base64; base64.b64encode(data)",
    "a base64 string like aGVsbG8= is not a secret",
    "golang.org/x/text v0.3.7 h1:olpwvP2KacW1ZWvsR7uQhoyTYvKAupfQrRGBFM352Gk=",
    '<script integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC">',
    "Content-MD5: Q2hlY2sgSW50ZWdyaXR5IQ==",
    f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{fake(B62, 43)} deploy@ci",
    "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ",
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo",
    "see Users/Me/Projects/Acme2024/Backend/Services for the code",
    "AbstractSingletonProxyFactoryBeanV2Impl is the class",
    f"etag: {b64_secret(16)}",
    "the key is 256 bits long",
    "키는 32바이트예요",
]

FOLLOWUPS: list[tuple[tuple[str, ...], str, str]] = [
    (("what's the db password?",), "followup_secret", "⟦hunter2x⟧"),
    (("my password is",), "followup_secret", "⟦hunter2x⟧"),
    (("my password is", "Sure, go ahead."), "followup_secret", "⟦tangerine⟧"),
    (("What's the wifi password?",), "followup_secret", "it's ⟦cafe2024!⟧"),
    (("here's the root password:",), "followup_secret", "`⟦Tr0ub4dor&3⟧`"),
    (("Can you send me the staging API token?",), "followup_secret", f"⟦{TOKEN_B62}⟧"),
    (("DB 비번 뭐예요?",), "followup_secret", "⟦qwer1234!⟧"),
    (("비밀번호는",), "followup_secret", "⟦Abcd1234⟧"),
    (("토큰 알려줘",), "followup_secret", f"⟦{TOKEN_B62}⟧"),
    (("비번 알려주세요",), "followup_secret", "⟦hunter2x⟧ 이에요"),
    (("Tell me the admin password again?", "OK"), "followup_secret", "⟦Adm1n!23⟧"),
    (("what's the db password?",), "followup_secret", "⟦hunter2x⟧\nthat's the prod one"),
]

FOLLOWUP_NEGATIVES: list[tuple[tuple[str, ...], str]] = [
    (("what's the db password?",), "ask Bob"),
    (("what's the db password?",), "It's in vault under prod/db."),
    (("what's the password policy?",), "12chars"),
    (("my password is",), "in 1Password"),
    (("my password is",), "$DB_PASSWORD"),
    (("What is a token?",), "Tokenization"),
    (("Do you know the db password?",), "nope"),
    (("what's the password?",), "idk"),
    (("the token budget is",), "2000"),
    (("Which port does the API use?",), "8080"),
    (("비밀번호 정책이 뭐예요?",), "12자"),
    (("DB 비번 뭐예요?",), "몰라요"),
    (("Did you change the password?",), "Yesterday"),
    (("Can you send me the staging API token?",), "later"),
    (("what's the db password?", "It's hunter2x"), "thanks"),
    (("what's the db password?",), "I don't know it"),
]

# Cases from two rounds of probes written after the rules above (each fixed a class).
POSITIVES += [
    _p("password_prose", "the sftp password is now ⟦Blue-Sky-2026⟧"),
    _p("password_prose", "new staging pwd is ⟦Kd83!xq⟧"),
    _p("password_prose", "Passcode ⟦739201⟧"),
    _p("password_prose", "서버 root 암호 바꿈 -> ⟦N3wR00t#⟧"),
    _p("password_prose", "계정 root 비번 ⟦toor1234⟧"),
    _p("password_prose", "초기 비밀번호는 ⟦init1234!⟧ 로 설정돼요"),
    _p("password_assignment", "prod db pw = ⟦Xq7!mZ2p⟧"),
    _p("password_assignment", "젠킨스 관리자 암호: ⟦jenk!ns99⟧"),
    _p("password_assignment", "ssh root@10.0.0.9 (password: ⟦r00t!pw⟧)"),
    _p("password_assignment", "wifi pw: ⟦cafe!2026⟧"),
    _p("credential_pair", "Wi-Fi: AcmeGuest / ⟦welcome2acme⟧"),
    _p("credential_pair", "DB 접속: app / ⟦App#2024db⟧"),
    _p("credential_pair", "sign in as qa with qa / ⟦Qa!12345⟧"),
    _p("credential_pair", "ftp 계정 ftpuser/⟦Ftp!2026⟧ 쓰세요"),
    _p("credential_pair", "login admin:⟦admin123⟧"),
    _p("slack_token", "the bot token is ⟦" + "xo" + "xb-5521-9981-Qw3rTy⟧"),
    _p("openai_api_key", "key: ⟦" + "sk-" + "proj-\u200bAb12Cd34Ef56Gh78⟧"),
    _p("aws_access_key_id", "⟦" + "AK" + "IA5Q7R 2XZ9K3LM 8PQR⟧"),
    _p("base64_token", "the key is ⟦Rk9PQkFSMTIzNDU2Nzg5MA==⟧"),
    _p("password_prose", "what's the db password? ⟦hunter2x⟧"),
    _p("password_prose", "DB 비번 뭐예요? ⟦qwer1234!⟧"),
]
NEGATIVES += [
    "The account is alice@acme.dev / bob@acme.dev",
    "password123 is on every leaked list, never use it",
    "the login button is blue / green in dark mode",
    "account 12345/67890 belongs to finance",
    "Login: Tuesday 10:30",
    "pw reset done, all good",
    "password: see vault",
    "pw: ask Dana",
    "비밀번호를 5번 틀리면 잠겨요",
    "암호화된 파일은 s3://acme-backups에 있어요",
    "the key fingerprint is SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
    "pytest -p no:cacheprovider",
    "docker run -p 5432:5432 postgres",
    "What's the password? Ask Bob.",
    "비번 뭐예요? 관리자에게 물어보세요",
]
FOLLOWUPS += [
    (("password?",), "followup_secret", "⟦Tr0ub4dor&3⟧"),
    (("비밀번호 뭐였죠?",), "followup_secret", "⟦qwer!234⟧"),
    (("The admin password is:",), "followup_secret", "⟦S3cure#Admin⟧"),
]
FOLLOWUP_NEGATIVES += [
    (("what's the password?",), "Same as before"),
    (("what's the password?",), "1Password"),
    (("what's the password?",), "why?"),
    (("비밀번호는",), "관리자에게 물어보세요"),
    (("How long should the password be?",), "12"),
]

# A password given as plain words in prose, each class with its look-alikes: one word ending
# its clause after "<my/the ...> password is", a passphrase of 3+ words, a pair's one-word
# password, and Korean without a copula. Every stop word of ``NOT_A_PASSWORD`` that people write
# after "password is" has a case here.
POSITIVES += [
    # class 1: one plain word in prose
    _p("password_prose", "the wifi password is ⟦sunshine⟧"),
    _p("password_prose", "my password is ⟦qwerty⟧"),
    _p("password_prose", "my password is ⟦Qwerty⟧"),
    _p("password_prose", "our shared office wifi password is ⟦starbucks⟧."),
    _p("password_prose", "the admin password was ⟦letmein⟧, change it after the demo"),
    _p("password_prose", "my password is now ⟦dragon⟧!"),
    _p("password_prose", "the root password was changed to ⟦toor⟧"),
    _p("password_prose", "Her email password is ⟦princess⟧ (she asked me to fix it)"),
    _p("password_prose", "the vpn passcode is ⟦tiger⟧;"),
    _p("password_prose", "wifi: AcmeGuest\nthe password is ⟦Sunshine⟧\n"),
    _p("password_prose", "their pw is ⟦monkey⟧."),
    _p("password_prose", "the password is: ⟦Sunsh1ne!⟧"),
    # class 2: a passphrase of words
    _p("password_prose", "the passphrase is ⟦correct horse battery staple⟧"),
    _p("password_prose", "passphrase: ⟦correct horse battery staple⟧"),
    _p("password_prose", "The passphrase is ⟦purple monkey dishwasher⟧."),
    _p("password_prose", "my GPG passphrase was ⟦brave otters dance tonight⟧"),
    _p("password_prose", "the ssh key passphrase is now ⟦blue river stone lamp⟧"),
    _p("password_prose", "the wallet passphrase is ⟦mango banana cherry grape⟧, keep it offline"),
    _p("password_prose", "키 패스프레이즈는 ⟦correct horse battery staple⟧ 이에요"),
    _p("password_prose", "backup passphrase - ⟦tiger lamp river moon⟧"),
    # class 3: a user / password pair with a plain word
    _p("credential_pair", "login is admin / ⟦sunshine⟧"),
    _p("credential_pair", "creds: deploy / ⟦sunshine⟧"),
    _p("credential_pair", "account is root / ⟦toor⟧"),
    _p("credential_pair", "the router login is root / ⟦admin⟧"),
    _p("credential_pair", "credentials: ci / ⟦letmein⟧"),
    _p("credential_pair", "user: postgres / ⟦pgadmin⟧"),
    _p("credential_pair", "계정은 admin / ⟦sunshine⟧ 이에요"),
    _p("credential_pair", "아이디 root / ⟦toor⟧"),
    _p("credential_pair", "로그인: test / ⟦tester⟧"),
    _p("credential_pair", "Log in with jenkins / ⟦sunshine⟧ on the old box"),
    _p("credential_pair", "the staging account is qa / ⟦qwerty⟧."),
    # class 4: Korean, one plain word, no copula
    _p("password_prose", "비번은 ⟦qwerty⟧"),
    _p("password_prose", "암호는 ⟦sunshine⟧"),
    _p("password_assignment", "비밀번호: ⟦sunshine⟧"),
    _p("password_prose", "와이파이 비번은 ⟦starbucks⟧"),
    _p("password_prose", "관리자 비밀번호는 ⟦admin⟧."),
    _p("password_prose", "서버 패스워드는 ⟦dragon⟧"),
    _p("password_prose", "공유기 비번이 ⟦iptime⟧"),
    _p("password_prose", "비번은 ⟦qwerty⟧ 예요"),
    _p("password_prose", "메일 암호는 ⟦princess⟧, 바꾸지 마세요"),
    _p("password_prose", "wifi 비번 ⟦sunshine⟧"),
]
NEGATIVES += [
    # class 1 look-alikes: what follows "password is" and is not a password
    "my password is expired",
    "the password is wrong.",
    "Your password is incorrect!",
    "the password is correct",
    "the password you entered is invalid",
    "the password is invalid",
    "your password is weak",
    "Your password is strong!",
    "a password is required",
    "a password is needed.",
    "a password is mandatory; use the form",
    "the password is optional",
    "the password is empty",
    "the password is blank.",
    "the password is missing",
    "the password is set",
    "my password was reset",
    "my password was changed.",
    "the password is the same",
    "the new password is different",
    "the password is new",
    "the password is old",
    "the password is long",
    "the password is short",
    "the password is simple",
    "the password is secure",
    "the password is insecure",
    "the password is temporary",
    "the password is unknown",
    "my password is forgotten",
    "my password is lost",
    "my account password is locked",
    "the password was rejected",
    "the password was accepted",
    "the password is valid",
    "the password is visible",
    "the password is hidden",
    "the password is stored",
    "the password is saved",
    "the password is encrypted",
    "the password is hashed",
    "the password is ok",
    "the password is okay",
    "the password is fine",
    "the password is working",
    "the password is broken",
    "the password is case-sensitive.",
    "the password is too",
    "the password is not",
    "the password is compromised",
    "the password was leaked",
    "the admin password is expiring",
    "the password is guessable",
    "the password is public",
    "the password is shared",
    "the password is attached",
    "the password is below",
    "the password is here",
    "the password is there",
    "the password is mine",
    "the password is yours",
    "the password is unchanged",
    "the password is default",
    "the password is bcrypt",
    "the password is md5",
    "the password is SSO",
    "the password is LDAP",
    "the password is argon2id",
    "the password is sensitive",
    "the password is passwordless",
    "the password is random",
    "the password is generated",
    "the password is good",
    "the password is rotated",
    "the password is pending",
    "the password is outdated",
    "the password is available",
    "the password is known",
    "the password is printed",
    "the password is Bob's",
    "the password field is blank",
    "the password is admin's",
    # class 2 look-alikes
    "the passphrase is required for login",
    "the passphrase is stored in the vault",
    "the passphrase is at least four words long",
    "the passphrase is four random words from diceware",
    "the passphrase is different from the password",
    "the passphrase is in the team vault",
    "passphrase: ask Dana in ops",
    "passphrase: see the vault entry",
    "the passphrase is used to unlock the key",
    "the passphrase is the same as last year",
    "the passphrase is case sensitive too",
    "the passphrase is something only you know",
    "the passphrase is not the login password",
    "the passphrase was rotated last week",
    "the passphrase is longer than the password",
    "the passphrase is needed to decrypt backups",
    "the passphrase is your first pet name",
    "passphrase: use a long sentence",
    "the passphrase is generated by diceware",
    "the passphrase is stored offline securely",
    "the passphrase is correct if it opens the key",
    "the passphrase is hidden behind asterisks",
    "passphrase: whatever you chose at ssh-keygen",
    "the passphrase is kept offline by ops",
    "패스프레이즈는 vault에 있어요",
    "패스프레이즈는 네 단어 이상이어야 해요",
    # class 3 look-alikes
    "login is email / password",
    "username / password fields",
    "아이디 / 비밀번호",
    "login is username / pass",
    "login: Google / GitHub",
    "sign in with Google / Apple",
    "account is read / write",
    "account: personal / business",
    "account: free / premium",
    "login: foo / bar",
    "user: alice / bob / carol",
    "login is name / pin",
    "creds: USER / PASS",
    "로그인: 이메일 / 비밀번호",
    "계정: viewer / editor",
    "login with SSO / LDAP",
    "credentials: username / token",
    "login: email / phone",
    "account is required / optional",
    "login: email / passkey",
    "account: owner / member",
    "login is admin / the usual one",
    "creds: deploy / see the vault",
    "account: home / work profiles",
    # class 4 look-alikes
    "비번은 OK",
    "비밀번호는 reset.",
    "비밀번호는 SSO",
    "비번은 LDAP",
    "비밀번호는 OTP",
    "비번은 same",
    "비밀번호는 email",
    "암호는 hashed",
    "비밀번호는 필수예요",
    "비번은 만료됐어요",
    "비밀번호가 틀렸어요",
    "비번은 valid",
    "비밀번호는 Slack으로 보냈어요",
    "비번은 vault",
    "비밀번호는 encrypted",
    "암호는 AES",
    "암호는 sha256",
    "비밀번호는 optional",
    "비번은 expired",
    "비밀번호는 case-sensitive",
    "비밀번호는 Slack DM으로 보낼게요",
    "암호화는 AES",
    "비밀번호는 변경됐어요",
    "비밀번호는 대소문자를 구분해요",
    "비번은 email 로 보내드려요",
    "비번은 admin 계정 거랑 같아요",
]
NEGATIVES += [
    # evaluations, places, times, clouds and environments
    "that password is ancient",
    "the wifi password is taped to the fridge",
    "the wifi password is taped",
    "the password is dangerous",
    "the password is tomorrow",
    "credentials: AWS / GCP",
    "login: staging / prod",
    "login: web / mobile",
    "account: monthly / yearly",
    "login: staging / test",
    "the password is posted",
    "our password is rubbish",
]
POSITIVES += [
    # short words that only look like participles
    _p("password_prose", "my password is ⟦speed⟧"),
    _p("password_prose", "the password is ⟦king⟧"),
]
NEGATIVES += [
    # a bare "user" or "아이디" names a pair only when its slash is spaced
    "user: root:x:0:0:root:/root:/bin/bash",
    "user: www-data:www-data",
    "아이디: ops:Team-2024",
]
POSITIVES += [
    _p("credential_pair", "username: deploy / ⟦Dep!oy2024⟧"),
]
POSITIVES += [
    # known by their context, with no name and verb between
    _p("password_context", "the staging box is root and the usual ⟦Summer2025!⟧"),
    _p("password_context", "Same as before: ⟦Blue2022$⟧"),
    _p("password_context", "I changed it to ⟦L3tm3in&426⟧ after the incident, update it"),
    _p("password_context", "passwrod for the grafana admin → ⟦1qaz2wsx12#$@⟧"),
    _p("password_context", "creds: deploy : ⟦Xihwlsj340*⟧"),
    _p("password_context", "로그인 정보 admin에 ⟦qwer1234!@⟧요"),
    _p("password_context", "패스워드 예전이랑 같아요 ⟦HappyMonkey45#⟧"),
    _p("password_context", "비번 뭐였지.. 아 ⟦rlaals1629#⟧ 맞다"),
    _p("password_context", "메일 SMTP 앱 비밀번호 ⟦iosw oymn qxey lalu⟧"),
    _p("password_context", "젠킨스 admin/⟦Falcon2020#⟧"),
    # laid out: a table's password column, a user and a password on the lines after a login
    _p("password_table", "username\tpassword\nsvc_etl\t⟦mmbJNve5RnMTsv⟧"),
    _p("password_table", "| user | pw |\n|------|----|\n| ci | ⟦Xk29!abc⟧ |\n| bot | ${BOT_PW} |"),
    _p("password_table", "name,password,role\nalice,⟦Tr0ub4dor⟧,admin\nbob,⟦hunter22⟧,dev"),
    _p("password_table", f"| name | token |\n| ci | ⟦{fake(B62, 24)}⟧ |"),
    _p("password_table", "| 서비스 | 아이디 | 비밀번호 |\n| 위키 | hong | ⟦Wiki#2024⟧ |"),
    _p("credential_pair", "login for the support inbox:\nsupport@acme.io\n⟦Love2021@⟧"),
    _p("credential_pair", "공용 계정 정보\nqa-team\n⟦Qa!2024pass⟧"),
    _p("secret_context", f"twilio auth token ⟦{fake(HEX, 32)}⟧"),
    _p("secret_context", f"카카오 로그인 client secret ⟦{fake(B62, 32)}⟧"),
    _p("secret_context", f"카카오 어드민 키 ⟦{fake(HEX, 32)}⟧ 서버에서만 쓰세요"),
    _p("secret_context", f"cloudflare api token ⟦{fake(URLSAFE, 40)}⟧ — zone:dns edit only"),
    _p("secret_context", f"session cookie if you want to reproduce: sessionid=⟦{fake(HEX, 32)}⟧"),
    _p(
        "recovery_code",
        "my 2FA backup codes in case I get locked out: ⟦15680-d4335⟧ ⟦5535c-e3270⟧ ⟦537da-11661⟧",
    ),
    _p("recovery_code", "recovery code for the admin account: ⟦VWUB-3NRV-80K3-MFA9⟧"),
    _p("recovery_code", "2차 인증 백업 코드 ⟦8003 0197⟧, ⟦3749 5334⟧ 보관해 주세요"),
    _p("recovery_code", "TOTP seed for the shared admin: ⟦hatn qmc5 kp43 eblv 7tng biv7⟧"),
    _p(
        "webhook_secret",
        f"post the alerts to https://discord.com/api/webhooks/{digits(18)}/⟦{fake(URLSAFE, 68)}⟧",
    ),
    _p("cli_password", "keytool -list -storepass ⟦happy-autumn70⟧ -keystore release.jks"),
    _p(
        "url_signature",
        "presigned link, valid 7 days: https://acme.s3.amazonaws.com/r.csv?X-Amz-Expires=604800"
        f"&X-Amz-Signature=⟦{fake(HEX, 64)}⟧",
    ),
    _p("cli_password", f"docker login -u acme -p ⟦{fake(URLSAFE, 27)}⟧ registry.acme.dev"),
]
NEGATIVES += [
    # credentials talked about, data and public keys next to credential words
    "the password is in 1Password under 'staging'",
    "login for the admin panel is SSO only, no local accounts",
    "admin account locked after 5 tries, ask ops",
    "root cause was issue#1234 in the ORM",
    "ssh in as deploy@web01 and check the logs",
    "password: ENC[AES256_GCM,data:Tr4k2Q==,iv:abc,tag:def,type:str]",
    ".password-field { border-color: #e11d48; }",
    "helm install pg bitnami/postgresql --set auth.existingSecret=pg-auth",
    "client secret rotation is every 90 days",
    "the auth token lifetime is 15 minutes",
    "api token scopes: zone:dns edit only",
    "backup codes are printed in the safe, not here",
    "recovery codes: see the vault entry",
    "sessionid=$SESSION_ID in the curl example",
    "keytool -list -storepass $STOREPASS -keystore release.jks",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAcQbV1aiDuK+0ryLP+nD6\n"
    "-----END PUBLIC KEY-----",
    "로그인은 SSO로만 돼요",
    "계정 잠기면 ops 채널에 물어보세요",
    "비밀번호 정책은 12자 이상이에요",
    "백업 코드는 금고에 있어요",
    # versions and names with an exclamation mark after a login word, "admin" or "still"
    "the admin page is built with React18!",
    "still on Node20!! ugh",
    "root cause was in v2.0-beta!",
    "the admin dashboard uses Chart.js4!",
    "still failing on test_login2!",
    "account page redesign by Jin-woo#2 team!",
    "sudo apt install python3.12-venv!",
    "the password thing is fixed in React18!",
    "login: see src/Main2! for details",
    # tables and lines that name a password column or a login and give none
    "| model | token |\n|---|---|\n| gpt-4 | 8192 |",
    "password,length\nmin,12",
    "| step | password |\n| 1 | see vault |",
    "| field | type |\n|---|---|\n| password | string |",
    "Column | Meaning\npassword | the hash of it\ntoken | bearer",
    "login steps:\nssh web01\nsudo -i now",
    "account:\nalice\nadmin",
    "| 항목 | 비밀번호 |\n| 위키 | 금고에 있어요 |",
]

# -- said rather than pasted: lock codes, one-time codes, corrections, phrases (_spoken) --------

_SEED_WORDS = "harbor velvet quiet lemon fossil arrow pencil tundra mellow canyon bishop ripple"
POSITIVES += [
    _p("lock_code", "the server cage combo is ⟦41-07-26⟧, spin left first"),
    _p("lock_code", "garage keypad: ⟦5 8 2 0⟧ then enter"),
    _p("lock_code", "창고 키패드 번호 ⟦7351#⟧ 누르면 열려요"),
    _p("lock_code", "금고 비밀번호는 ⟦2-44-19⟧ 이에요"),
    _p("one_time_code", "the verification code is ⟦604182⟧, quick before it expires"),
    _p("one_time_code", "인증번호 [⟦583920⟧] 입력해 주세요"),
    _p("one_time_code", "OTP ⟦4821-0937⟧ 왔어요, 3분 안에 넣어야 해요"),
    _p("password_context", "pw is ⟦mesa-2291⟧, not ⟦mesa-2219⟧, my bad"),
    _p("password_context", "공용 계정 비번은 팀명+연도라서 ⟦orbit2026⟧ 입니다"),
    _p("password_context", "the pw has spaces in it: '⟦river stone 88⟧' exactly"),
    _p("password_context", "diceware for the vault: ⟦amber-kettle-puzzle-lotus⟧"),
    _p("seed_phrase", f"wallet seed phrase: ⟦{_SEED_WORDS}⟧"),
    _p("sentry_dsn_key", f"SENTRY_DSN=https://⟦{fake(HEX, 32)}⟧@o4411.ingest.sentry.io/771"),
]
NEGATIVES += [
    "the combo box lists 2048 rows",
    "password rotation is every 90 days since 2024-06-11",
    "the error code is 500123 on the gateway",
    "use Python 3.12, not 3.11, for the build",
    "deploy web-7781, not web-7718, to the canary pool",
    "the seed phrase is the list of words you wrote down when you set up the wallet",
    "recovery codes are stored offline by the security team",
    "암호화 방식은 AES-256-GCM이에요",
    "api_key: xxxx-xxxx-xxxx 부분은 본인 키로 바꿔서 쓰세요",
    "the payload is base64 of the file name: cmVwb3J0X2ZpbmFsLnBkZg== decodes to report_final.pdf",
]

# -- by the file format that holds them (_files), and their look-alikes -------------------------

_NPM_AUTH = base64.b64encode(b"ci-publisher:" + fake(B62, 20).encode()).decode()
_PUTTY_PUBLIC = "AAAAC3NzaC1lZDI1NTE5AAAAI" + fake(B64, 43)
POSITIVES += [
    _p("npmrc_auth", f".npmrc for the private registry:\n//npm.acme.dev/:_auth=⟦{_NPM_AUTH}⟧"),
    _p("npmrc_auth", f"registry=https://npm.acme.dev/\n_password=⟦{fake(B64, 28)}=⟧\nemail=a@b.io"),
    _p("pgpass_password", "pgpass entry:\nlocalhost:5432:app:app_user:⟦Wq9!xLz2Pq⟧"),
    _p("pgpass_password", "*:*:*:replicator:⟦rep-9f3kQ2z⟧"),
    _p("pgpass_password", "~/.pgpass 에 추가\n10.2.0.7:6432:billing:report:⟦t7Vx\\:Qm22z⟧"),
    _p(
        "private_key",
        f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\n{_PUTTY_PUBLIC}\n"
        f"Private-Lines: 2\n⟦{fake(B64, 64)}\n{fake(B64, 20)}==⟧\nPrivate-MAC: {fake(HEX, 64)}",
    ),
    _p("connect_string_password", "sqlplus system/⟦Manager#77⟧@//db01:1521/XEPDB1"),
    _p("connect_string_password", "jdbc:oracle:thin:hr/⟦hr_Passw0rd⟧@db.acme.io:1521:ORCL"),
    _p("connect_string_password", "exp scott/⟦Tiger2024⟧ file=dump.dmp 로 덤프 떠 주세요"),
    _p(
        "variable_default",
        'variable "admin_password" {\n  type    = string\n  default = "⟦Zr8#kPq2Lm⟧"\n}',
    ),
    _p(
        "variable_default",
        'variable "license" {\n  sensitive = true\n  default   = "⟦LIC-88Q2-ZZ71⟧"\n}',
    ),
    _p("password_context", "gmail app password for the CI mailer is ⟦qpwo eiru tyal skdj⟧"),
    _p("recovery_code", "Authenticator 앱에 수동 입력할 키: ⟦m3kd 7hq2 pz5x wq4r⟧"),
    _p("password_assignment", "web01 ansible_host=10.0.0.4 ansible_become_pass=⟦Sud0!rW9k⟧"),
    _p("password_prose", "the wifi password is literally ⟦letmein42⟧ lol"),
    _p("password_prose", "the passphrase is ⟦purple otter window lantern⟧ (all lower case)"),
    _p("password_context", "oops, the vpn pw is ⟦relay-5521⟧, not ⟦relay-5512⟧"),
    _p("password_context", "it's ⟦Hunter2024!⟧ not ⟦Hunter2023!⟧—the old one expired"),
    _p("lock_code", "gate keypad is fussy, key in ⟦550913⟧ and wait for the beep"),
    _p("lock_code", "공동현관 ⟦0427#⟧ 누르고 올라오세요"),
]
NEGATIVES += [
    "_auth=${NPM_AUTH}",
    "set _auth in your .npmrc, never in package.json",
    "INFO:12:main:worker:started",
    "the format is hostname:port:database:username:password",
    "db.internal:5432:app:alice:$PGPASSWORD",
    f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\n{_PUTTY_PUBLIC}",
    "sqlplus / as sysdba",
    "jdbc:oracle:thin:@//db01:1521/XEPDB1 with the wallet",
    "sqlplus $DB_USER/$DB_PASS@orcl",
    "npm install @acme/ui/button@1.2.0 again",
    'variable "password_length" {\n  default = "16"\n}',
    'variable "db_password" {\n  type      = string\n  sensitive = true\n}',
    'variable "region" {\n  default = "us-east-1"\n}',
    "app password for the CI mailer: make sure your mail host allows it",
    "otp flow: send code then wait",
    "ansible_become_pass={{ vault_become_pass }}",
    "the password is just wrong, reset it",
    "the passphrase is four random words (diceware)",
    "the tag is release-2024, not release-2023",
    "Enter 3 for the menu on the alarm panel",
    "on the door sign-up form enter 2024 as the year",
    "type in 8080 as the port. the door sensor needs its own panel",
]

# -- found on a third blind corpus: provider shapes, Go DSNs, htpasswd, codes said in chat ------

_ATLASSIAN = "ATATT3x" + fake(URLSAFE, 170) + "=" + fake("0123456789ABCDEF", 8)
_MAPBOX = "sk." + "eyJ1Ijoi" + fake(URLSAFE, 40) + "." + fake(URLSAFE, 22)
_FCM = "AAAA" + fake(URLSAFE, 7) + ":APA91b" + fake(URLSAFE, 134)
_AZURE_SECRET = fake(B62, 3) + "8Q~" + fake(URLSAFE + "~.", 34)
POSITIVES += [
    _p("atlassian_api_token", f"jira token for the release bot: ⟦{_ATLASSIAN}⟧"),
    _p("mapbox_secret_token", f"MAPBOX_DOWNLOADS_TOKEN=⟦{_MAPBOX}⟧"),
    _p("firebase_server_key", f"FCM legacy key ⟦{_FCM}⟧ (being retired)"),
    _p("azure_client_secret", f"app registration secret value ⟦{_AZURE_SECRET}⟧ copy it now"),
    _p("provider_token", f"토스 라이브 키 ⟦live_sk_{fake(B62, 24)}⟧ 로 교체"),
    _p("url_password", 'sql.Open("mysql", "svc:⟦Qv7!mLp2x⟧@tcp(10.0.0.9:3306)/shop")'),
    _p("cli_password", "htpasswd -bc /etc/nginx/.htpasswd ops ⟦St4tus#Board⟧"),
    _p("recovery_code", "github recovery codes:\n⟦k2vd-9qpe⟧\n⟦m0xa-77tr⟧"),
    _p("seed_phrase", f"dev wallet seed: ⟦{_SEED_WORDS}⟧"),
    _p("one_time_code", "backup code ⟦58210394⟧ is the last one left"),
    _p("one_time_code", "OTP 코드 ⟦482 917⟧ 입력해 주세요"),
    _p("lock_code", "비상구 도어 번호 ⟦4172*⟧ 누르면 열려요"),
    _p("password_context", "운영 DB 암호가 뭐였지... 아 ⟦Prd-Db-7731⟧ 이었어요"),
    _p(
        "credential_pair",
        "which account does the kiosk use?\nfound it: kiosk@shop.io / ⟦Till-Open-42⟧",
    ),
]
NEGATIVES += [
    "pk.eyJ1IjoiYWNtZSIsImEiOiJjbHh5ejEyMzQifQ.mapbox_public_token_is_fine",
    "htpasswd -c /etc/nginx/.htpasswd ops",
    'sql.Open("mysql", dsn) // dsn := os.Getenv("MYSQL_DSN")',
    "the OTP code is 6 digits and arrives by SMS",
    "backup code flow: generate ten, show once",
    "비상구 도어 번호 바뀌었대요, 경비실에 물어보세요",
    "seed the dev database with make seed",
    "what's the login flow?\nit goes web / Mobile-2 then the SSO page",
]

# Credentials in prose that no rule names, found by the learned detector (``_learned``): its
# kind is ``credential``. Written with the detector's first version.
POSITIVES += [
    _p("credential", "the safe opens on ⟦36 24 12⟧, don't lose it"),
    _p("credential", "the kiosk code came through as ⟦qwtz mfbx ploa hyrd⟧"),
    _p("credential", "spell it for the kiosk: ⟦t-u-l-i-p-7-7⟧"),
    _p("credential", "the 7z archive is protected with ⟦Vendor!Drop-88⟧"),
    _p("credential", "금고 번호는 ⟦사과나무2024⟧ 입니다"),
]

# Payment cards (``_cards``): a number by its issuer's digits and its Luhn digit, a security
# code by its name.
POSITIVES += [
    _p("card_number", "company Amex for the invoice: ⟦3715 482093 16206⟧, exp 09/27"),
    _p("card_number", "카드번호: ⟦5412-7534-1298-0042⟧ 유효기간 11/26"),
    _p("card_security_code", "exp 09/27, CVC ⟦418⟧ — receipt to finance"),
    _p("card_security_code", "보안코드는 ⟦7741⟧ 이에요"),
]
NEGATIVES += [
    "test with 4242 4242 4242 4242 in Stripe's test mode",
    "order 1234 5678 9012 3456 shipped",
    "the cvv field takes 3 or 4 digits",
]

# -- provider prefixes merged from gitleaks' rule set (MIT): one token of each provider, in the ----
# shape the provider prints it, written as people paste it; and each prefix as a word or an
# identifier, which is not a token.

LOWER_DIGITS = string.ascii_lowercase + string.digits


def _uuid() -> str:
    return f"{fake(HEX, 8)}-{fake(HEX, 4)}-{fake(HEX, 4)}-{fake(HEX, 4)}-{fake(HEX, 12)}"


_TEAMS_PATH = (
    f"{_uuid()}@{_uuid()}/Incoming" + f"Webhook/{fake(HEX, 32)}/{_uuid()}/V2{fake(URLSAFE, 40)}"
)
POSITIVES += [
    # a prefix that is its provider's alone: any body counts
    _p("provider_token", f"ADOBE_CLIENT_SECRET=⟦{'p8' + 'e-' + fake(B62, 32)}⟧"),
    _p("provider_token", f"artifactory api key ⟦{'AK' + 'Cp' + fake(B62, 69)}⟧ (old style)"),
    _p("provider_token", f"clojars deploy token: ⟦{'CLOJ' + 'ARS_' + fake(LOWER_DIGITS, 60)}⟧"),
    _p("provider_token", f"DO refresh token ⟦{'do' + 'r_v1_' + fake(HEX, 64)}⟧"),
    _p("provider_token", f"doppler run --token ⟦{'dp.' + 'pt.' + fake(B62, 43)}⟧ -- npm start"),
    _p("provider_token", f"DUFFEL_ACCESS_TOKEN=⟦{'duffel' + '_test_' + fake(URLSAFE, 43)}⟧"),
    _p("provider_token", f"easypost key for the label printer ⟦{'EZ' + 'AK' + fake(B62, 54)}⟧"),
    _p("provider_token", f"플러터웨이브 키 ⟦{'FLWSECK' + '_TEST-' + fake(HEX, 32) + '-X'}⟧ 예요"),
    _p("provider_token", f"fly deploy -a shop --access-token ⟦{'fo' + '1_' + fake(URLSAFE, 43)}⟧"),
    _p("provider_token", f"frame.io: ⟦{'fio' + '-u-' + fake(URLSAFE, 64)}⟧"),
    _p("provider_token", f"HEROKU_API_KEY=⟦{'HR' + 'KU-AA' + fake(URLSAFE, 58)}⟧"),
    _p("provider_token", f"intra secret ⟦{'s-s4' + 't2ud-' + fake(HEX, 64)}⟧"),
    _p(
        "provider_token",
        f"pscale auth login --service-token ⟦{'pscale' + '_tkn_' + fake(B62, 43)}⟧",
    ),
    _p("provider_token", f"mysql password from the console: ⟦{'pscale' + '_pw_' + fake(B62, 43)}⟧"),
    _p("provider_token", f"postman api key ⟦{'PM' + 'AK-' + fake(HEX, 24) + '-' + fake(HEX, 34)}⟧"),
    _p("provider_token", f"PREFECT_API_KEY=⟦{'pn' + 'u_' + fake(B62, 36)}⟧"),
    _p("provider_token", f"readme key ⟦{'rd' + 'me_' + fake(LOWER_DIGITS, 70)}⟧"),
    _p("provider_token", f"scalingo login --api-token ⟦{'tk' + '-us-' + fake(URLSAFE, 48)}⟧"),
    _p("provider_token", f"brevo: ⟦{'xkey' + 'sib-' + fake(HEX, 64) + '-' + fake(B62, 16)}⟧"),
    _p("provider_token", f"settlemint PAT ⟦{'sm' + '_pat_' + fake(B62, 16)}⟧"),
    _p("provider_token", f"Shippo live key ⟦{'shippo' + '_live_' + fake(HEX, 40)}⟧"),
    _p("provider_token", f"typeform personal token ⟦{'tf' + 'p_' + fake(URLSAFE, 59)}⟧"),
    _p(
        "provider_token", f"dnclient enroll ⟦{'dn' + 'key-' + fake(B62, 26) + '-' + fake(B62, 52)}⟧"
    ),
    _p("gitlab_token", f"kas agent token ⟦{'gl' + 'agent-' + fake(URLSAFE, 50)}⟧"),
    _p("gitlab_token", f"gitlab-runner register --token ⟦{'GR13' + '48941' + fake(URLSAFE, 20)}⟧"),
    # a prefix that words and identifiers share: the provider's own length and alphabet
    _p("aws_access_key_id", f"bearer key id ⟦{'AB' + 'IA' + fake(UPPER_DIGITS, 16)}⟧ from STS"),
    _p("huggingface_token", f"HF org token ⟦{'api' + '_org_' + fake(string.ascii_letters, 34)}⟧"),
    _p("gitlab_token", f"Cookie: _gitlab_session=⟦{fake(HEX, 32)}⟧"),
    _p(
        "provider_token",
        "1Password secret key: ⟦A3-"
        + "-".join(fake(UPPER_DIGITS, n) for n in (6, 11, 5, 5, 5))
        + "⟧",
    ),
    _p("provider_token", f"OP_SERVICE_ACCOUNT_TOKEN=⟦{'ops_' + 'eyJ' + fake(B64, 280)}⟧"),
    _p("provider_token", f"airtable ⟦{'pat' + fake(B62, 14) + '.' + fake(HEX, 64)}⟧"),
    _p("provider_token", f"알리바바 AccessKey ID ⟦{'LT' + 'AI' + fake(B62, 20)}⟧ 입니다"),
    _p("provider_token", f"jfrog reference token ⟦{'cmV' + 'md' + fake(B62, 59)}⟧"),
    _p(
        "provider_token",
        "AUTHRESS_KEY=⟦"
        + f"sc_{fake(LOWER_DIGITS, 12)}.{fake(LOWER_DIGITS, 5)}.acc-{fake(LOWER_DIGITS, 20)}"
        + f".{fake(B64, 60)}⟧",
    ),
    _p("provider_token", f"bedrock key ⟦{'AB' + 'SK' + fake(B64, 132)}⟧"),
    _p(
        "provider_token",
        "AWS_BEARER_TOKEN_BEDROCK=⟦bedrock-api-key-"
        + "YmVkcm9jay5hbWF6b25hd3MuY29t"
        + fake(B64, 300)
        + "⟧",
    ),
    _p("provider_token", f"clickhouse cloud secret ⟦{'4b' + '1d' + fake(B62, 38)}⟧"),
    _p("provider_token", f"origin CA key ⟦{'v1' + '.0-' + fake(HEX, 24) + '-' + fake(HEX, 146)}⟧"),
    _p("provider_token", f"databricks configure --token ⟦{'da' + 'pi' + fake(HEX, 32)}⟧"),
    _p(
        "provider_token",
        f"DT_API_TOKEN=⟦{'dt0' + 'c01.' + fake(UPPER_DIGITS, 24) + '.' + fake(UPPER_DIGITS, 64)}⟧",
    ),
    _p("provider_token", f"page token ⟦{'EA' + 'AM' + fake(B62, 180)}⟧ expires in 60 days"),
    _p("provider_token", f"square prod access token ⟦{'EA' + 'AA' + fake(URLSAFE, 60)}⟧"),
    _p("provider_token", f"encryption key ⟦{'FLWSECK' + '_TEST' + fake(HEX, 12)}⟧"),
    _p("provider_token", f"FLY_API_TOKEN=⟦{'fm' + '2_' + fake(B64, 220)}⟧"),
    _p("provider_token", f"grafana key ⟦{'eyJr' + 'Ijoi' + fake(B62, 90)}⟧"),
    _p("provider_token", f"grafana cloud access policy token ⟦{'gl' + 'c_' + fake(B64, 120)}=⟧"),
    _p(
        "provider_token",
        "harness: ⟦" + "pat." + fake(URLSAFE, 22) + "." + fake(B62, 24) + "." + fake(B62, 20) + "⟧",
    ),
    _p(
        "provider_token",
        f'credentials "app.terraform.io" {{ token = "⟦{fake(B62, 14)}.atlas'
        + f'v1.{fake(URLSAFE, 67)}⟧" }}',
    ),
    _p("provider_token", f"infracost configure set api_key ⟦{'ico' + '-' + fake(B62, 32)}⟧"),
    _p("provider_token", f"GeoIP license ⟦{fake(B62, 6)}_{fake(B62, 29)}_mm" + "k⟧"),
    _p("provider_token", f"octopus ⟦{'API' + '-' + fake(UPPER_DIGITS, 26)}⟧"),
    _p("provider_token", f"newrelic user key ⟦{'NR' + 'AK-' + fake(UPPER_DIGITS, 27)}⟧"),
    _p("provider_token", f"insert key ⟦{'NR' + 'II-' + fake(LOWER_DIGITS + '-', 32)}⟧"),
    _p("provider_token", f"oc login --token=⟦{'sha256' + '~' + fake(URLSAFE, 43)}⟧"),
    _p("provider_token", f"pulumi login with ⟦{'pu' + 'l-' + fake(HEX, 40)}⟧"),
    _p("provider_token", f"gem credentials: ⟦{'rubygems' + '_' + fake(HEX, 48)}⟧"),
    _p("provider_token", f"SRC_ACCESS_TOKEN=⟦{'sg' + 'p_' + fake(HEX, 16) + '_' + fake(HEX, 40)}⟧"),
    _p("provider_token", f"sonar-scanner -Dsonar.token=⟦{'sq' + 'p_' + fake(HEX, 40)}⟧"),
    _p("provider_token", f"yandex cloud api key ⟦{'AQ' + 'VN' + fake(URLSAFE, 36)}⟧"),
    _p("provider_token", f"plaid item token ⟦access-production-{_uuid()}⟧"),
    _p("provider_token", f"Teams hook https://acme.webhook.office.com/webhookb2/⟦{_TEAMS_PATH}⟧"),
    _p("provider_token", f"export VAULT_TOKEN=⟦{'s' + '.' + fake(B62, 24)}⟧"),
]
NEGATIVES += [
    "the dapi endpoint returns JSON",
    "dapi is the prefix of Databricks tokens",
    "host = s.example.com",
    "name = s.strip().lower()",
    "data = s.ReadAllBytesFromStreamAsync(buf)",
    "timeout = s.DefaultConnectionTimeout",
    "PR: pul-request template updated",
    "glc_config = load_grafana_config()",
    '<i class="ico-arrow-left ico-ArrowLeftCircleOutlineLargeIcon2"></i>',
    "API-V2ENDPOINTCONFIGURATIONSET is the section name",
    "tk-us-east-1 is the Scalingo region",
    "rubygems_version = '3.4.10'",
    "sqa_team owns the nightly run",
    "api_org_identifier_mapping is a dict",
    "PMAK-, pnu_, rdme_ and tfp_ are token prefixes, EAAA and LTAI too",
    "an EC2 t1.micro, an access-production-docs page, a key-value store",
    "the commit is 4b1d" + fake(HEX, 38),
]
