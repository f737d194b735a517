"""Realistic text with and without credentials, for :mod:`squad.text.secrets`.

``POSITIVES`` are ``(kind, text)`` pairs where each credential value is wrapped in ⟦ ⟧: the
test strips the brackets, then expects exactly those spans to be found with that kind and
replaced by ``[REDACTED:<kind>]``, everything else untouched. ``NEGATIVES`` must yield nothing.

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
    _p("secret_assignment", f"client_secret: ⟦{GOOGLE_CLIENT_SECRET}⟧"),
    _p(
        "secret_assignment",
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
