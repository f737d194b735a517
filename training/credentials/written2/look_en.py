"""English look-alikes: the same work contexts with no secret in them."""

ROWS = [
    # log lines with ids, hashes, counts
    (
        "log line, ids",
        "2026-03-11T04:12:55.871Z INFO  http request_id={reqid} trace_id={trace} span_id={span} method=POST path=/v1/charges status=201 duration_ms={ms}",
    ),
    (
        "log line, ids",
        "[gateway] upstream=billing-svc x-request-id={uuid} cf-ray={ray} status=502 retry=1",
    ),
    (
        "log line, counts",
        "sessions: active={n} idle={n} expired_last_hour={n} (token cache hit ratio 0.97)",
    ),
    (
        "log line, hashes",
        'level=info msg="artifact uploaded" name=agent-linux-amd64.tar.gz sha256={sha256} size=48211993',
    ),
    (
        "log line, auth without secret",
        "Mar 02 10:21:44 bastion sshd[{pid}]: Accepted publickey for deploy from {ip} port 53122 ssh2: ED25519 {fp}",
    ),
    (
        "log line, auth without secret",
        "Mar 02 10:22:01 bastion sshd[{pid}]: Failed password for invalid user oracle from 185.220.101.4 port 44120 ssh2",
    ),
    (
        "log line, masked",
        'DEBUG requests: POST https://api.partner.example/oauth/token data={"grant_type": "client_credentials", "client_id": "shipping-svc", "client_secret": "********"}',
    ),
    (
        "log line, ids",
        "{date} {time} WARN  [kafka-producer-network-thread | producer-1] o.a.k.c.NetworkClient - [Producer clientId=producer-1] Connection to node 3 (broker-3/{ip}:9092) could not be established",
    ),
    (
        "log line, ids",
        '{"ts":"{date}T{time}Z","level":"error","msg":"payment declined","order_id":"ord_{low8}","idempotency_key":"{uuid}","code":"card_declined"}',
    ),
    (
        "log line, auth without secret",
        "auth-svc | token validated sub=user_{d6} aud=web exp=1760{d6} kid={hex8} alg=RS256",
    ),
    (
        "log line, masked",
        "INFO  DataSourceConfig - url=jdbc:postgresql://pg-ha:5432/claims user=claims_svc password=[PROTECTED]",
    ),
    (
        "log line, auth without secret",
        "WARN  LoginService - 5 failed password attempts for user j.park from {ip}; account locked for 15 min",
    ),
    # stack traces without credentials
    (
        "stack trace",
        (
            "[{date} 02:00:01] nightly: starting warehouse load (run {d4})",
            "[{date} 02:00:01] nightly: config loaded from /etc/nightly/config.yaml",
            "Traceback (most recent call last):",
            '  File "/srv/app/jobs/nightly.py", line 48, in <module>',
            "    conn = psycopg2.connect(dsn=os.environ['WAREHOUSE_DSN'])",
            '  File "/usr/lib/python3.12/os.py", line 714, in __getitem__',
            "    raise KeyError(key) from None",
            "KeyError: 'WAREHOUSE_DSN'",
            "[{date} 02:00:01] nightly: exit status 1",
        ),
    ),
    (
        "stack trace",
        (
            "java.lang.IllegalStateException: Failed to load ApplicationContext",
            "Caused by: org.springframework.boot.context.properties.bind.BindException: Failed to bind properties under 'spring.datasource.password' to java.lang.String",
            "    Reason: Could not resolve placeholder 'DB_PASSWORD' in value \"${DB_PASSWORD}\"",
        ),
    ),
    (
        "stack trace",
        (
            "botocore.exceptions.ClientError: An error occurred (ExpiredToken) when calling the GetObject operation: The security token included in the request is expired",
            "RequestId: {up8}{up8}",
        ),
    ),
    (
        "stack trace",
        (
            "Error: connect ECONNREFUSED {ip}:{port}",
            "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {",
            "  errno: -111,",
            "  code: 'ECONNREFUSED',",
            "  syscall: 'connect'",
            "}",
        ),
    ),
    (
        "stack trace",
        "redis.exceptions.AuthenticationError: invalid username-password pair or user is disabled. (pool pid {pid}, connection #{n})",
    ),
    # CI output
    (
        "ci output, masked",
        (
            "{date}T08:11:02.5512Z ##[group]Run actions/checkout@v4",
            "{date}T08:11:02.5514Z with:",
            "{date}T08:11:02.5515Z   fetch-depth: 0",
            "{date}T08:11:03.9021Z ##[endgroup]",
            "{date}T08:11:04.0117Z ##[group]Run docker/login-action@v3",
            "{date}T08:11:04.0119Z with:",
            "{date}T08:11:04.0120Z   registry: ghcr.io",
            "{date}T08:11:04.0121Z   username: release-bot",
            "{date}T08:11:04.0122Z   password: ***",
            "{date}T08:11:04.8810Z Login Succeeded!",
            "{date}T08:11:04.8812Z ##[endgroup]",
            "{date}T08:11:05.0031Z ##[group]Run docker build -t ghcr.io/acme/api:{sha7} .",
        ),
    ),
    (
        "ci output, ids",
        (
            "#14 exporting to image",
            "#14 exporting layers 2.1s done",
            "#14 writing image sha256:{sha256} done",
            "#14 naming to ghcr.io/acme/api:{sha7} done",
        ),
    ),
    (
        "ci output, ids",
        "Build #{build} (commit {sha}) finished in 6m{d2}s - 412 tests passed, 3 skipped",
    ),
    (
        "ci output, placeholder",
        (
            "- name: Publish",
            "  run: npm publish",
            "  env:",
            "    NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
        ),
    ),
    (
        "ci output, masked",
        "[Pipeline] withCredentials\nMasking supported pattern matches of $NEXUS_PASS\n[Pipeline] sh\n+ mvn -s settings.xml deploy -Dnexus.password=****",
    ),
    (
        "ci output, ids",
        "Artifact cache restored from key: Linux-gradle-{sha256}",
    ),
    (
        "ci output, warning",
        "WARNING: The secret variable DEPLOY_TOKEN is not set. Defaulting to a blank string.",
    ),
    # shell history, no values
    (
        "shell history",
        (
            "  512  kubectl get pods -n payments",
            "  513  kubectl logs payments-api-{pod} -n payments --tail 50",
            "  514  export STRIPE_KEY=$(op read op://Payments/Stripe/secret)",
            "  515  python scripts/replay_webhooks.py --since 2h",
        ),
    ),
    (
        "shell history",
        "$ read -s PGPASSWORD && export PGPASSWORD && pg_dump -h replica.db.internal -U readonly analytics > /tmp/analytics.sql",
    ),
    (
        "shell history",
        "$ git log --oneline -3\n{sha7} fix: retry token refresh on 401\n{sha7} chore: bump axios to {ver}\n{sha7} feat: rotate signing key monthly",
    ),
    (
        "shell history",
        "$ ssh-keygen -lf ~/.ssh/id_ed25519.pub\n256 {fp} deploy@build-01 (ED25519)",
    ),
    (
        "shell history",
        'aws sts get-caller-identity → { "UserId": "AROA{up8}{up8}:ci", "Account": "{acct}", "Arn": "arn:aws:sts::{acct}:assumed-role/ci/ci" }',
    ),
    # docker
    (
        "docker",
        "docker run -d --name metabase --env-file /etc/metabase/env -p 3000:3000 metabase/metabase@sha256:{sha256}",
    ),
    (
        "docker",
        (
            "  rabbitmq:",
            "    image: rabbitmq:3.13-management",
            "    environment:",
            "      RABBITMQ_DEFAULT_USER: orders",
            "      RABBITMQ_DEFAULT_PASS_FILE: /run/secrets/rabbit_pass",
            "    secrets:",
            "      - rabbit_pass",
        ),
    ),
    (
        "docker",
        "$ docker images --digests\nREPOSITORY      TAG     DIGEST                 IMAGE ID\nacme/worker     {ver}   sha256:{sha256}   {hex8}{hex8}",
    ),
    (
        "docker",
        '{"auths": {"registry.corp.example:5000": {}}, "credsStore": "desktop"}',
    ),
    (
        "docker",
        "$ docker ps --format '{{.ID}} {{.Image}} {{.Status}}'\n{hex8}{hex8} acme/worker:{ver} Up 3 hours\n{hex8}{hex8} redis:7.2 Up 3 hours",
    ),
    # kubernetes
    (
        "kubernetes, reference",
        (
            "apiVersion: apps/v1",
            "kind: Deployment",
            "metadata:",
            "  name: billing-api",
            "spec:",
            "  replicas: 3",
            "  template:",
            "    spec:",
            "      containers:",
            "      - name: api",
            "        image: ghcr.io/acme/billing@sha256:{sha256}",
            "        env:",
            "        - name: DB_PASSWORD",
            "          valueFrom:",
            "            secretKeyRef: {name: billing-db, key: secret_value}",
        ),
    ),
    (
        "kubernetes, listing",
        "$ kubectl get secrets -n monitoring\nNAME                 TYPE     DATA   AGE\ngrafana-admin        Opaque   2      41d\nalertmanager-config  Opaque   1      41d",
    ),
    (
        "kubernetes, template",
        (
            "stringData:",
            "  password: {{ .Values.postgres.password | quote }}",
            "  username: {{ .Values.postgres.user }}",
        ),
    ),
    (
        "kubernetes, external secret",
        (
            "apiVersion: external-secrets.io/v1beta1",
            "kind: ExternalSecret",
            "spec:",
            "  secretStoreRef: { name: vault-backend, kind: ClusterSecretStore }",
            "  data:",
            "  - secretKey: api_token",
            "    remoteRef: { key: kv/payments/gateway, property: token }",
        ),
    ),
    (
        "kubernetes, describe",
        "Name: smtp-relay\nNamespace: default\nType: Opaque\n\nData\n====\nrelay_auth:  24 bytes\nrelay_user:  9 bytes",
    ),
    # terraform
    (
        "terraform, variable",
        (
            'variable "db_username" {',
            "  type    = string",
            '  default = "reporting"',
            "}",
            "",
            'variable "db_password" {',
            "  type      = string",
            "  sensitive = true",
            '  description = "Master password; set TF_VAR_db_password in CI"',
            "}",
        ),
    ),
    (
        "terraform, plan output",
        (
            "  # aws_db_instance.reporting will be updated in-place",
            '  ~ resource "aws_db_instance" "reporting" {',
            '        id       = "reporting-{low8}"',
            "      ~ password = (sensitive value)",
            "    }",
        ),
    ),
    (
        "terraform, reference",
        "password = data.aws_secretsmanager_secret_version.db.secret_string",
    ),
    (
        "terraform, output",
        'Outputs:\n\ncluster_endpoint = "https://{hex32}.gr7.ap-northeast-2.eks.amazonaws.com"\nkms_key_arn = "arn:aws:kms:ap-northeast-2:{acct}:key/{uuid}"',
    ),
    # ansible
    (
        "ansible, vault",
        (
            "mysql_app_password: !vault |",
            "  $ANSIBLE_VAULT;1.1;AES256",
            "  (encrypted block omitted from this message)",
        ),
    ),
    (
        "ansible, template",
        "    password: \"{{ lookup('community.hashi_vault.hashi_vault', 'secret=kv/data/mysql:app') }}\"",
    ),
    (
        "ansible, output",
        'TASK [postgres : set replication password] changed: [db2] => {"changed": true, "censored": "the output has been hidden due to the fact that \'no_log: true\' was specified for this result"}',
    ),
    (
        "ansible, inventory",
        "[webservers]\nweb1 ansible_host={ip} ansible_user=deploy ansible_port=2222\nweb2 ansible_host={ip} ansible_user=deploy ansible_port=2222",
    ),
    # .env templates and placeholders
    (
        "env file, placeholders",
        (
            "# .env.example - copy to .env and fill in",
            "NODE_ENV=development",
            "PORT=8080",
            "SESSION_SECRET=",
            "SENDGRID_KEY=<your-sendgrid-key>",
        ),
    ),
    (
        "env file, references",
        "DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@${DB_HOST}:5432/${DB_NAME}",
    ),
    (
        "env file, placeholders",
        "OPENAI_API_KEY=sk-...  # paste yours here, never commit it",
    ),
    (
        "env file, ids",
        "SENTRY_RELEASE={sha}\nBUILD_NUMBER={build}\nAPP_VERSION={ver}",
    ),
    (
        "env file, references",
        "export VAULT_TOKEN=$(vault login -method=oidc -token-only)",
    ),
    # configs with placeholders and unusual keys
    (
        "yaml config, reference",
        (
            "outputs:",
            "  elasticsearch:",
            '    hosts: ["https://es-logs:9200"]',
            "    username: beats_writer",
            '    credential: "${ES_PASSWORD}"',
        ),
    ),
    (
        "yaml config, masked",
        (
            "sftp_targets:",
            "  - host: files.partner.example",
            "    login: acme_drop",
            "    pass_phrase: <redacted>",
            "    path: /inbound/daily",
        ),
    ),
    (
        "toml config, reference",
        '[database]\ndsn = "host=pg.internal port=5432 user=ledger sslmode=require"\npasswd_file = "/run/secrets/ledger_db"',
    ),
    (
        "ini config, placeholder",
        "[client]\nuser=backup\npassword=CHANGE_ME\nhost=mysql-primary",
    ),
    (
        "json config, placeholder",
        '{"smtp": {"host": "smtp.office365.com", "port": 587, "secretValue": "{{SMTP_SECRET}}"}}',
    ),
    (
        "json config, ids",
        '{"tenantId": "{uuid}", "clientId": "{uuid}", "authority": "https://login.microsoftonline.com/{uuid}"}',
    ),
    (
        "yaml config, encrypted",
        'db_password: ENC[AES256_GCM,data:(sops ciphertext),type:str]\nsops:\n    kms: []\n    lastmodified: "{date}T{time}Z"\n    version: {ver}',
    ),
    (
        "yaml config, ids",
        "feature_flags:\n  checkout_v2: true\n  rollout_seed: {d8}\n  experiment_id: exp_{low8}",
    ),
    (
        "ini config, public",
        "[oauth]\nclient_id = {cid}\nredirect_uri = https://app.example/auth/callback\n; client secret comes from the secret manager",
    ),
    (
        "yaml config, masked",
        "spring.datasource.password: '******'  # value masked by actuator /env",
    ),
    # connection strings without passwords
    (
        "connection string, no password",
        "jdbc:postgresql://pg-ha.internal:5432/claims?user=claims_svc&sslmode=verify-full&sslrootcert=/etc/ssl/rds-ca.pem",
    ),
    (
        "connection string, no password",
        "Server=tcp:finance.database.windows.net,1433;Database=Ledger;Authentication=Active Directory Managed Identity;Encrypt=True;",
    ),
    (
        "connection string, no password",
        "Data Source=SQL01;Initial Catalog=Payroll;Integrated Security=SSPI;Connect Timeout={n}",
    ),
    (
        "connection string, reference",
        "mongodb+srv://cluster-prod.q7x1z.mongodb.net/inventory?authMechanism=MONGODB-AWS&authSource=$external",
    ),
    (
        "connection string, placeholder",
        "amqp://<user>:<password>@rabbit-01.internal:5672/%2Forders",
    ),
    (
        "connection string, no password",
        "redis://cache-prod.internal:6379/2 (no AUTH, protected by the security group)",
    ),
    (
        "connection string, no password",
        "jdbc:oracle:thin:@(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=ora-scan)(PORT=1521))(CONNECT_DATA=(SERVICE_NAME=HRPROD)))",
    ),
    (
        "connection string, masked",
        "postgresql://app:***@db.internal:5432/app_prod is what the startup banner prints",
    ),
    # HTTP requests without credentials
    (
        "http request, no auth",
        (
            "GET /healthz HTTP/1.1",
            "Host: backoffice.internal",
            "X-Request-Id: {uuid}",
            "If-None-Match: {etag}",
        ),
    ),
    (
        "http request, masked",
        "curl -H 'X-Api-Key: $API_KEY' https://api.shop.example/v2/products?cursor={cursor}",
    ),
    (
        "http request, response",
        (
            "HTTP/1.1 401 Unauthorized",
            'WWW-Authenticate: Bearer realm="api", error="invalid_token", error_description="The access token expired"',
            "X-Correlation-Id: {uuid}",
            "Content-Length: 0",
        ),
    ),
    (
        "http request, ids",
        "POST /v1/payments  Idempotency-Key: {uuid}  Stripe-Version: 2024-06-20  -> 200 req {reqid}",
    ),
    (
        "http request, redacted",
        "Request headers (from the HAR, redacted by the exporter):\n  Authorization: [hidden]\n  Cookie: [hidden]\n  X-Client-Id: web-checkout",
    ),
    (
        "http request, response",
        "Set-Cookie: __cf_bm=(not captured); Path=/; Secure; HttpOnly; SameSite=None\nCF-RAY: {ray}",
    ),
    (
        "http request, pagination",
        '{"data": [...], "has_more": true, "next_cursor": "{cursor}"}',
    ),
    # meeting notes, handover without secrets
    (
        "handover, no secret",
        (
            "Handover — on-call week 15",
            "",
            "Open issues",
            "- disk on es-data-{d1} at {d2}%, ILM should catch up by Thursday",
            "- flaky healthcheck on the payments canary, ticket OPS-{d4}",
            "",
            "Access you may need",
            "- staging k8s: kubeconfig in the team vault (entry 'stg-kube')",
            "- legacy FTP for the bank export: credentials in 1Password, item 'Bank FTP'",
            "",
            "Other",
            "- PagerDuty schedule P{up6}",
            "- back on Monday",
        ),
    ),
    (
        "meeting notes, rotation",
        "Incident review: the break-glass admin password was rotated after the call; new one is in the sealed envelope in the safe. Owner: Ana.",
    ),
    (
        "handover, access table",
        (
            "| system | user | where is the secret |",
            "|---|---|---|",
            "| Jira bot | jira-automation | vault kv/ops/jira |",
            "| Sonar | admin | 1Password 'Sonar admin' |",
        ),
    ),
    (
        "meeting notes, ids",
        "standup: PR #{d4} merged ({sha7}), staging on {ver}, load test run id {ulid}, p99 {ms}ms",
    ),
    (
        "handover, no secret",
        "the UPS management card is at 10.0.0.50, default creds were changed in March; ask facilities for the new ones, I never had them",
    ),
    # tickets talking about credentials, none given
    (
        "ticket, no secret",
        "OPS-{d4} Rotate the reporting DB password (quarterly). Steps: generate in vault, update the app's secret, restart, verify. Due {date}.",
    ),
    (
        "ticket, no secret",
        "SEC-{d3}: a Firebase key was found in the app bundle; revoked on {date}, new key is restricted to the Android package. Closing.",
    ),
    (
        "ticket, no secret",
        "Zendesk #{d5}: customer can't log in after the password reset email; reset link expired (token TTL 30 min). Sent a new link.",
    ),
    (
        "ticket, no secret",
        "INC{d7}: service account token expired at {time} UTC, batch jobs failed with 401 until the new token was mounted",
    ),
    (
        "ticket, no secret",
        "Please don't paste API keys in tickets. If you did, tell #security and we'll rotate it. Ticket {up6}-{d4}",
    ),
    (
        "ticket, ids",
        "Bug {d5}: checkout fails for tenant id {uuid} on app version {ver} (build {build}), error code E{d4}",
    ),
    # forwarded emails without secrets
    (
        "forwarded email, no secret",
        (
            "---------- Forwarded message ---------",
            "From: IT Service Desk <servicedesk@corp.example>",
            "Subject: Your VPN account",
            "",
            "Your VPN account has been created. You will receive your initial password by SMS.",
            "Username: mlee",
            "Request number: RITM{d7}",
            "",
            "Client download: https://vpn.corp.example/download",
            "Gateway: vpn-kr.corp.example (port 443)",
            "",
            "Regards,",
            "IT Service Desk | ext. 4400",
        ),
    ),
    (
        "forwarded email, no secret",
        "Fwd: Password expiry notice — your corp password expires in 5 days. Change it at https://passwordreset.corp.example. IT will never ask for your password.",
    ),
    (
        "forwarded email, ids",
        (
            "Fwd: API access for Acme Logistics",
            "> Your sandbox client_id is acme-logistics-sandbox.",
            "> The client secret will be delivered through our secure portal (case #{d6}).",
        ),
    ),
    # assistant and tool messages without secrets
    (
        "assistant, no secret",
        "I couldn't find the database password in the repo — it's read from `DB_PASSWORD` at startup. Want me to add it to the `.env.example` as a placeholder?",
    ),
    (
        "tool output, masked",
        '{"tool": "get_secret", "name": "stripe/prod", "result": {"value": "<redacted>", "version": 7, "updated": "{date}"}}',
    ),
    (
        "assistant, no secret",
        "Done: rotated the Slack bot token in the secret store and restarted the deployment. The old token was revoked at {time}.",
    ),
    (
        "tool output, ids",
        "tool_result: git rev-parse HEAD → {sha}",
    ),
    (
        "assistant, no secret",
        "The 401 comes from the token having expired (exp {d10}); the refresh token path isn't wired up. No credentials needed from you.",
    ),
    (
        "tool output, listing",
        "tool_result: ls ~/.ssh\nauthorized_keys  config  id_ed25519.pub  known_hosts",
    ),
    # codes that aren't one-time codes
    (
        "numbers near code words",
        "Your order code is ORD-{d6}; tracking number {d12}",
    ),
    (
        "numbers near code words",
        "exit code 137 (OOM) on job {build}; HTTP code 503 from the upstream; error code 0x80070005",
    ),
    (
        "numbers near code words",
        "MFA is enforced for all accounts since {date}; 12 users still need to enroll. Codes come from the authenticator app, never by email.",
    ),
    (
        "numbers near code words",
        "recovery codes were regenerated for the ops account and printed; the old set is invalid. Nothing to copy here.",
    ),
    (
        "numbers near code words",
        "The pin for the terraform provider is ~> {ver}, and the aws provider is pinned to {ver}",
    ),
    # public keys and certs
    (
        "public key",
        "ssh-ed25519 {sshpub} deploy@build-01",
    ),
    (
        "public key",
        (
            "-----BEGIN PUBLIC KEY-----",
            "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{b20}",
            "{pem}",
            "-----END PUBLIC KEY-----",
        ),
    ),
    (
        "certificate",
        (
            "ca.crt for the internal CA (public, safe to share):",
            "-----BEGIN CERTIFICATE-----",
            "MIIDdzCCAl+gAwIBAgIU{b24}{b20}",
            "{pem}",
            "{pem}",
            "-----END CERTIFICATE-----",
        ),
    ),
    (
        "public key",
        "GPG fingerprint for release signing: {gpgfp} (verify before importing)",
    ),
    (
        "public key",
        'JWKS: {"keys":[{"kty":"RSA","kid":"{hex8}","use":"sig","e":"AQAB","n":"{pem}"}]}',
    ),
    (
        "public key",
        "known_hosts: github.com ssh-ed25519 {sshpub}",
    ),
    # SQL with bind params
    (
        "sql, bind parameter",
        'cursor.execute("UPDATE users SET password_hash = %s WHERE id = %s", (hashed, user_id))',
    ),
    (
        "sql, bind parameter",
        "ALTER ROLE app_writer WITH LOGIN PASSWORD :'new_password';  -- psql variable, set with \\set",
    ),
    (
        "sql, hash",
        "SELECT id, email, password_hash FROM users LIMIT 1;\n 42 | a@b.example | $2b$12$(bcrypt hash omitted)",
    ),
    (
        "sql, placeholder",
        "CREATE USER 'metrics_ro'@'10.%' IDENTIFIED WITH caching_sha2_password BY '<generate-in-vault>';",
    ),
    (
        "sql, bind parameter",
        'jdbcTemplate.update("INSERT INTO api_clients(name, secret_hash) VALUES (?, ?)", name, sha256(secret));',
    ),
    (
        "sql, ids",
        "EXPLAIN ANALYZE showed a seq scan on sessions (rows={d7}); added index idx_sessions_token_hash, query now {ms}ms",
    ),
    # vault and 1password output without values
    (
        "vault output, metadata",
        (
            "$ vault kv metadata get secret/payments/gateway",
            "========== Metadata ==========",
            "created_time       {date}T{time}Z",
            "current_version    7",
            "max_versions       0",
        ),
    ),
    (
        "1password output, listing",
        "$ op item list --vault Infra\nID                            TITLE            VAULT\n{low8}{low8}{low8}ab    Prod Postgres    Infra\n{low8}{low8}{low8}cd    Grafana          Infra",
    ),
    (
        "vault output, status",
        "Seal Type: shamir\nInitialized: true\nSealed: false\nTotal Shares: 5\nThreshold: 3\nVersion: {ver}\nCluster ID: {uuid}",
    ),
    (
        "vault output, accessor",
        "$ vault token lookup -accessor {b24}\npolicies [ci-read]\nttl 23h59m\n(the accessor can't be used to authenticate)",
    ),
    # labelled identifiers next to cue words
    (
        "labelled ids",
        "AWS account id {acct}, role arn:aws:iam::{acct}:role/ReadOnly, region ap-northeast-2",
    ),
    (
        "labelled ids",
        "Azure tenant id {uuid}; subscription {uuid}; the app registration's client id (public) is {uuid}",
    ),
    (
        "labelled ids",
        "Google OAuth client id: {cid} (this one is public; it's in the web bundle)",
    ),
    (
        "labelled ids",
        "employee ID {d6}, badge {d5}, asset tag IT-{d6}, cost center {d4}",
    ),
    (
        "labelled ids",
        "postgres listens on port {port}, pgbouncer on 6432, version {ver}",
    ),
    (
        "labelled ids",
        "key id {hex8} in the JWT header refers to the current signing key; the key itself never leaves the KMS",
    ),
    (
        "labelled ids",
        "Stripe publishable key for the checkout page: pk_live_{b40}{b40} (it's meant for the frontend)",
    ),
    (
        "labelled ids",
        "GitHub App id {d6}, installation id {d8}; the private key lives in the secret store",
    ),
    # hashes, SHAs, digests
    (
        "hashes",
        "commit {sha} reverted {sha}; tag v{ver} points at {sha7}",
    ),
    (
        "hashes",
        '"integrity": "{integrity}" in package-lock.json for left-pad',
    ),
    (
        "hashes",
        "go.sum: github.com/stretchr/testify v1.9.0 h1:{h1}",
    ),
    (
        "hashes",
        "checksum mismatch: expected sha256 {sha256}, got {sha256}",
    ),
    # policy and talk about credentials
    (
        "talk about credentials",
        "Password policy for service accounts: 24+ chars, generated, stored only in Vault, rotated every 90 days.",
    ),
    (
        "talk about credentials",
        "token expired again — the CI token has a 1h TTL, we should switch to OIDC federation instead of long-lived keys",
    ),
    (
        "talk about credentials",
        "I rotated the key this morning and updated the secret in all three clusters; old one revoked.",
    ),
    (
        "talk about credentials",
        "gitleaks found 3 findings in the history, all test fixtures (fake keys like AKIAIOSFODNN7EXAMPLE); allow-listed",
    ),
    (
        "talk about credentials",
        "Reminder: the shared admin password will be disabled on {date}; please switch to your SSO account before then.",
    ),
    (
        "talk about credentials",
        "can someone with vault access read secret/legacy/ftp and DM it to Raj? not in this channel please",
    ),
    (
        "talk about credentials",
        "Why does the API return 403 with a valid key? Because the key is scoped to read, and this is a write endpoint.",
    ),
    # mixed ids in chat
    (
        "chat, ids",
        "the flaky test is test_refresh_token_rotation, failed in runs {build} and {build}; trace {trace}",
    ),
    (
        "chat, ids",
        "deploy id {ulid} rolled back to release {sha7}, canary error rate was {d2}%",
    ),
    (
        "chat, ids",
        "session count for tenant {uuid} jumped to {n}k after the login page change",
    ),
    (
        "chat, ids",
        "S3 object key: exports/{date}/{uuid}.parquet, version id {b32}",
    ),
    (
        "chat, ids",
        "the queue message id is {uuid}, receipt handle is too long to paste but it's in the DLQ",
    ),
    (
        "chat, ids",
        "CVE-2026-{d5} affects openssl {ver}; our base image digest sha256:{sha256} is patched",
    ),
    (
        "chat, masked",
        "the dashboard shows the API key as sk-proj-****************************a9F2, which is the last four only",
    ),
    (
        "chat, masked",
        "password: ••••••••••  (screenshot from the settings page, value hidden)",
    ),
    (
        "chat, placeholder",
        "use `curl -u admin:$GRAFANA_ADMIN_PASSWORD http://localhost:3000/api/health` — the env var is set in the pod",
    ),
    (
        "chat, placeholder",
        "the default creds in the helm chart are admin/admin only for the local kind cluster; prod uses existingSecret",
    ),
    (
        "chat, ids",
        "ticket JIRA-{d4} has the trace id {trace} and the span {span} where the timeout happens",
    ),
    (
        "chat, ids",
        "build {build} image acme/api:{ver}-{sha7} is live in eu-west-1",
    ),
    (
        "chat, no secret",
        "the webhook signature check failed because we hashed the parsed JSON instead of the raw body; secret was right all along",
    ),
]
