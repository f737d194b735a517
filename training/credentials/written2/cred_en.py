"""English credential rows: secrets as engineers and agents meet them at work."""

ROWS = [
    # log lines
    (
        "log line",
        "2026-03-11 04:12:55,871 DEBUG [pool-3-thread-7] c.a.b.LdapBinder - bind dn=cn=svc_reader,ou=svc,dc=corp,dc=example credential=⟦{pw}⟧ result=49",
    ),
    (
        "log line",
        'level=warn ts=2026-02-02T09:14:21Z caller=client.go:118 msg="retrying upstream" url=https://reports:⟦{pwu}⟧@bi.internal:8443/api attempt=3',
    ),
    (
        "log line",
        '{"ts":"2026-04-19T22:01:07.114Z","level":"debug","svc":"mailer","msg":"smtp auth","user":"noreply@shop.example","pass_phrase":"⟦{pws}⟧"}',
    ),
    (
        "log line",
        '[INFO ] 14:02:33 KafkaConsumerConfig - sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="etl_user" password="⟦{pwa}⟧";',
    ),
    (
        "log line",
        (
            "Jan 22 03:17:40 web-02 app[2231]: GET /api/v2/orders?page=4&api_key=⟦{hex32}⟧ 200 41ms",
            "Jan 22 03:17:41 web-02 app[2231]: GET /api/v2/orders?page=5&api_key=⟦{hex32}⟧ 200 38ms",
        ),
    ),
    (
        "log line",
        'nginx access: 10.4.1.77 - - [08/Mar/2026:11:20:02 +0900] "GET /export.csv?token=⟦{b40}⟧ HTTP/1.1" 200 88213 "-" "python-requests/2.32"',
    ),
    (
        "log line",
        "W0312 18:44:09.552 sync.go:77] webhook delivery failed to https://hooks.slack.com/services/⟦{hook}⟧: 404 no_service",
    ),
    (
        "log line",
        'auditd: type=EXECVE msg=audit(1760001122.443:901): argc=4 a0="mysql" a1="-ureport" a2="-p⟦{pw}⟧" a3="billing"',
    ),
    (
        "log line",
        "celery.worker | Received task: sync_crm[9c1e] args=('acme', 'https://acme.my.salesforce.com') kwargs={'client_secret': '⟦{b32}⟧'}",
    ),
    (
        "log line",
        "DEBUG urllib3.connectionpool: https://api.mailgun.net:443 \"POST /v3/mg.shop.example/messages HTTP/1.1\" 200 - auth=('api', '⟦{hex32}-{low8}-{low8}⟧')",
    ),
    # stack traces
    (
        "stack trace",
        (
            "[2026-03-30 02:00:01] nightly: starting warehouse load (run 4471)",
            "[2026-03-30 02:00:31] nightly: connect attempt 1/3 failed, sleeping 10s",
            "[2026-03-30 02:00:52] nightly: connect attempt 2/3 failed, sleeping 10s",
            "Traceback (most recent call last):",
            '  File "/srv/app/jobs/nightly.py", line 48, in <module>',
            "    conn = psycopg2.connect(host='pg-prod-1', user='etl', password='⟦{pws}⟧', dbname='dw')",
            '  File "/usr/lib/python3/dist-packages/psycopg2/__init__.py", line 122, in connect',
            'psycopg2.OperationalError: connection to server at "pg-prod-1" (10.3.0.5), port 5432 failed: timeout expired',
        ),
    ),
    (
        "stack trace",
        (
            "org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'dataSource'",
            "Caused by: java.sql.SQLException: Access denied for user 'app'@'10.12.4.9' (using password: YES)",
            "    at com.mysql.cj.jdbc.ConnectionImpl.createNewIO(ConnectionImpl.java:836)",
            "    ... 48 more",
            "Effective config: spring.datasource.url=jdbc:mysql://mysql-ha:3306/shop spring.datasource.password=⟦{pw}⟧",
        ),
    ),
    (
        "stack trace",
        (
            "panic: dial redis: WRONGPASS invalid username-password pair",
            "",
            "goroutine 1 [running]:",
            "main.mustRedis({0xc0000a4000, 0x3c})",
            '\t/build/cmd/worker/main.go:61 +0x1c5 opts=&{Addr:cache:6379 Password:"⟦{pwa}⟧" DB:2}',
        ),
    ),
    (
        "stack trace",
        (
            "Error: Request failed with status code 401",
            "    at createError (node_modules/axios/lib/core/createError.js:16:15)",
            "  config: {",
            "    url: 'https://api.openai.com/v1/chat/completions',",
            "    headers: { Authorization: 'Bearer ⟦{sk}⟧' }",
            "  }",
        ),
    ),
    (
        "stack trace",
        (
            'ActiveRecord::ConnectionNotEstablished (connection to server failed: FATAL: password authentication failed for user "rails")',
            "DATABASE_URL was postgres://rails:⟦{pwu}⟧@db.internal/rails_production",
        ),
    ),
    # CI output
    (
        "ci output",
        (
            "2026-04-02T08:11:02.5512Z ##[group]Run actions/checkout@v4",
            "2026-04-02T08:11:02.5514Z with:",
            "2026-04-02T08:11:02.5515Z   fetch-depth: 0",
            "2026-04-02T08:11:03.9021Z ##[endgroup]",
            "2026-04-02T08:11:04.0117Z ##[group]Run ./scripts/login.sh",
            "2026-04-02T08:11:04.0119Z + set -x",
            "2026-04-02T08:11:04.0120Z + REGISTRY=ghcr.io",
            "2026-04-02T08:11:04.0122Z + echo ⟦{ghp}⟧",
            "2026-04-02T08:11:04.0123Z + docker login ghcr.io -u release-bot --password-stdin",
            "2026-04-02T08:11:04.8810Z Login Succeeded",
            "2026-04-02T08:11:04.8812Z ##[endgroup]",
            "2026-04-02T08:11:05.0031Z ##[group]Run docker build -t ghcr.io/acme/api:latest .",
        ),
    ),
    (
        "ci output",
        (
            "$ npm config set //registry.npmjs.org/:_authToken ⟦{npm}⟧",
            "$ npm publish --access public",
            "npm notice Publishing to https://registry.npmjs.org/ with tag latest",
        ),
    ),
    (
        "ci output",
        (
            "[Pipeline] sh",
            "+ curl -sf -u jenkins:⟦{hex32}⟧ https://jenkins.corp.example/job/deploy/buildWithParameters?ENV=prod",
            "[Pipeline] }",
            "Finished: SUCCESS",
        ),
    ),
    (
        "ci output",
        (
            "Step 7/12 : RUN pip install --index-url https://__token__:⟦{pypi}⟧@pypi.org/simple internal-sdk",
            " ---> Running in 4b2c9f0e1a77",
        ),
    ),
    (
        "ci output",
        "##[debug]Evaluating: secrets.DEPLOY_KEY => masking failed for multiline value, raw line: ⟦{pem}⟧",
    ),
    (
        "ci output",
        (
            "section_start:1760000001:build_script",
            "$ git clone https://oauth2:⟦{glpat}⟧@gitlab.corp.example/platform/charts.git",
            "Cloning into 'charts'...",
        ),
    ),
    (
        "ci output",
        "buildkite-agent env dump | grep TOKEN\nSENTRY_AUTH_TOKEN=⟦{sntry}⟧",
    ),
    (
        "ci output",
        (
            "Terraform will perform the following actions:",
            "  # digitalocean_kubernetes_cluster.main will be created",
            'Warning: provider configured with token "⟦{dop}⟧" from the command line',
        ),
    ),
    # shell history
    (
        "shell history",
        (
            "  512  kubectl get pods -n payments",
            "  513  kubectl logs payments-api-6b7c -n payments --tail 50",
            "  514  export STRIPE_KEY=⟦{sklive}⟧",
            "  515  python scripts/replay_webhooks.py --since 2h",
        ),
    ),
    (
        "shell history",
        (
            "mongosh \"mongodb+srv://cluster0.x8kq2.mongodb.net/orders\" --username svc_orders --password '⟦{pws}⟧'",
        ),
    ),
    (
        "shell history",
        "history | tail -3\n 988  sshpass -p '⟦{pw}⟧' ssh -o StrictHostKeyChecking=no ubuntu@10.9.2.41\n 989  exit\n 990  history | tail -3",
    ),
    (
        "shell history",
        "$ PGPASSWORD=⟦{pwa}⟧ pg_dump -h replica.db.internal -U readonly analytics > /tmp/analytics.sql",
    ),
    (
        "shell history",
        "zsh_history: : 1760123456:0;aws configure set aws_secret_access_key ⟦{awssk}⟧ --profile legacy",
    ),
    (
        "shell history",
        "$ htpasswd -b -c /etc/nginx/.htpasswd grafana ⟦{pwl}⟧",
    ),
    # docker, compose
    (
        "docker",
        "docker run -d --name metabase -e MB_DB_PASS=⟦{pw}⟧ -e MB_DB_USER=metabase -p 3000:3000 metabase/metabase:v0.50.4",
    ),
    (
        "docker",
        (
            "{",
            '  "auths": {',
            '    "registry.corp.example:5000": {',
            '      "auth": "⟦{basic}⟧"',
            "    }",
            "  }",
            "}",
        ),
    ),
    (
        "docker",
        (
            "  rabbitmq:",
            "    image: rabbitmq:3.13-management",
            "    environment:",
            "      RABBITMQ_DEFAULT_USER: orders",
            "      RABBITMQ_DEFAULT_PASS: ⟦{pwa}⟧",
            "    ports:",
            '      - "15672:15672"',
        ),
    ),
    (
        "docker",
        "docker inspect keycloak | jq '.[0].Config.Env' shows \"KEYCLOAK_ADMIN_PASSWORD=⟦{pws}⟧\" in plain text, FYI",
    ),
    (
        "docker",
        "ARG NEXUS_CRED=ci:⟦{pwa}⟧\nRUN curl -u $NEXUS_CRED -O https://nexus.corp.example/repository/raw/tools.tar.gz",
    ),
    # kubernetes
    (
        "kubernetes",
        (
            "# k8s/billing/base.yaml",
            "apiVersion: v1",
            "kind: Secret",
            "metadata:",
            "  name: billing-db",
            "  namespace: billing",
            "  labels:",
            "    app.kubernetes.io/name: billing",
            "type: Opaque",
            "data:",
            "  username: YmlsbGluZw==",
            "  secret_value: ⟦{b64pw}⟧",
            "---",
            "apiVersion: v1",
            "kind: ConfigMap",
        ),
    ),
    (
        "kubernetes",
        (
            "apiVersion: v1",
            "kind: Secret",
            "metadata:",
            "  name: smtp-relay",
            "stringData:",
            "  relay_auth: ⟦{pws}⟧",
        ),
    ),
    (
        "kubernetes",
        "kubectl create secret generic grafana-admin --from-literal=admin-user=admin --from-literal=admin-password='⟦{pw}⟧' -n monitoring",
    ),
    (
        "kubernetes",
        (
            "users:",
            "- name: ci-deployer",
            "  user:",
            "    token: ⟦{jwt}⟧",
        ),
    ),
    (
        "kubernetes",
        (
            "$ kubectl get secret argocd-initial-admin-secret -n argocd -o jsonpath='{.data.password}' | base64 -d",
            "⟦{pwa}⟧",
        ),
    ),
    # terraform
    (
        "terraform",
        (
            'resource "aws_db_instance" "reporting" {',
            '  identifier          = "reporting-prod"',
            '  engine              = "postgres"',
            '  engine_version      = "16.3"',
            '  instance_class      = "db.r6g.large"',
            "  allocated_storage   = 200",
            '  username            = "reporting"',
            '  password            = "⟦{pws}⟧"',
            "  db_subnet_group_name = aws_db_subnet_group.private.name",
            "  skip_final_snapshot = true",
            "}",
        ),
    ),
    (
        "terraform",
        (
            'provider "datadog" {',
            '  api_key = "⟦{hex32}⟧"',
            '  app_key = "⟦{hex40}⟧"',
            "}",
        ),
    ),
    (
        "terraform",
        (
            "# ~/.terraform.d/credentials.tfrc.json",
            "{",
            '  "credentials": {',
            '    "app.terraform.io": { "token": "⟦{tfc}⟧" }',
            "  }",
            "}",
        ),
    ),
    (
        "terraform",
        (
            "terraform.tfvars (do not commit!!)",
            'cloudflare_api_token = "⟦{b40}⟧"',
            'zone_id              = "7d1c0f3a9e2b4c5d8f6a1b2c3d4e5f60"',
        ),
    ),
    (
        "terraform",
        'Error: Invalid value for variable: var.vsphere_pass = "⟦{pw}⟧" must match ^(?=.*[A-Z]).{12,}$',
    ),
    # ansible
    (
        "ansible",
        (
            "- name: create app db user",
            "  community.mysql.mysql_user:",
            "    name: inventory",
            "    host: '%'",
            "    password: ⟦{pwa}⟧",
            "    priv: 'inventory.*:ALL'",
        ),
    ),
    (
        "ansible",
        (
            "[webservers]",
            "web1 ansible_host=10.20.1.11 ansible_user=deploy ansible_become_pass=⟦{pw}⟧",
            "web2 ansible_host=10.20.1.12 ansible_user=deploy",
        ),
    ),
    (
        "ansible",
        'TASK [postgres : set replication password] ok: [db2] => {"changed": false, "repl_credential": "⟦{pws}⟧"}',
    ),
    (
        "ansible",
        "ansible-playbook site.yml --vault-password-file <(echo ⟦{pwp}⟧) -l prod",
    ),
    # .env
    (
        "env file",
        (
            "# .env.production",
            "NODE_ENV=production",
            "PORT=8080",
            "SESSION_SECRET=⟦{b40}⟧",
            "SENDGRID_KEY=⟦{sg}⟧",
            "LOG_LEVEL=info",
        ),
    ),
    (
        "env file",
        (
            "APP_NAME=helpdesk",
            "DB_HOST=127.0.0.1",
            "DB_USERNAME=helpdesk",
            "DB_AUTH=⟦{pw}⟧",
            "MAIL_MAILER=smtp",
        ),
    ),
    ("env file", "GOOGLE_MAPS_KEY=⟦{aiza}⟧ # restricted to *.shop.example? not yet"),
    (
        "env file",
        (
            "ANTHROPIC_API_KEY=⟦{skant}⟧",
            "OPENAI_BASE_URL=https://gateway.internal/v1",
        ),
    ),
    (
        "env file",
        "cat .envrc\nexport VAULT_ADDR=https://vault.corp.example:8200\nexport VAULT_TOKEN=⟦{hvs}⟧",
    ),
    (
        "env file",
        "TWILIO_ACCOUNT_SID=AC3f9e2d1c0b4a5968778695a4b3c2d1e0\nTWILIO_AUTH=⟦{hex32}⟧",
    ),
    # YAML / TOML / INI / JSON configs with unusual keys
    (
        "yaml config",
        (
            "outputs:",
            "  elasticsearch:",
            '    hosts: ["https://es-logs:9200"]',
            "    username: beats_writer",
            "    credential: ⟦{pwa}⟧",
        ),
    ),
    (
        "yaml config",
        (
            "sftp_targets:",
            "  - host: files.partner.example",
            "    login: acme_drop",
            "    pass_phrase: ⟦{pwp}⟧",
            "    path: /inbound/daily",
        ),
    ),
    (
        "yaml config",
        (
            "alertmanager:",
            "  receivers:",
            "  - name: pager",
            "    pagerduty_configs:",
            "    - routing_key: ⟦{hex32}⟧",
        ),
    ),
    (
        "toml config",
        (
            "[database]",
            'dsn = "host=pg.internal port=5432 user=ledger sslmode=require"',
            'passwd = "⟦{pws}⟧"',
            "",
            "[server]",
            'bind = "0.0.0.0:7000"',
        ),
    ),
    (
        "toml config",
        (
            "[registries.internal]",
            'index = "sparse+https://crates.corp.example/index/"',
            'token = "Bearer ⟦{b32}⟧"',
        ),
    ),
    (
        "ini config",
        (
            "[client]",
            "user=backup",
            "password=⟦{pw}⟧",
            "host=mysql-primary",
        ),
    ),
    (
        "ini config",
        (
            "; odbc.ini",
            "[WAREHOUSE]",
            "Driver=/opt/simba/spark/lib/64/libsparkodbc_sb64.so",
            "Host=adb-771.azuredatabricks.net",
            "UID=token",
            "PWD=⟦dapi{hex32}⟧",
        ),
    ),
    (
        "ini config",
        (
            "[default]",
            "aws_access_key_id = ⟦{akid}⟧",
            "aws_secret_access_key = ⟦{awssk}⟧",
            "aws_session_token = ⟦{awsst}⟧",
        ),
    ),
    (
        "json config",
        (
            "{",
            '  "smtp": {',
            '    "host": "smtp.office365.com",',
            '    "port": 587,',
            '    "secretValue": "⟦{pw}⟧"',
            "  }",
            "}",
        ),
    ),
    (
        "json config",
        '{"webhook":{"url":"https://ops.example/hooks/deploy","signing_secret":"⟦{hex64}⟧","retries":3}}',
    ),
    (
        "json config",
        (
            "appsettings.Development.json:",
            '"ConnectionStrings": {',
            '  "Default": "Server=sql-dev;Database=Crm;User Id=crm_app;Password=⟦{pw}⟧;TrustServerCertificate=True"',
            "}",
        ),
    ),
    (
        "json config",
        '.vscode/settings.json has "sqltools.connections": [{"name": "prod ro", "username": "ro_user", "password": "⟦{pwa}⟧"}] — someone committed it',
    ),
    # connection strings
    (
        "connection string",
        "jdbc:postgresql://pg-ha.internal:5432/claims?user=claims_svc&password=⟦{pwu}⟧&ssl=true",
    ),
    ("connection string", "jdbc:oracle:thin:hr_batch/⟦{pw}⟧@//ora-scan.corp.example:1521/HRPROD"),
    (
        "connection string",
        "jdbc:sqlserver://mssql02.corp.example:1433;databaseName=Payroll;user=payroll_ro;password=⟦{pws}⟧;encrypt=true",
    ),
    (
        "connection string",
        "Driver={ODBC Driver 18 for SQL Server};Server=tcp:finance.database.windows.net,1433;Uid=fin_reader;Pwd={⟦{pws}⟧};Encrypt=yes;",
    ),
    (
        "connection string",
        "mongodb+srv://inventory:⟦{pwu}⟧@cluster-prod.q7x1z.mongodb.net/inventory?retryWrites=true&w=majority",
    ),
    (
        "connection string",
        "REDIS_URL=rediss://:⟦{pwa}⟧@master.cache-prod.abc123.apne2.cache.amazonaws.com:6379",
    ),
    ("connection string", "amqp://orders:⟦{pw}⟧@rabbit-01.internal:5672/%2Forders"),
    ("connection string", "sqlplus system/⟦{pwl}⟧@ORCLPDB1 @migrate_v42.sql"),
    (
        "connection string",
        "DefaultEndpointsProtocol=https;AccountName=stlogsprod;AccountKey=⟦{azkey}⟧;EndpointSuffix=core.windows.net",
    ),
    ("connection string", "clickhouse://default:⟦{pwu}⟧@ch-analytics:9000/events?secure=true"),
    (
        "connection string",
        "mssql+pyodbc://sa:⟦{pwu}⟧@sqlserver-legacy/Inventory?driver=ODBC+Driver+17+for+SQL+Server",
    ),
    (
        "connection string",
        "the replica string is `host=10.30.2.8 port=6432 dbname=orders user=orders_ro password=⟦{pwa}⟧` (pgbouncer)",
    ),
    # HTTP requests
    (
        "http request",
        (
            "GET /api/v1/admin/users HTTP/1.1",
            "Host: backoffice.internal",
            "Authorization: Basic ⟦{basic}⟧",
            "Accept: application/json",
        ),
    ),
    (
        "http request",
        (
            "POST /graphql HTTP/2",
            "host: api.shop.example",
            "x-api-key: ⟦{b40}⟧",
            "content-type: application/json",
        ),
    ),
    (
        "http request",
        "curl -H 'X-Auth-Token: ⟦{uuid}⟧' https://identity.cloud.example/v3/projects",
    ),
    (
        "http request",
        (
            "Copied as cURL from devtools:",
            "curl 'https://admin.shop.example/api/orders/export' \\",
            "  -H 'accept: */*' \\",
            "  -H 'cookie: _ga=GA1.2.1718.1760; admin_session=⟦{sess}⟧' \\",
            "  --compressed",
        ),
    ),
    (
        "http request",
        'http POST https://api.partner.example/v2/shipments Authorization:"Bearer ⟦{jwt}⟧" weight:=3.2',
    ),
    (
        "http request",
        (
            "Request headers (from the HAR the customer attached):",
            "  X-Client-Id: web-checkout",
            "  X-Client-Secret: ⟦{b32}⟧",
            "  User-Agent: Mozilla/5.0",
        ),
    ),
    (
        "http request",
        "wget --user=mirror --password='⟦{pw}⟧' https://artifacts.corp.example/releases/agent-4.2.1.tar.gz",
    ),
    (
        "http request",
        (
            ">>> requests.get(url, headers={'PRIVATE-TOKEN': '⟦{glpat}⟧'})",
            "<Response [200]>",
        ),
    ),
    # meeting notes and handover docs
    (
        "handover",
        (
            "Handover — on-call week 14",
            "",
            "Open issues",
            "- disk on es-data-3 at 81%, ILM should catch up by Thursday",
            "- flaky healthcheck on the payments canary, ticket OPS-2207",
            "",
            "Access you may need",
            "- staging k8s: kubeconfig in the team vault",
            "- legacy FTP still used by the bank export, login bankexp / ⟦{pw}⟧",
            "- the bank calls if the 06:00 file is late; number is in the runbook",
            "",
            "Other",
            "- PagerDuty escalation unchanged",
            "- I'm back on the 21st",
        ),
    ),
    (
        "handover",
        (
            "Before I leave, things only I knew:",
            "1. the UPS management card at 10.0.0.50 is apc / ⟦{pwl}⟧",
            "2. the iDRAC on db-03 is root / ⟦{pw}⟧",
            "3. the SSL cert renews itself, nothing to do",
        ),
    ),
    (
        "meeting notes",
        (
            "Incident review 2026-02-14 (payments outage)",
            "Attendees: Ana, Raj, Wei",
            "- root cause: expired intermediate cert",
            "- Raj shared the break-glass admin during the call: breakglass@corp / ⟦{pws}⟧ — must rotate",
            "- action: Wei to add cert expiry alert",
        ),
    ),
    (
        "meeting notes",
        "vendor kickoff notes: sandbox merchant id 600123, their sandbox API secret is ⟦{b32}⟧, prod keys after security review",
    ),
    (
        "handover",
        (
            "## Access",
            "| system | user | secret |",
            "|---|---|---|",
            "| Jira bot | jira-automation | ⟦{b20}⟧ |",
            "| Sonar | admin | ⟦{pw}⟧ |",
        ),
    ),
    # tickets
    (
        "ticket",
        (
            "OPS-2291 Cannot log into reporting DB",
            "Reporter: j.kim",
            "Description: tried user rpt_reader with ⟦{pw}⟧ as in the wiki, getting 'authentication failed'. Please check.",
        ),
    ),
    (
        "ticket",
        "SEC-88: the mobile app bundle contains a hardcoded Firebase server key ⟦{aiza}⟧ in assets/config.json, please revoke",
    ),
    (
        "ticket",
        (
            "Zendesk #48112 — customer reply:",
            '"I reset it like you said, the new one is ⟦{pw}⟧ but the portal still says invalid. Username is the same."',
        ),
    ),
    (
        "ticket",
        "Jira comment by svc-bot: Provisioned sandbox tenant t-4471. Initial admin secret: ⟦{pwa}⟧ (expires on first login).",
    ),
    # forwarded emails
    (
        "forwarded email",
        (
            "---------- Forwarded message ---------",
            "From: IT Service Desk <servicedesk@corp.example>",
            "Subject: Your VPN account",
            "",
            "Your VPN account has been created.",
            "Username: mlee",
            "Initial password: ⟦{pw}⟧",
            "Please change it within 7 days.",
            "",
            "Client download: https://vpn.corp.example/download",
            "Gateway: vpn-kr.corp.example",
            "",
            "Regards,",
            "IT Service Desk | ext. 4400",
        ),
    ),
    (
        "forwarded email",
        (
            "Fwd: API access for Acme Logistics",
            "> Dear partner,",
            "> your production credentials are:",
            "> client_id: acme-logistics-prod",
            "> client_secret: ⟦{b40}⟧",
            "> Keep these confidential.",
            "can you wire this into the shipping service?",
        ),
    ),
    (
        "forwarded email",
        "Begin forwarded message: 'The SFTP password for drop.vendor.example has been reset to ⟦{pws}⟧. It expires in 90 days.'",
    ),
    # assistant and tool messages
    (
        "assistant repeats",
        "I've added the connection to `config/database.yml` with username `warehouse` and password `⟦{pw}⟧`; run `rails db:migrate` to check it works.",
    ),
    (
        "assistant repeats",
        "The deploy failed because the registry rejected `⟦{dckr}⟧`. It looks revoked — can you generate a new Docker Hub access token?",
    ),
    (
        "tool output",
        (
            "tool_result: read_file('.env.local')",
            "DATABASE_URL=mysql://root:⟦{pwu}⟧@localhost:3306/dev",
            "NEXT_PUBLIC_SITE=https://localhost:3000",
        ),
    ),
    (
        "assistant repeats",
        "Found it: line 12 of `scripts/seed.sh` sets `ADMIN_PASS=⟦{pw}⟧`. I'd move that into the secret store before we open-source the repo.",
    ),
    (
        "tool output",
        '{"tool": "get_secret", "name": "stripe/prod", "result": {"value": "⟦{sklive}⟧", "version": 7}}',
    ),
    (
        "assistant repeats",
        "Logged in to the staging admin as qa-admin (password ⟦{pwl}⟧) and confirmed the banner shows the new release.",
    ),
    # one-time and recovery codes
    (
        "one-time code",
        "Agent, the MFA prompt on the AWS console wants a code — use ⟦{otp}⟧, it's from my authenticator, valid ~20s",
    ),
    (
        "one-time code",
        "for the Okta enrolment on the shared ops laptop the TOTP seed is ⟦{totp}⟧ (add it to the team authenticator)",
    ),
    (
        "recovery codes",
        (
            "Recovery codes for root@ on the AWS org account (store in the safe):",
            "⟦{rc}⟧",
            "⟦{rc}⟧",
            "⟦{rc}⟧",
            "⟦{rc}⟧",
        ),
    ),
    (
        "one-time code",
        "[deploy-bot] Approve prod deploy #812? Reply with the approval code ⟦{otp}⟧ within 5 minutes.",
    ),
    (
        "recovery codes",
        "GitLab 2FA recovery codes I have left: ⟦{rc}⟧ and ⟦{rc}⟧ (burned the rest during the laptop swap)",
    ),
    # key material split
    (
        "key split",
        (
            "pasting the deploy key in two messages because of the length limit (1/2):",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "⟦{pem}⟧",
            "⟦{pem}⟧",
        ),
    ),
    (
        "key split",
        (
            "(2/2)",
            "⟦{pem}⟧",
            "⟦{pemtail}⟧",
            "-----END OPENSSH PRIVATE KEY-----",
        ),
    ),
    (
        "key split",
        "first 20 of the signing secret are ⟦{b20}⟧, I'll read you the rest on the call",
    ),
    (
        "key split",
        "the token wrapped in the terminal:\n⟦xoxb-{d11}-{d6}⟧\n⟦{d7}-{b24}⟧",
    ),
    # service-account JSON
    (
        "service account json",
        (
            "{",
            '  "type": "service_account",',
            '  "project_id": "data-platform-prod",',
            '  "private_key_id": "{hex40}",',
            '  "private_key": "-----BEGIN PRIVATE KEY-----\\n⟦{pem}⟧\\n⟦{pem}⟧\\n-----END PRIVATE KEY-----\\n",',
            '  "client_email": "bq-loader@data-platform-prod.iam.gserviceaccount.com",',
            '  "client_id": "104839201847362910473"',
            "}",
        ),
    ),
    (
        "service account json",
        'GOOGLE_CREDENTIALS=\'{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\n⟦{pem}⟧\\n-----END PRIVATE KEY-----\\n","client_email":"ci@ops-tools.iam.gserviceaccount.com"}\'',
    ),
    # SSH and GPG passphrases
    (
        "ssh passphrase",
        "ssh-add asks for the passphrase of id_ed25519_deploy every morning: ⟦{pwp}⟧. Put it in the agent for the build box.",
    ),
    (
        "gpg passphrase",
        "release signing: gpg --batch --pinentry-mode loopback --passphrase '⟦{pws}⟧' --detach-sign dist/tool-2.4.0.tar.gz",
    ),
    (
        "ssh passphrase",
        "Enter passphrase for key '/home/ci/.ssh/id_rsa': ⟦{pwp}⟧  <- typed into the wrong window, sorry, that was the real one",
    ),
    (
        "gpg passphrase",
        (
            "sops config notes",
            "- age key: ⟦{age}⟧",
            "- recipients: see .sops.yaml",
        ),
    ),
    # SQL
    ("sql", "CREATE USER 'metrics_ro'@'10.%' IDENTIFIED BY '⟦{pwa}⟧';"),
    ("sql", "ALTER ROLE app_writer WITH LOGIN PASSWORD '⟦{pws}⟧' VALID UNTIL '2027-01-01';"),
    ("sql", 'ALTER USER hr_batch IDENTIFIED BY "⟦{pw}⟧" ACCOUNT UNLOCK;'),
    (
        "sql",
        (
            "-- migration 0042_create_bi_login.sql",
            "CREATE LOGIN bi_reader WITH PASSWORD = '⟦{pws}⟧', CHECK_POLICY = OFF;",
            "CREATE USER bi_reader FOR LOGIN bi_reader;",
        ),
    ),
    (
        "sql",
        'postgres=# \\password replicator\nEnter new password for user "replicator": (typed) ⟦{pwa}⟧',
    ),
    (
        "sql",
        "UPDATE integrations SET api_secret = '⟦{b40}⟧' WHERE vendor = 'shipbob'; -- manual fix, ticket OPS-1830",
    ),
    # vault and 1password output
    (
        "vault output",
        (
            "$ vault kv get secret/payments/gateway",
            "====== Data ======",
            "Key            Value",
            "---            -----",
            "merchant_id    acme-kr-01",
            "secret         ⟦{b32}⟧",
        ),
    ),
    (
        "1password output",
        (
            "$ op item get 'Prod Postgres' --fields label=username,label=password",
            "app_owner,⟦{pws}⟧",
        ),
    ),
    (
        "vault output",
        (
            "$ vault write -f auth/approle/role/ci/secret-id",
            "Key                   Value",
            "secret_id             ⟦{uuid}⟧",
            "secret_id_accessor    (not shown)",
            "secret_id_ttl         24h",
        ),
    ),
    (
        "1password output",
        '$ op read "op://Infra/Grafana/credential"\n⟦{pw}⟧',
    ),
    (
        "vault output",
        "Unseal Key 3: ⟦{unseal}⟧\nUnseal Key 4 and 5 went to Ana and Raj",
    ),
    # misc work chat
    (
        "chat",
        "@here the shared Figma admin changed, it's design-ops@corp.example with ⟦{pw}⟧ now. Please don't save it in Chrome.",
    ),
    (
        "chat",
        "hey can you rerun the import? the bucket creds expired, the new secret key is ⟦{awssk}⟧ (same key id as before)",
    ),
    (
        "chat",
        "quick one: the Grafana service account token for the dashboards repo is ⟦glsa_{b32}_{hex8}⟧",
    ),
    (
        "chat",
        "staging Keycloak realm admin → realm-admin / ⟦{pwa}⟧, prod is still behind SSO",
    ),
    (
        "chat",
        "The Sentry DSN is public but this one isn't: org auth token ⟦{sntry}⟧, scoped to project:releases",
    ),
    (
        "chat",
        "PSA: the wifi for the server room console is SRV-MGMT and the key is ⟦{pws}⟧ (it's on a separate VLAN)",
    ),
    (
        "chat",
        "GitHub App installation token for the release job: ⟦{ghs}⟧ — expires in an hour, enough to test",
    ),
    (
        "chat",
        "I set the Jenkins credential `nexus-deploy` to user deployer / ⟦{pwl}⟧ so the maven job can push",
    ),
    (
        "chat",
        "new fine-grained PAT for the docs sync: ⟦{ghpat}⟧, read-only on the docs repo",
    ),
    (
        "chat",
        "the IPMI on rack B4 got reset to factory, it's ADMIN / ⟦{up8}⟧ per the sticker on the chassis",
    ),
    (
        "chat",
        "Slack user token for the export script (xoxp, I know, I know): ⟦{xoxp}⟧",
    ),
    (
        "chat",
        "the webhook HMAC we verify against is ⟦{hex64}⟧; the partner confirmed it on their side",
    ),
    (
        "chat",
        (
            "creds for the demo tomorrow:",
            "url  https://demo.crm.example",
            "user demo.presenter",
            "auth ⟦{pw}⟧",
        ),
    ),
    (
        "chat",
        "pgAdmin master password on the jump box is ⟦{pwp}⟧, it unlocks all the saved servers",
    ),
    (
        "chat",
        "Swagger → Authorize → paste ⟦{jwt}⟧ in the bearer field, that's a 24h admin token from the dev IdP",
    ),
    (
        "chat",
        "kibana elastic user got reset by the upgrade: elastic / ⟦{pwa}⟧",
    ),
    (
        "chat",
        "the bot's Slack token leaked into the screenshot in #general: ⟦{xoxb}⟧ — revoking now",
    ),
    (
        "chat",
        "the Cloudflare tunnel for the lab uses credentials-file /etc/cloudflared/lab.json; its TunnelSecret is ⟦{unseal}⟧",
    ),
    ("chat", "can you try `mysql -h 10.2.3.4 -u ro -p⟦{pwl}⟧ shop`? it works from my laptop"),
    (
        "chat",
        "the keystore for the android release build opens with ⟦{pws}⟧ and the key alias password is ⟦{pw}⟧",
    ),
]
