"""Korean look-alikes: work contexts as developers in Korea write them, with no secret in them."""

ROWS = [
    # 인수인계, 회의록 (비밀 없음)
    (
        "인수인계, 비밀 없음",
        (
            "[인수인계] 운영 서버 관련",
            "",
            "1) 서버 목록",
            "- was01, was02 (톰캣 9), web01 (nginx {ver})",
            "- 배치 서버 batch01 - 크론은 /etc/cron.d/settle 참고",
            "",
            "2) 계정",
            "- 관리자 계정 정보는 볼트 kv/ops/admin 에 있습니다 (권한 신청 필요)",
            "- DB는 DBA팀 통해서 신청",
            "",
            "3) 기타",
            "- 배포는 젠킨스 prod-deploy 잡으로만",
            "- 장애 시 연락: 인프라팀 박대리 (내선 {d4})",
        ),
    ),
    (
        "인수인계, 비밀 없음",
        (
            "퇴사 전 인수인계 문서",
            "1. NAS 관리 페이지 http://192.168.10.5:5000 - 계정은 팀장님께 직접 받으세요",
            "2. 그룹웨어 연동 API 키는 지난주에 재발급, 시크릿 매니저에 저장함",
            "3. 도메인 만료일 {date}",
        ),
    ),
    (
        "회의록, 비밀 없음",
        (
            "주간 회의록",
            "- PG사 테스트 키 발급 완료 (값은 1Password '결제 테스트'에 저장)",
            "- 운영 키는 보안 검토 후 별도 전달 예정",
            "- QA 일정: {date} ~",
        ),
    ),
    (
        "회의록, 비밀 없음",
        "장애 회고: 새벽에 임시로 바꿨던 root 비밀번호는 오늘 원복 완료. 변경 이력은 티켓 INFRA-{d4}에 남김",
    ),
    (
        "인수인계, 표",
        (
            "| 시스템 | 계정 | 비밀 보관 위치 |",
            "|---|---|---|",
            "| 그라파나 | admin | 볼트 kv/mon/grafana |",
            "| 젠킨스 | deploy-bot | 젠킨스 Credentials (ID: nexus-deploy) |",
        ),
    ),
    (
        "회의록, 번호",
        "스탠드업 메모: PR #{d4} 머지({sha7}), 스테이징 {ver} 배포, 부하테스트 run id {ulid}, p99 {ms}ms",
    ),
    (
        "인수인계, 비밀 없음",
        "휴가 중 대리 업무: 모니터링 계정은 SSO로 로그인하시면 되고 따로 비번 없어요. 알람 채널 #ops-alert",
    ),
    (
        "회의록, 비밀 없음",
        "킥오프 정리) 협력사 SFTP는 키 인증 방식으로 변경. 공개키만 전달하면 되고 비밀번호 공유 X",
    ),
    # 로그 (식별자, 해시)
    (
        "로그, 식별자",
        "{date} {time}.102 INFO 31424 --- [nio-8080-exec-3] c.o.p.PaymentClient : 결제 승인 완료 orderId=ORD{d10} paymentKey=tgen_{low8}{low8} amount=39000",
    ),
    (
        "로그, 식별자",
        "[배치] 정산 파일 업로드 완료 - 파일명 settle_{d8}.csv, 건수 {n}, sha256 {sha256}",
    ),
    (
        "로그, 마스킹",
        "INFO  AuthFilter - 요청 헤더 X-Api-Key=****{d4} uri=/v1/members traceId={trace}",
    ),
    (
        "로그, 식별자",
        "공공데이터 호출 성공: resultCode=00 resultMsg=NORMAL_SERVICE numOfRows=10 totalCount={n} (serviceKey는 로그에서 제외)",
    ),
    (
        "로그, 인증 실패",
        "WARN  로그인 실패 5회 - 사용자 kim.dev, IP {ip}, 계정 30분 잠금",
    ),
    (
        "로그, 식별자",
        "카카오 로그인 콜백 수신 code 파라미터 길이 {n}, state={uuid}, 처리시간 {ms}ms",
    ),
    (
        "로그, 세션 수",
        "현재 세션 수 {n}, 만료 세션 {n}, 레디스 메모리 사용량 {d3}MB",
    ),
    (
        "로그, 식별자",
        "요청ID {uuid} 처리 중 타임아웃 발생 (upstream: order-api, {ms}ms)",
    ),
    (
        "로그, 식별자",
        "nginx 에러로그: upstream timed out (110: Connection timed out) while reading response header, client: {ip}, request_id: {hex32}",
    ),
    # 에러 (비밀 없음)
    (
        "에러, 비밀 없음",
        (
            "이거 왜 안 될까요?",
            "```",
            "Traceback (most recent call last):",
            '  File "/app/batch/settle.py", line 33, in main',
            "    conn = pymysql.connect(**db_conf())",
            "pymysql.err.OperationalError: (1045, \"Access denied for user 'batch'@'10.0.3.12' (using password: YES)\")",
            "```",
            "비밀번호는 환경변수 DB_PASSWORD 에서 읽고 있고 값은 DBA님께 다시 확인 요청드렸어요",
        ),
    ),
    (
        "에러, 비밀 없음",
        (
            "스택트레이스 공유드립니다",
            "Caused by: java.lang.IllegalArgumentException: Could not resolve placeholder 'jasypt.encryptor.password' in value \"${jasypt.encryptor.password}\"",
            "  at org.springframework.util.PropertyPlaceholderHelper.parseStringValue(PropertyPlaceholderHelper.java:180)",
        ),
    ),
    (
        "에러, 비밀 없음",
        "401 Unauthorized: 토큰 만료(exp {d10}). 리프레시 토큰으로 재발급 로직이 안 타는 것 같아요",
    ),
    (
        "에러 코드",
        "에러코드 E{d4} 발생, 거래번호 {d12}, 응답코드 9999 (시스템 오류)",
    ),
    (
        "에러, 비밀 없음",
        "AccessDenied 뜨는 건 키 문제가 아니라 버킷 정책 문제였어요. 키는 그대로 두셔도 됩니다",
    ),
    # CI
    (
        "CI 출력, 마스킹",
        (
            "젠킨스 콘솔 출력 일부 (#{build} 빌드)",
            "Started by GitLab push by 김개발",
            "[Pipeline] node",
            "Running on agent-02 in /var/jenkins/workspace/api-deploy",
            "[Pipeline] withCredentials",
            "Masking supported pattern matches of $HARBOR_PW",
            "+ docker login -u deploy -p **** harbor.corp.co.kr",
            "WARNING! Using --password via the CLI is insecure.",
            "Login Succeeded",
            "+ docker push harbor.corp.co.kr/app/api:{build}",
            "Finished: SUCCESS",
        ),
    ),
    (
        "CI 출력, 참조",
        (
            "GitHub Actions 워크플로",
            "env:",
            "  NCP_ACCESS_KEY: ${{ secrets.NCP_ACCESS_KEY }}",
            "  NCP_SECRET_KEY: ${{ secrets.NCP_SECRET_KEY }}",
        ),
    ),
    (
        "CI 출력, 식별자",
        "빌드 #{build} 성공 (커밋 {sha}), 이미지 harbor.corp.co.kr/app/api:{sha7} 푸시 완료",
    ),
    (
        "CI 출력, 식별자",
        "ArgoCD 동기화 완료: revision {sha}, health Healthy, 소요 {d2}초",
    ),
    (
        "CI 출력, 경고",
        "GitLab CI 경고: 변수 SONAR_TOKEN 이 protected 브랜치에서만 노출되도록 설정되어 있어 feature 브랜치에서는 빈 값입니다",
    ),
    (
        "CI 출력, 식별자",
        "캐시 키 Linux-gradle-{sha256} 복원 성공, 빌드 시간 {d2}% 단축",
    ),
    # 셸 히스토리
    (
        "셸 히스토리, 참조",
        (
            "서버 history 보니까 이렇게 되어 있던데요",
            "  201  cd /app/batch",
            "  202  mysql --defaults-extra-file=/etc/batch/my.cnf settle_db",
            "  203  vi conf/app.properties",
        ),
    ),
    (
        "셸 히스토리, 식별자",
        "$ git log --oneline -2\n{sha7} 토큰 갱신 로직 수정\n{sha7} 비밀번호 정책 검증 추가",
    ),
    (
        "셸 히스토리, 식별자",
        "ssh-keygen -lf 결과: 256 {fp} deploy@bastion (ED25519) 이 지문 맞는지 확인 부탁",
    ),
    (
        "셸 히스토리, 참조",
        "redis-cli -h redis-session.internal --askpass 로 접속하면 히스토리에 비번이 안 남아요",
    ),
    # 도커, 쿠버네티스
    (
        "도커, 참조",
        (
            "docker-compose.yml",
            "services:",
            "  cms:",
            "    build: .",
            "    depends_on: [mariadb]",
            "    ports:",
            '      - "8080:8080"',
            "  mariadb:",
            "    image: mariadb:11",
            "    environment:",
            "      MARIADB_ROOT_PASSWORD_FILE: /run/secrets/db_root",
            "      MARIADB_DATABASE: cms",
            "    secrets: [db_root]",
            "비번은 파일 시크릿으로 뺐어요",
        ),
    ),
    (
        "도커, 식별자",
        "이미지 다이제스트 sha256:{sha256} 로 고정해서 배포했습니다 (태그 {ver})",
    ),
    (
        "쿠버네티스, 참조",
        (
            "env:",
            "  - name: NAVER_CLIENT_SECRET",
            "    valueFrom:",
            "      secretKeyRef:",
            "        name: naver-api",
            "        key: client-secret",
        ),
    ),
    (
        "쿠버네티스, 목록",
        "kubectl get secret -n app 결과\nNAME          TYPE                             DATA   AGE\nncr-cred      kubernetes.io/dockerconfigjson   1      12d\nnaver-api     Opaque                           2      3d",
    ),
    (
        "쿠버네티스, 템플릿",
        'values.yaml 에서 password: "" 로 비워두고 배포할 때 --set-file 로 주입해요. 템플릿은 {{ .Values.db.password | b64enc }}',
    ),
    (
        "쿠버네티스, 식별자",
        "파드 {pod} 가 CrashLoopBackOff, 재시작 {n}회, 노드 ip-{d3}-{d2}-{d2}-{d2}",
    ),
    (
        "쿠버네티스, describe",
        "kubectl describe secret naver-api\nType: Opaque\nData\n====\nclient-id:      20 bytes\nclient-secret:  10 bytes",
    ),
    # 테라폼, 앤서블
    (
        "테라폼, 변수",
        (
            'variable "ncloud_secret_key" {',
            "  type      = string",
            "  sensitive = true",
            "}",
            "값은 TF_VAR_ncloud_secret_key 로 CI에서 주입",
        ),
    ),
    (
        "테라폼, plan 출력",
        "terraform plan 결과: ~ master_password = (sensitive value) 로만 나와서 실제 값은 안 보여요",
    ),
    (
        "테라폼, 출력",
        'Outputs:\nrds_endpoint = "prod-db.cluster-{low8}.ap-northeast-2.rds.amazonaws.com"\nvpc_id = "vpc-{hex8}{hex8}"',
    ),
    (
        "앤서블, vault",
        "group_vars/prod/vault.yml 은 ansible-vault 로 암호화돼 있어서 내용은 $ANSIBLE_VAULT;1.1;AES256 헤더 뒤로 안 보입니다",
    ),
    (
        "앤서블, 출력",
        "TASK [tomcat : 매니저 계정 설정] changed: [was01] => (no_log: true 라서 출력 숨김)",
    ),
    # env, 설정 파일 (자리표시자)
    (
        "env 파일, 자리표시자",
        (
            "# .env.sample",
            "KAKAO_REST_API_KEY=발급받은_키_입력",
            "KAKAO_CLIENT_SECRET=",
            "SERVER_PORT=8080",
        ),
    ),
    (
        "env 파일, 참조",
        "DB_URL=jdbc:mysql://${DB_HOST}:3306/${DB_NAME}\nDB_USER=${DB_USER}\nDB_PASSWORD=${DB_PASSWORD}",
    ),
    (
        "yaml 설정, 참조",
        (
            "application.yml",
            "spring:",
            "  profiles:",
            "    active: prod",
            "  mail:",
            "    host: smtp.gmail.com",
            "    port: 587",
            "    username: noreply@corp.co.kr",
            "    password: ${MAIL_APP_PASSWORD}",
            "    properties:",
            "      mail.smtp.starttls.enable: true",
            "앱 비밀번호는 시크릿 매니저에서 주입돼요",
        ),
    ),
    (
        "yaml 설정, 암호화",
        (
            "spring:",
            "  datasource:",
            "    url: jdbc:mysql://10.20.0.11:3306/shop",
            "    username: shop_app",
            "    password: ENC(jasypt로 암호화된 값, 키는 서버 환경변수)",
        ),
    ),
    (
        "yaml 설정, 마스킹",
        (
            "settlement:",
            "  bank-api:",
            "    org-code: 10023",
            "    비밀키: '********'",
        ),
    ),
    (
        "properties 설정, 참조",
        "jdbc.password=${JDBC_PASSWORD:}  # 빈 값이면 기동 실패하게 해둠",
    ),
    (
        "toml 설정, 자리표시자",
        '[mysql]\nhost = "10.0.2.15"\nuser = "crawler"\n접속암호 = "여기에_입력"',
    ),
    (
        "ini 설정, 자리표시자",
        "[ftp]\nserver=ftp.logistics.co.kr\nid=corp01\npw=<협력사에서 별도 전달>",
    ),
    (
        "json 설정, 공개 값",
        '{"kakao": {"javascriptKey": "(프론트 공개용, 도메인 제한)", "restApiKey": "${KAKAO_REST_KEY}"}}',
    ),
    (
        "json 설정, 식별자",
        '{"tenantId": "{uuid}", "clientId": "{uuid}", "redirectUri": "https://corp.co.kr/login/oauth2/code/azure"}',
    ),
    (
        "yaml 설정, 식별자",
        "logging:\n  level: INFO\nserver:\n  port: {port}\nmanagement:\n  endpoints.web.exposure.include: health,info\napp.version: {ver}",
    ),
    (
        "json 설정, 공개 값",
        "토스페이먼츠 클라이언트 키 {tossck} 는 프론트 결제위젯용이라 노출돼도 괜찮아요. 시크릿 키는 서버에만",
    ),
    # 접속 문자열 (비밀번호 없음)
    (
        "접속 문자열, 비밀번호 없음",
        "운영 DB URL: jdbc:mariadb://10.20.0.11:3306/shop?useSSL=true&serverTimezone=Asia/Seoul (계정은 볼트에서)",
    ),
    (
        "접속 문자열, 자리표시자",
        "몽고 접속은 mongodb+srv://<username>:<password>@log-cluster.ab12c.mongodb.net/ 형식이에요",
    ),
    (
        "접속 문자열, 비밀번호 없음",
        "레디스 주소 redis://10.0.5.7:6379/1 로 바뀌었습니다 (인증은 ACL 사용자 app 으로, 비번은 시크릿에)",
    ),
    (
        "접속 문자열, 비밀번호 없음",
        "MSSQL은 Server=10.1.1.40,1433;Database=HR;Integrated Security=True; 로 윈도우 인증 씁니다",
    ),
    (
        "접속 문자열, 비밀번호 없음",
        "오라클 TNS: (DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=10.10.1.20)(PORT=1521))(CONNECT_DATA=(SID=ORCL)))",
    ),
    (
        "접속 문자열, 마스킹",
        "기동 로그에 amqp://noti:*****@mq.internal:5672/noti 로 찍혀요, 마스킹은 되고 있음",
    ),
    (
        "접속 문자열, 포트",
        "포트 정리: MySQL 3306, Redis 6379, RabbitMQ 5672/15672, Kafka 9092, ES 9200, 모니터링 {port}",
    ),
    # HTTP (인증 없음)
    (
        "HTTP 요청, 인증 없음",
        (
            "포스트맨 요청",
            "GET https://api.corp.co.kr/v1/health",
            "X-Request-Id: {uuid}",
            "Accept: application/json",
        ),
    ),
    (
        "HTTP 요청, 변수",
        'curl -H "Authorization: KakaoAK ${KAKAO_REST_KEY}" "https://dapi.kakao.com/v2/local/search/keyword.json?query=카페"',
    ),
    (
        "HTTP 응답",
        (
            "HTTP/1.1 401 Unauthorized",
            'WWW-Authenticate: Bearer error="invalid_token"',
            "X-Trace-Id: {trace}",
            '응답 본문: {"code":"TOKEN_EXPIRED","message":"토큰이 만료되었습니다"}',
        ),
    ),
    (
        "HTTP 요청, 마스킹",
        "HAR 파일 공유드려요. Cookie, Authorization 헤더는 [hidden] 처리했습니다",
    ),
    (
        "HTTP 요청, 페이지",
        '다음 페이지 조회 시 cursor 값 "{cursor}" 넘기면 됩니다 (base64 JSON이라 비밀값 아님)',
    ),
    (
        "HTTP 응답, 식별자",
        '결제 응답: {"paymentKey":"tgen_{low8}{low8}","orderId":"ORD{d10}","status":"DONE","approvedAt":"{date}T{time}+09:00"}',
    ),
    # 티켓, 메일 (비밀 없음)
    (
        "티켓, 비밀 없음",
        (
            "[JIRA] INFRA-{d4} 스테이징 DB 비밀번호 정기 변경",
            "설명: 분기별 정기 변경. 볼트에서 새 값 생성 → 앱 시크릿 갱신 → 재기동",
            "기한: {date}",
        ),
    ),
    (
        "티켓, 비밀 없음",
        "보안 점검 결과 조치 완료: 프론트 번들에 있던 AWS 키는 {date}에 폐기, 새 키는 서버 IAM 역할로 대체",
    ),
    (
        "티켓, 비밀 없음",
        "요청사항) 협력사 계정 생성 완료. 초기 비밀번호는 담당자 휴대폰으로 문자 발송했습니다",
    ),
    (
        "메일, 비밀번호 만료 알림",
        (
            "[알림] 비밀번호 만료 안내",
            "",
            "안녕하세요, 정보보안팀입니다.",
            "고객님의 사내 계정 비밀번호가 7일 후 만료됩니다.",
            "https://pw.corp.co.kr 에서 변경해 주세요.",
            "",
            "- 만료 예정일: {date}",
            "- 대상 계정: 사번 {d7}",
            "",
            "※ 정보보안팀은 메일로 비밀번호를 묻지 않습니다.",
        ),
    ),
    (
        "메일, 비밀 없음",
        (
            "---------- 전달된 메일 ----------",
            "제목: VPN 계정 발급 안내",
            "아이디: dev_hong",
            "임시 비밀번호는 등록된 휴대폰으로 별도 발송됩니다.",
            "신청번호: SR{d8}",
        ),
    ),
    (
        "메일, 식별자",
        "FW: [KCP] 가맹점 연동 안내 - 사이트 코드와 키는 KCP 관리자 페이지에서 직접 확인 부탁드립니다 (문의번호 {d6})",
    ),
    (
        "메일, 비밀 없음",
        "공공데이터포털 활용신청이 승인되었습니다. 인증키는 마이페이지 > 데이터활용 > Open API 에서 확인하세요.",
    ),
    (
        "티켓, 식별자",
        "버그 {d5}: 테넌트 ID {uuid} 에서 결제 실패, 앱 버전 {ver} (빌드 {build}), 에러코드 P{d4}",
    ),
    # 에이전트, 도구 (비밀 없음)
    (
        "에이전트, 비밀 없음",
        "레포 전체를 찾아봤는데 DB 비밀번호는 하드코딩되어 있지 않고 `DB_PASSWORD` 환경변수에서 읽습니다.",
    ),
    (
        "도구 출력, 마스킹",
        '{"tool":"secrets.get","key":"prod/kakao","value":"<redacted>","version":3}',
    ),
    (
        "에이전트, 비밀 없음",
        "토큰 교체 완료했습니다. 기존 토큰은 {time}에 폐기했고, 새 값은 시크릿 매니저에만 저장했어요.",
    ),
    (
        "도구 출력, 식별자",
        "[tool] git rev-parse --short HEAD → {sha7}",
    ),
    (
        "에이전트, 비밀 없음",
        "요청하신 계정 생성 SQL은 비밀번호 자리를 :new_password 바인드 변수로 두었습니다. 실행 시 값을 넣어주세요.",
    ),
    (
        "도구 출력, 목록",
        "[tool] ls -la ~/.ssh\n-rw-------  1 dev dev  411 authorized_keys\n-rw-r--r--  1 dev dev  103 id_ed25519.pub\n-rw-r--r--  1 dev dev 2810 known_hosts",
    ),
    # 번호 (코드 아님)
    (
        "번호, 코드 아님",
        "주문번호 {d12}, 송장번호 {d12}, 고객센터 접수번호 {d8}",
    ),
    (
        "번호, 코드 아님",
        "종료 코드 137 (OOM), HTTP 응답코드 503, 배치 잡 번호 {build}",
    ),
    (
        "번호, 코드 아님",
        "인증번호 발송 API 응답시간 평균 {ms}ms, 실패율 {d2}% (통신사 점검 영향)",
    ),
    (
        "번호, 코드 아님",
        "OTP 의무화는 {date}부터, 아직 등록 안 한 인원 {n}명입니다. OTP 번호는 앱에서만 확인 가능",
    ),
    (
        "번호, 코드 아님",
        "복구 코드는 새로 발급해서 금고에 보관했고 기존 코드는 전부 무효화됐어요",
    ),
    (
        "번호, 코드 아님",
        "보안 패치 버전 {ver} 적용, 취약점 번호 CVE-2026-{d5}",
    ),
    # 공개키, 인증서
    (
        "공개키",
        "배포 서버에 등록할 공개키 입니다: ssh-ed25519 {sshpub} deploy@ci",
    ),
    (
        "인증서",
        (
            "사내 CA 인증서 (공개용, 브라우저에 신뢰 등록하세요)",
            "-----BEGIN CERTIFICATE-----",
            "MIIDdzCCAl+gAwIBAgIU{b24}{b20}",
            "{pem}",
            "-----END CERTIFICATE-----",
        ),
    ),
    (
        "공개키",
        "GPG 공개키 지문 {gpgfp} — 릴리즈 서명 검증할 때 이 지문 확인해주세요",
    ),
    (
        "공개키",
        "JWT 검증용 공개키는 https://auth.corp.co.kr/.well-known/jwks.json 에서 kid={hex8} 로 가져가면 됩니다",
    ),
    (
        "공개키",
        (
            "-----BEGIN PUBLIC KEY-----",
            "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE{b20}{b24}",
            "{b20}{b20}==",
            "-----END PUBLIC KEY-----",
            "위 공개키로 웹훅 서명 검증하세요",
        ),
    ),
    # SQL (바인드 변수)
    (
        "SQL, 바인드 변수",
        "MyBatis 매퍼: UPDATE member SET password = #{encodedPassword} WHERE member_id = #{memberId}",
    ),
    (
        "SQL, 바인드 변수",
        'jdbcTemplate.update("ALTER USER ? IDENTIFIED BY ?") 는 안 되고, 비밀번호는 프로시저로 처리해야 해요',
    ),
    (
        "SQL, 해시",
        "SELECT member_id, password FROM member LIMIT 1; → 비밀번호 컬럼엔 bcrypt 해시만 있어요 ($2a$10$...)",
    ),
    (
        "SQL, 자리표시자",
        "CREATE USER 'report'@'%' IDENTIFIED BY '<볼트에서 생성>'; -- 실제 값은 넣지 마세요",
    ),
    (
        "SQL, 식별자",
        "EXPLAIN 결과 member_session 테이블 풀스캔 (rows={d7}), 인덱스 idx_session_token_hash 추가 후 {ms}ms",
    ),
    (
        "SQL, 바인드 변수",
        'psql -v new_pw="$NEW_PW" -c "ALTER ROLE batch_writer PASSWORD :\'new_pw\'" 이렇게 변수로 넘겨요',
    ),
    # vault, 1password (값 없음)
    (
        "vault 출력, 메타데이터",
        (
            "$ vault kv metadata get secret/prod/mysql",
            "created_time       {date}T{time}Z",
            "current_version    {d2}",
            "delete_version_after    0s",
        ),
    ),
    (
        "1password 출력, 목록",
        "op item list --vault 인프라 결과: 운영 RDS, 스테이징 RDS, 그라파나 (값은 --reveal 없이 안 보임)",
    ),
    (
        "vault 출력, 상태",
        "vault status → Sealed false, Total Shares 5, Threshold 3, Version {ver}, Cluster ID {uuid}",
    ),
    # 식별자 + 단서 단어
    (
        "식별자, 사번",
        "사번 {d7} 계정 잠금 해제 요청드립니다. 비밀번호 초기화는 본인이 포털에서 할게요",
    ),
    (
        "식별자, 자산번호",
        "자산번호 IT-{d6} 노트북 반납, 시리얼 {up8}{d4}",
    ),
    (
        "식별자, 계정 ID",
        "AWS 계정 ID {acct} (운영), {acct} (개발). 콘솔 로그인은 SSO로만",
    ),
    (
        "식별자, 테넌트",
        "애저 테넌트 ID {uuid}, 구독 ID {uuid}",
    ),
    (
        "식별자, 클라이언트 ID",
        "구글 로그인 클라이언트 ID {cid} 는 프론트에 들어가는 공개 값이에요",
    ),
    (
        "식별자, 클라이언트 ID",
        "네이버 로그인 Client ID 는 공개돼도 되고, Client Secret 은 서버 환경변수로만 관리합니다",
    ),
    (
        "식별자, 계정 ID",
        "GCP 프로젝트 번호 {d12}, 프로젝트 ID corp-prod-{d6}",
    ),
    (
        "식별자, 버전",
        "openjdk {ver}, 스프링부트 3.3.{d1}, 톰캣 10.1.{d2}",
    ),
    (
        "식별자, 키 ID",
        "KMS 키 ID {uuid} 로 암호화된 값이라 키 ID만 알아서는 복호화 못 해요",
    ),
    (
        "식별자, 앱 ID",
        "카카오 앱 ID {d6}, 네이티브 앱 해시는 릴리즈 키스토어 기준으로 등록돼 있어요",
    ),
    # 해시, SHA
    (
        "해시",
        "릴리즈 태그 v{ver} 커밋 {sha}, 빌드 산출물 sha256 {sha256}",
    ),
    (
        "해시",
        "파일 무결성 확인: md5 {hex32} (원본과 일치)",
    ),
    (
        "해시",
        "package-lock 의 integrity 값 {integrity} 가 바뀌어서 리뷰 요청드립니다",
    ),
    # 자격증명 이야기 (값 없음)
    (
        "자격증명 이야기",
        "서비스 계정 비밀번호 정책: 24자 이상, 자동 생성, 볼트에만 저장, 90일마다 교체",
    ),
    (
        "자격증명 이야기",
        "토큰 만료됐어요 ㅠ CI 토큰 TTL이 1시간이라 OIDC 연동으로 바꾸는 게 좋겠어요",
    ),
    (
        "자격증명 이야기",
        "오늘 오전에 키 교체(rotate)했고 세 클러스터 시크릿 다 업데이트했습니다. 예전 키는 폐기 완료",
    ),
    (
        "자격증명 이야기",
        "gitleaks 결과 3건 전부 테스트 픽스처(가짜 키)라 allowlist 처리했어요",
    ),
    (
        "자격증명 이야기",
        "공용 관리자 계정은 {date}부로 비활성화됩니다. 그 전에 개인 SSO 계정으로 전환해주세요",
    ),
    (
        "자격증명 이야기",
        "볼트 권한 있으신 분 secret/legacy/ftp 값 확인해서 라즈님께 DM 부탁드려요. 채널엔 올리지 마시고요",
    ),
    (
        "자격증명 이야기",
        "비밀번호 오류 5회 초과로 계정이 잠겼습니다. 헬프데스크(내선 {d4})로 문의하세요",
    ),
    (
        "자격증명 이야기",
        "슬랙에 토큰 올리면 자동으로 폐기되게 해놨어요. 실수로 올렸으면 보안팀에 바로 알려주세요",
    ),
    (
        "자격증명 이야기",
        "접속암호 변경 주기가 90일이라 다음 변경일은 {date} 입니다",
    ),
    (
        "자격증명 이야기",
        "비밀키는 HSM 밖으로 안 나가고, 서명 요청만 API로 보내는 구조예요",
    ),
    (
        "자격증명 이야기",
        "API 키가 맞는데 403 나는 건 읽기 전용 키로 쓰기 API 호출해서 그래요",
    ),
    (
        "자격증명 이야기",
        "인증서 비밀번호를 코드에 넣지 말고 키체인/시크릿 매니저에서 읽게 바꿨습니다",
    ),
    # 업무 채팅 (식별자)
    (
        "업무 채팅, 식별자",
        "플래키 테스트 test_refresh_token 이 빌드 {build}, {build} 에서 실패했고 trace {trace} 에 원인 있어요",
    ),
    (
        "업무 채팅, 식별자",
        "배포 ID {ulid} 롤백, 릴리즈 {sha7} 로 복구, 카나리 에러율 {d2}%",
    ),
    (
        "업무 채팅, 식별자",
        "S3 키 exports/{date}/{uuid}.parquet, 버전 ID {b32}",
    ),
    (
        "업무 채팅, 마스킹",
        "대시보드에 API 키가 sk-proj-****…{last4} 처럼 뒤 4자리만 보여요",
    ),
    (
        "업무 채팅, 마스킹",
        "설정 화면에 비밀번호: ●●●●●●●● 로만 나와서 값은 모르겠어요",
    ),
    (
        "업무 채팅, 참조",
        "`curl -u admin:$GRAFANA_PW http://localhost:3000/api/health` 로 확인하세요. 변수는 파드에 세팅돼 있어요",
    ),
    (
        "업무 채팅, 자리표시자",
        "헬름 차트 기본값 admin/admin 은 로컬 kind 클러스터용이고 운영은 existingSecret 씁니다",
    ),
    (
        "업무 채팅, 식별자",
        "지라 티켓 BE-{d4} 에 trace id {trace}, span id {span} 붙여놨어요",
    ),
    (
        "업무 채팅, 식별자",
        "빌드 {build} 이미지 corp/api:{ver}-{sha7} 운영 반영 완료",
    ),
    (
        "업무 채팅, 비밀 없음",
        "웹훅 서명 검증 실패 원인은 파싱한 JSON으로 해시를 떠서였어요. 시크릿 자체는 문제 없었음",
    ),
    (
        "업무 채팅, 식별자",
        "사내 메신저 채널 ID C{up8}, 봇 사용자 ID U{up8}",
    ),
    (
        "업무 채팅, 식별자",
        "요청 ID {reqid} 로 스트라이프 대시보드에서 찾아보면 돼요",
    ),
    (
        "업무 채팅, 식별자",
        "CF-Ray {ray} 기준으로 클라우드플레어 로그 확인 부탁드려요",
    ),
    (
        "업무 채팅, 비밀 없음",
        "비밀번호 찾기 메일 링크 유효시간 30분으로 줄였습니다. 토큰은 1회용",
    ),
    (
        "업무 채팅, 식별자",
        "세션 ID 는 로그에 해시로만 남겨요 (sha256 앞 12자리: {hex8}{d4})",
    ),
    (
        "업무 채팅, 비밀 없음",
        "공인인증서 만료 예정 알림 왔어요. 갱신은 재무팀 담당자분이 직접 하셔야 해요",
    ),
    (
        "업무 채팅, 식별자",
        "사업자등록번호 {d3}-{d2}-{d5}, 대표번호 02-{d4}-{d4}",
    ),
    (
        "업무 채팅, 비밀 없음",
        "망분리 PC 원격접속은 OTP 인증 후 가능합니다. 비밀번호 공유는 금지예요",
    ),
    (
        "업무 채팅, 식별자",
        "로드밸런서 타겟 그룹 arn:aws:elasticloadbalancing:ap-northeast-2:{acct}:targetgroup/api/{hex8}{hex8}",
    ),
    (
        "업무 채팅, 식별자",
        "쿠팡 윙 벤더 ID A{d8}, 상품 등록 API 응답코드 200",
    ),
    (
        "업무 채팅, 비밀 없음",
        "DB 접근제어 솔루션 비상 계정은 사용 시 보안팀 승인 필요, 값은 봉인 봉투에 있음",
    ),
    (
        "업무 채팅, 식별자",
        "뉴렐릭 계정 ID {d7}, 앱 ID {d9} 대시보드 링크 공유드려요",
    ),
]
