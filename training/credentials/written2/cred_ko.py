"""Korean credential rows: secrets as developers in Korea write them at work, English terms mixed in."""

ROWS = [
    # 인수인계, 회의록
    (
        "인수인계",
        (
            "[인수인계] 운영 서버 관련",
            "",
            "1) 서버 목록",
            "- was01, was02 (톰캣 9), web01 (nginx)",
            "- 배치 서버 batch01 - 크론은 /etc/cron.d/settle 참고",
            "",
            "2) 계정",
            "- 관리자 계정 admin / ⟦{pw}⟧",
            "- DB는 DBA팀 통해서 신청",
            "",
            "3) 기타",
            "- 배포는 젠킨스 prod-deploy 잡으로만",
            "- 장애 시 연락: 인프라팀 박대리",
        ),
    ),
    (
        "인수인계",
        (
            "퇴사 전 인수인계 문서 (김철수)",
            "1. NAS 관리 페이지 http://192.168.10.5:5000 계정 nasadmin 접속암호 ⟦{pwk}⟧",
            "2. 사내 그룹웨어 연동 API 키 ⟦{hex32}⟧",
            "3. 도메인은 가비아 계정으로 관리 중 (계정은 팀장님이 알고 계심)",
        ),
    ),
    (
        "인수인계",
        "인수인계: 레거시 ERP DB는 sa 계정 그대로 씁니다. 비번 ⟦{pw}⟧ 이고 바꾸면 배치 다 깨져요 ㅠ",
    ),
    (
        "인수인계",
        (
            "## 스테이징 접속 정보",
            "| 항목 | 값 |",
            "|---|---|",
            "| 호스트 | stg-api-01 |",
            "| 계정 | ec2-user |",
            "| 키 비밀번호 | ⟦{pwp}⟧ |",
        ),
    ),
    (
        "회의록",
        (
            "주간 회의록 (3/18)",
            "- PG사 테스트 키 발급 완료: 시크릿 키 ⟦{tosssk}⟧",
            "- 운영 키는 보안 검토 후 별도 전달",
            "- 다음 주 QA 일정 확정",
        ),
    ),
    (
        "회의록",
        "장애 회고 메모: 새벽에 급해서 root 비번을 ⟦{pws}⟧로 임시 변경함 → 오늘 중 원복 필요",
    ),
    (
        "인수인계",
        (
            "휴가 기간 대리 업무 부탁드립니다.",
            "모니터링: 그라파나 admin / ⟦{pwk}⟧",
            "알람 채널은 #ops-alert 입니다",
        ),
    ),
    (
        "회의록",
        "킥오프 정리) 협력사 SFTP 접속: 호스트 sftp.partner.co.kr, 아이디 ourcorp_in, 접속암호 ⟦{pws}⟧. 매일 06시 파일 수신",
    ),
    # 로그, 에러
    (
        "로그",
        "2026-03-02 10:21:44.102 ERROR 31424 --- [nio-8080-exec-3] c.o.p.PaymentClient : 결제 API 호출 실패 secretKey=⟦{tosssk}⟧ status=401",
    ),
    (
        "로그",
        "[배치] 정산 파일 업로드 시작 - sftp://settle:⟦{pwu}⟧@10.1.20.31:22/upload (재시도 2회차)",
    ),
    (
        "로그",
        (
            "운영 로그에 이런 게 찍혀요;;",
            "INFO  AuthFilter - 요청 헤더 X-Api-Key=⟦{b32}⟧ uri=/v1/members",
            "로그 마스킹 좀 넣어야 할 듯",
        ),
    ),
    (
        "로그",
        "공공데이터 호출 로그: GET http://apis.data.go.kr/1360000/VilageFcstInfoService_2.0/getVilageFcst?serviceKey=⟦{datago}⟧&numOfRows=10&pageNo=1",
    ),
    (
        "로그",
        "DEBUG 카카오 로그인 토큰 교환 요청 client_secret=⟦{b32}⟧ redirect_uri=https://shop.co.kr/oauth/kakao",
    ),
    (
        "에러",
        (
            "이거 왜 안 될까요?",
            "```",
            "pymysql.err.OperationalError: (1045, \"Access denied for user 'batch'@'10.0.3.12' (using password: YES)\")",
            "```",
            "코드에는 password='⟦{pw}⟧' 로 되어 있고 DBA님이 준 값 그대로예요",
        ),
    ),
    (
        "에러",
        (
            "스택트레이스 공유드립니다",
            "2026-03-05 09:12:44.201 ERROR 1 --- [main] o.s.boot.SpringApplication : Application run failed",
            "org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'entityManagerFactory'",
            "  at org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.initializeBean(AbstractAutowireCapableBeanFactory.java:1806)",
            "  ... 27 common frames omitted",
            'Caused by: org.postgresql.util.PSQLException: FATAL: password authentication failed for user "order_app"',
            "  at org.postgresql.core.v3.ConnectionFactoryImpl.doAuthentication(ConnectionFactoryImpl.java:693)",
            "application-prod.yml 의 spring.datasource.password 는 ⟦{pwk}⟧ 입니다",
        ),
    ),
    (
        "로그",
        "nginx 에러로그에 basic auth 헤더가 통째로 남아있네요: Authorization: Basic ⟦{basic}⟧",
    ),
    # CI
    (
        "CI 출력",
        (
            "젠킨스 콘솔 출력 일부 붙여요 (#812 빌드)",
            "Started by user 김개발",
            "[Pipeline] node",
            "Running on agent-02 in /var/jenkins/workspace/api-deploy",
            "[Pipeline] stage (Docker Login)",
            "+ docker login -u deploy -p ⟦{pwa}⟧ harbor.corp.co.kr",
            "WARNING! Using --password via the CLI is insecure.",
            "Login Succeeded",
            "[Pipeline] stage (Push)",
            "+ docker push harbor.corp.co.kr/app/api:812",
            "비번이 콘솔에 그대로 나와요 withCredentials로 바꿔야 할 듯",
        ),
    ),
    (
        "CI 출력",
        (
            "GitHub Actions 로그에 마스킹이 안 됐어요 ㅠ",
            "Run ./deploy.sh",
            "  NCP_SECRET_KEY=⟦{b40}⟧",
            "  NCP_ACCESS_KEY=***",
        ),
    ),
    (
        "CI 출력",
        "GitLab CI 변수 설정 캡처 대신 텍스트로 드려요. SONAR_TOKEN = ⟦squ_{hex40}⟧ (protected 체크 해주세요)",
    ),
    (
        "CI 출력",
        (
            "$ ./gradlew publish -PnexusUser=ci -PnexusPassword=⟦{pw}⟧",
            "> Task :publishMavenPublicationToNexusRepository",
            "BUILD SUCCESSFUL in 41s",
        ),
    ),
    (
        "CI 출력",
        "ArgoCD CLI 로그인: argocd login argocd.corp.co.kr --username admin --password ⟦{pwa}⟧ --grpc-web",
    ),
    # 셸 히스토리
    (
        "셸 히스토리",
        (
            "서버 history 보니까 이렇게 되어 있던데요",
            "  201  cd /app/batch",
            "  202  mysql -u settle -p'⟦{pwk}⟧' -h db-master settle_db",
            "  203  vi conf/app.properties",
        ),
    ),
    (
        "셸 히스토리",
        "redis-cli -h redis-session.internal -a ⟦{pwa}⟧ --no-auth-warning keys 'sess:*' | wc -l  ← 이렇게 확인했어요",
    ),
    (
        "셸 히스토리",
        "echo '⟦{pws}⟧' | sudo -S systemctl restart tomcat  # 크론에 이렇게 들어가 있음 ㄷㄷ",
    ),
    (
        "셸 히스토리",
        'curl -X POST https://kapi.kakao.com/v2/api/talk/memo/default/send -H "Authorization: Bearer ⟦{b40}⟧" -d template_object=... 로 테스트했습니다',
    ),
    # 도커, k8s
    (
        "도커",
        (
            "docker-compose.yml 에서",
            "services:",
            "  cms:",
            "    build: .",
            "    depends_on: [mariadb]",
            "    ports:",
            '      - "8080:8080"',
            "  mariadb:",
            "    image: mariadb:11",
            "    environment:",
            "      MARIADB_ROOT_PASSWORD: ⟦{pwk}⟧",
            "      MARIADB_DATABASE: cms",
            "    volumes: [db:/var/lib/mysql]",
            "이 부분 운영이랑 같은 값이라 분리해야 합니다",
        ),
    ),
    (
        "도커",
        "사내 하버 로봇 계정: robot$ci-push / ⟦{b32}⟧ (프로젝트 app-images 푸시 권한)",
    ),
    (
        "쿠버네티스",
        (
            "시크릿 yaml 올려드려요",
            "apiVersion: v1",
            "kind: Secret",
            "metadata:",
            "  name: naver-api",
            "data:",
            "  client-secret: ⟦{b64pw}⟧",
        ),
    ),
    (
        "쿠버네티스",
        "kubectl create secret docker-registry ncr-cred --docker-server=corp.kr.ncr.ntruss.com --docker-username=⟦{b20}⟧ --docker-password=⟦{b40}⟧ -n app",
    ),
    (
        "쿠버네티스",
        (
            "kubeconfig 공유해요 (dev 클러스터)",
            "users:",
            "- name: dev-admin",
            "  user:",
            "    token: ⟦{jwt}⟧",
        ),
    ),
    (
        "쿠버네티스",
        "helm install pg bitnami/postgresql --set auth.postgresPassword=⟦{pwa}⟧ --set auth.database=app -n data 로 깔았습니다",
    ),
    # 테라폼, 앤서블
    (
        "테라폼",
        (
            "tfvars 파일에 이렇게 박혀 있음",
            'ncloud_access_key = "⟦{b20}⟧"',
            'ncloud_secret_key = "⟦{b40}⟧"',
            'region            = "KR"',
        ),
    ),
    (
        "테라폼",
        (
            'resource "aws_rds_cluster" "aurora" {',
            '  master_username = "dbadmin"',
            '  master_password = "⟦{pws}⟧"  # TODO: secrets manager로 옮기기',
            "}",
        ),
    ),
    (
        "앤서블",
        (
            "group_vars/prod.yml",
            "tomcat_manager_user: manager",
            "tomcat_mgr_credential: ⟦{pwk}⟧",
            "java_home: /usr/lib/jvm/java-17",
        ),
    ),
    (
        "앤서블",
        "ansible all -i hosts -m ping -e ansible_password=⟦{pw}⟧ -u centos 로 했더니 됐어요",
    ),
    # env, 설정 파일
    (
        "env 파일",
        (
            "# .env (로컬용이라고 써있는데 운영 값임)",
            "KAKAO_REST_API_KEY=⟦{hex32}⟧",
            "KAKAO_CLIENT_SECRET=⟦{b32}⟧",
            "SERVER_PORT=8080",
        ),
    ),
    (
        "env 파일",
        (
            "NAVER_CLIENT_ID=Xk2mP9qL7vWnB4tR1sYd",
            "NAVER_CLIENT_SECRET=⟦{b20}⟧",
        ),
    ),
    (
        "env 파일",
        "IAMPORT_API_KEY=⟦{d8}{d8}⟧\nIAMPORT_API_SECRET=⟦{b40}{b20}⟧",
    ),
    (
        "env 파일",
        "SLACK_BOT_TOKEN=⟦{xoxb}⟧ ← 이거 레포에 올라갔어요 빨리 폐기해야 할 것 같아요",
    ),
    (
        "yaml 설정",
        (
            "application.yml",
            "spring:",
            "  profiles:",
            "    active: prod",
            "  mail:",
            "    host: smtp.gmail.com",
            "    port: 587",
            "    username: noreply@corp.co.kr",
            "    password: ⟦{app}⟧",
            "    properties:",
            "      mail.smtp.starttls.enable: true",
            "지메일 앱 비밀번호라 2단계 인증 풀면 안 돼요",
        ),
    ),
    (
        "yaml 설정",
        (
            "cloud:",
            "  aws:",
            "    credentials:",
            "      access-key: ⟦{akid}⟧",
            "      secret-key: ⟦{awssk}⟧",
            "    region:",
            "      static: ap-northeast-2",
        ),
    ),
    (
        "yaml 설정",
        (
            "settlement:",
            "  bank-api:",
            "    org-code: 10023",
            "    비밀키: ⟦{b32}⟧",
        ),
    ),
    (
        "properties 설정",
        (
            "# db.properties",
            "jdbc.driver=oracle.jdbc.OracleDriver",
            "jdbc.url=jdbc:oracle:thin:@10.10.1.20:1521:ORCL",
            "jdbc.username=ERP_APP",
            "jdbc.password=⟦{pw}⟧",
        ),
    ),
    (
        "properties 설정",
        "globals.properties 에 Globals.Password = ⟦{pwk}⟧ 로 평문 저장돼 있습니다 (전자정부프레임워크 기본 구조)",
    ),
    (
        "toml 설정",
        (
            "[mysql]",
            'host = "10.0.2.15"',
            'user = "crawler"',
            '접속암호 = "⟦{pw}⟧"',
        ),
    ),
    (
        "ini 설정",
        (
            "[ftp]",
            "server=ftp.logistics.co.kr",
            "id=corp01",
            "pw=⟦{pwl}⟧",
        ),
    ),
    (
        "json 설정",
        '{"pg": {"mid": "corp00001m", "signKey": "⟦{b40}⟧", "mode": "real"}}  ← 이니시스 설정 파일이에요',
    ),
    (
        "json 설정",
        (
            "firebase admin 설정 json 중 일부입니다",
            '  "private_key_id": "{hex40}",',
            '  "private_key": "-----BEGIN PRIVATE KEY-----\\n⟦{pem}⟧\\n⟦{pem}⟧\\n...',
        ),
    ),
    # 접속 문자열
    (
        "접속 문자열",
        "운영 DB URL: jdbc:mariadb://10.20.0.11:3306/shop?user=shop_app&password=⟦{pwu}⟧&useSSL=false",
    ),
    (
        "접속 문자열",
        "몽고 접속은 mongodb+srv://log_writer:⟦{pwu}⟧@log-cluster.ab12c.mongodb.net/ 이걸로 하시면 돼요",
    ),
    ("접속 문자열", "레디스 주소 redis://default:⟦{pwa}⟧@10.0.5.7:6379/1 로 바뀌었습니다"),
    (
        "접속 문자열",
        "RabbitMQ 연결 문자열: amqp://noti:⟦{pw}⟧@mq.internal:5672/noti 로 변경 부탁드려요",
    ),
    (
        "접속 문자열",
        "MSSQL은 Server=10.1.1.40,1433;Database=HR;User Id=hr_read;Password=⟦{pws}⟧; 이렇게 넣으니까 붙었어요",
    ),
    ("접속 문자열", "티베로 접속: tbsql erp_user/⟦{pwl}⟧@TIBERO_PRD"),
    (
        "접속 문자열",
        "ODBC DSN 설정 → Driver={MySQL ODBC 8.0};Server=bi-db;Uid=tableau;Pwd=⟦{pw}⟧; 이걸로 태블로 연결했습니다",
    ),
    (
        "접속 문자열",
        "엘라스틱 주소 https://elastic:⟦{pwa}⟧@es.corp.co.kr:9200 키바나도 같은 계정이에요",
    ),
    ("접속 문자열", "오라클은 sqlplus scott/⟦{pw}⟧@//ora-dev:1521/DEVPDB 로 접속 확인했어요"),
    # HTTP
    (
        "HTTP 요청",
        (
            "포스트맨에서 이렇게 호출하면 됩니다",
            "POST https://api.corp.co.kr/v1/point/use",
            "X-Auth-Token: ⟦{uuid}⟧",
            "Content-Type: application/json",
        ),
    ),
    (
        "HTTP 요청",
        'curl -H "Authorization: KakaoAK ⟦{hex32}⟧" "https://dapi.kakao.com/v2/local/search/address.json?query=판교역로"',
    ),
    (
        "HTTP 요청",
        (
            "curl 'https://admin.shop.co.kr/api/orders' \\",
            "  -H 'Cookie: JSESSIONID=⟦{sess}⟧; lang=ko' \\",
            "  -H 'Referer: https://admin.shop.co.kr/'",
            "관리자 세션 쿠키 그대로 복사한 거라 재현 가능하실 거예요",
        ),
    ),
    (
        "HTTP 요청",
        "네이버 검색 API 호출 헤더: X-Naver-Client-Id: nQ4kT2wZ8rB6yH1pL0cV / X-Naver-Client-Secret: ⟦{b20}⟧",
    ),
    (
        "HTTP 요청",
        (
            "GET /openapi/v1/stocks HTTP/1.1",
            "appkey: ⟦{b32}⟧",
            "appsecret: ⟦{b40}{b40}⟧",
            "tr_id: FHKST01010100",
        ),
    ),
    (
        "HTTP 요청",
        'httpie로 테스트: http :8080/api/admin/stats "X-Api-Key:⟦{b40}⟧" 결과 200 나옵니다',
    ),
    # 티켓, 메일
    (
        "티켓",
        (
            "[JIRA] INFRA-1024 스테이징 DB 접속 불가",
            "설명: 위키에 있는 계정 stg_app / ⟦{pw}⟧ 로 접속 시 타임아웃 발생",
            "담당자: 인프라팀",
        ),
    ),
    (
        "티켓",
        "보안 점검 결과: 프론트 번들(main.8f2a.js)에 AWS 시크릿 ⟦{awssk}⟧ 하드코딩되어 있음. 긴급 조치 요망",
    ),
    (
        "티켓",
        "요청사항) 협력사 계정 생성 완료했습니다. ID: vendor_hanil, 초기 비밀번호: ⟦{pwk}⟧ (첫 로그인 시 변경)",
    ),
    (
        "전달된 메일",
        (
            "---------- 전달된 메일 ----------",
            "보낸사람: 정보보안팀 <security@corp.co.kr>",
            "받는사람: 홍길동",
            "제목: VPN 계정 발급 안내",
            "",
            "안녕하세요, 정보보안팀입니다.",
            "요청하신 VPN 계정이 발급되었습니다.",
            "",
            "아이디: dev_hong",
            "임시 비밀번호: ⟦{pws}⟧",
            "OTP 등록은 첫 접속 시 진행됩니다.",
            "감사합니다.",
        ),
    ),
    (
        "전달된 메일",
        (
            "FW: [KCP] 가맹점 연동 정보",
            "> 사이트 코드: T0000",
            "> 사이트 키: ⟦{b20}⟧",
            "> 위 정보는 외부 유출에 주의하시기 바랍니다.",
            "이거 결제 모듈에 넣어주세요",
        ),
    ),
    (
        "전달된 메일",
        "고객사에서 온 메일인데요, '테스트 서버 관리자 비밀번호는 ⟦{pw}⟧입니다. 검수 끝나면 변경 예정'이라고 합니다",
    ),
    (
        "전달된 메일",
        (
            "Fwd: 공공데이터포털 활용신청 승인",
            "일반 인증키(Encoding): ⟦{datago}⟧",
            "활용기간: 2026-03-01 ~ 2028-03-01",
        ),
    ),
    # 에이전트, 도구 메시지
    (
        "에이전트 반복",
        "`.env`에 DB_PASSWORD=⟦{pw}⟧ 를 추가했습니다. 서버를 재시작하면 적용됩니다.",
    ),
    (
        "에이전트 반복",
        "확인해보니 `config/secrets.yml` 12번째 줄에 토큰 `⟦{ghp}⟧`이 평문으로 있습니다. 폐기 후 환경변수로 옮기는 걸 권장드려요.",
    ),
    (
        "도구 출력",
        (
            "[tool] cat /etc/app/conf.d/mail.conf",
            "smtp_host = smtp.daum.net",
            "smtp_user = alert@corp.co.kr",
            "smtp_auth = ⟦{pwk}⟧",
        ),
    ),
    (
        "에이전트 반복",
        "말씀하신 관리자 계정(admin / ⟦{pwa}⟧)으로 로그인해서 배너 교체까지 완료했습니다.",
    ),
    (
        "도구 출력",
        '{"tool":"secrets.get","key":"prod/kakao","value":{"rest_api_key":"⟦{hex32}⟧","admin_key":"⟦{hex32}⟧"}}',
    ),
    (
        "에이전트 반복",
        "요청하신 대로 `CREATE USER 'report'@'%' IDENTIFIED BY '⟦{pws}⟧';` 실행했고 SELECT 권한만 부여했습니다.",
    ),
    # OTP, 복구 코드
    (
        "일회용 코드",
        "AWS 콘솔 MFA 코드 ⟦{otp}⟧ 입니다. 30초 안에 넣어주세요",
    ),
    (
        "일회용 코드",
        "배포 승인 OTP 불러드릴게요 ⟦{otp}⟧ (구글 OTP 기준)",
    ),
    (
        "복구 코드",
        (
            "공용 깃허브 계정 복구 코드 (금고 보관용)",
            "⟦{rc}⟧",
            "⟦{rc}⟧",
            "⟦{rc}⟧",
        ),
    ),
    (
        "일회용 코드",
        "팀 공용 계정 OTP 시크릿 키는 ⟦{totp}⟧ 이거 구글 OTP 앱에 수동 등록하시면 됩니다",
    ),
    (
        "복구 코드",
        "슬랙 워크스페이스 2단계 인증 백업 코드 남은 거 ⟦{rc}⟧, ⟦{rc}⟧ 두 개예요",
    ),
    (
        "일회용 코드",
        "[Web발신] [AWS] 루트 계정 로그인 인증코드 ⟦{otp}⟧ 요거 대표님 폰으로 왔대요",
    ),
    # 키 분할
    (
        "키 분할",
        "슬랙에서 토큰이 자동 차단돼서 나눠 보낼게요 앞부분 ⟦{b24}⟧",
    ),
    (
        "키 분할",
        "뒷부분은 ⟦{b24}⟧ 입니다. 공백 없이 붙여서 쓰세요",
    ),
    (
        "키 분할",
        (
            "배포키 길어서 잘렸네요. 이어서 붙여요",
            "⟦{pem}⟧",
            "⟦{pem}⟧",
            "⟦{pemtail}⟧",
            "-----END RSA PRIVATE KEY-----",
        ),
    ),
    (
        "키 분할",
        "ACCESS KEY는 ⟦{akid}⟧ 이고, 시크릿은 DM으로 ⟦{awssk}⟧ 보냈어요 (앞뒤 공백 주의)",
    ),
    # SSH, GPG
    (
        "SSH 패스프레이즈",
        "bastion 접속 키 패스프레이즈가 ⟦{pwp}⟧ 인데 매번 치기 귀찮으면 ssh-agent 쓰세요",
    ),
    (
        "GPG 패스프레이즈",
        "릴리즈 서명용 GPG 키 암호 ⟦{pws}⟧, 키 파일은 공유드라이브 /release/keys 에 있어요",
    ),
    (
        "인증서 비밀번호",
        "SSL 인증서 pfx 비번 ⟦{pwk}⟧ 입니다. IIS에 import할 때 필요해요",
    ),
    (
        "인증서 비밀번호",
        "keystore.jks 비밀번호는 ⟦{pwa}⟧, alias는 tomcat 입니다",
    ),
    (
        "인증서 비밀번호",
        "공동인증서 비밀번호 ⟦{pw}⟧ 로 법인 인터넷뱅킹 자동이체 배치 돌아가고 있어요",
    ),
    # SQL
    ("SQL", "DBA 요청으로 실행: ALTER USER 'crm'@'%' IDENTIFIED BY '⟦{pws}⟧'; FLUSH PRIVILEGES;"),
    (
        "SQL",
        "postgres에서 ALTER ROLE batch_writer PASSWORD '⟦{pwk}⟧'; 로 바꿨어요 다들 설정 업데이트 해주세요",
    ),
    ("SQL", "CREATE USER 'grafana'@'10.0.%' IDENTIFIED BY '⟦{pw}⟧'; -- 모니터링용 계정"),
    (
        "SQL",
        (
            "-- 오라클 계정 생성 스크립트 (운영)",
            'CREATE USER MES_IF IDENTIFIED BY "⟦{pwa}⟧";',
            "GRANT CONNECT, RESOURCE TO MES_IF;",
        ),
    ),
    (
        "SQL",
        "INSERT INTO api_clients (name, secret) VALUES ('pos-gateway', '⟦{b40}⟧'); 수동으로 넣어뒀습니다",
    ),
    # vault, 1password
    (
        "vault 출력",
        (
            "vault 조회 결과 붙여요",
            "$ vault kv get -field=password secret/prod/mysql",
            "⟦{pwa}⟧",
        ),
    ),
    (
        "1password 출력",
        "op item get '운영 RDS' --reveal 결과 password 필드: ⟦{pws}⟧",
    ),
    (
        "vault 출력",
        (
            "=== Secret Path ===",
            "kv/data/app/payment",
            "Key        Value",
            "api_key    ⟦{b32}⟧",
            "api_secret ⟦{b40}⟧",
        ),
    ),
    # 업무 채팅
    (
        "업무 채팅",
        "운영 젠킨스 admin 비번 ⟦{pw}⟧로 바꿨습니다. 공용 계정이라 개인 계정 쓰시는 거 권장해요",
    ),
    (
        "업무 채팅",
        "QA용 테스트 계정 qa_tester01 / ⟦{pwl}⟧ 로 통일했어요. 결제 테스트는 테스트 카드로만!",
    ),
    (
        "업무 채팅",
        "깃랩 프로젝트 액세스 토큰 새로 발급했어요 ⟦{glpat}⟧ (만료 30일)",
    ),
    (
        "업무 채팅",
        "사내 위키 봇 계정 wiki-bot 토큰: ⟦{b32}⟧ 컨플루언스 API용이에요",
    ),
    (
        "업무 채팅",
        "OpenAI 키 팀 공용으로 하나 팠습니다 ⟦{sk}⟧ 월 한도 걸어둠",
    ),
    (
        "업무 채팅",
        "iDRAC 초기 계정 root / ⟦{pw}⟧ 로 되어 있어서 변경 필요합니다 (랙 C3 서버들)",
    ),
    (
        "업무 채팅",
        "네이버 클라우드 서브계정 콘솔 로그인: dev-kim / ⟦{pws}⟧ 최초 로그인 후 변경해주세요",
    ),
    (
        "업무 채팅",
        "혹시 몰라서 남겨요. 사내 와이파이 CORP-DEV 비밀번호 ⟦{pwk}⟧ (게스트 아님)",
    ),
    (
        "업무 채팅",
        "npm 사내 레지스트리 토큰 ⟦{npm}⟧ 을 .npmrc에 넣으시면 private 패키지 받아져요",
    ),
    (
        "업무 채팅",
        "슬랙 웹훅 URL https://hooks.slack.com/services/⟦{hook}⟧ 이걸로 알람 붙이시면 됩니다",
    ),
    (
        "업무 채팅",
        "제니퍼 APM 관리자 비번이 ⟦{pwl}⟧ 그대로더라구요 ㅋㅋ 설치 기사님이 안 바꾸고 가심",
    ),
    (
        "업무 채팅",
        "도커허브 PAT ⟦{dckr}⟧ 로 바꿨어요. rate limit 때문에 CI에 넣음",
    ),
    (
        "업무 채팅",
        "파이썬 패키지 배포용 PyPI 토큰 ⟦{pypi}⟧ 입니다. 1회용으로 쓰고 삭제 예정",
    ),
    (
        "업무 채팅",
        "스웨거에서 Authorize 누르고 ⟦{jwt}⟧ 넣으면 관리자 API 호출돼요 (dev 전용, 24시간)",
    ),
    (
        "업무 채팅",
        "HashiCorp Vault 루트 토큰 ⟦{hvs}⟧ … 이건 초기 세팅 끝나면 revoke 할게요",
    ),
    (
        "업무 채팅",
        "센트리 인증 토큰 ⟦{sntry}⟧ 소스맵 업로드용으로 CI에 넣어주세요",
    ),
    (
        "업무 채팅",
        "구글 맵 API 키 ⟦{aiza}⟧ 인데 아직 도메인 제한 안 걸려있어요!!",
    ),
    (
        "업무 채팅",
        "애저 스토리지 키 ⟦{azkey}⟧ 입니다. 로그 백업 컨테이너용",
    ),
    (
        "업무 채팅",
        "앤트로픽 키는 ⟦{skant}⟧, 사용량 대시보드는 팀장님만 볼 수 있어요",
    ),
    (
        "업무 채팅",
        "그 VM 콘솔 계정 ubuntu 비밀번호가 ⟦{pws}⟧ 였는데 cloud-init에서 덮어썼을 수도 있어요",
    ),
    (
        "업무 채팅",
        "라우터 관리자 페이지 192.168.0.1 계정 admin 비번 ⟦{hpw}⟧ 한글 자판으로 그대로 치세요",
    ),
    (
        "업무 채팅",
        "방금 SMS 인증번호 ⟦{otp}⟧ 받았어요, 통신사 본인인증 테스트 계속 진행할게요",
    ),
    (
        "업무 채팅",
        "깃허브 액션 시크릿에 넣을 값: DEPLOY_TOKEN=⟦{ghpat}⟧",
    ),
    (
        "업무 채팅",
        "PG 웹훅 서명 검증 키 ⟦{hex64}⟧ 로 HMAC 검증하면 됩니다",
    ),
    (
        "업무 채팅",
        (
            "테스트 서버 정보",
            "IP: 10.0.8.21",
            "계정: tester",
            "패스: ⟦{pwk}⟧",
            "용도: 부하테스트",
        ),
    ),
    (
        "업무 채팅",
        "어드민 세션 토큰 만료 안 되는 버그 재현: 쿠키 admin_sid=⟦{sess}⟧ 로 하루 지나도 접근됨",
    ),
    (
        "업무 채팅",
        "NAS 공유폴더 \\\\nas01\\design 접속하실 때 design / ⟦{pwl}⟧ 입력하세요",
    ),
    (
        "업무 채팅",
        "우리 테넌트 글로벌 관리자 계정 이거예요: admin@corpkr.onmicrosoft.com, ⟦{pwa}⟧",
    ),
    (
        "업무 채팅",
        "외주사에 FTP 계정 전달했어요 - ID outsrc02, 비번 ⟦{pw}⟧. 프로젝트 끝나면 삭제",
    ),
    (
        "업무 채팅",
        "사내 메일 SMTP 릴레이 인증정보: relay@corp.co.kr / ⟦{pws}⟧ (포트 587)",
    ),
    (
        "업무 채팅",
        "깃 클론 안 되면 https://ci-bot:⟦{glpat}⟧@gitlab.corp.co.kr/be/api.git 이렇게 해보세요",
    ),
    (
        "업무 채팅",
        "회계팀 공유 엑셀 열람 암호는 ⟦{pwl}⟧예요. 월말 정산 파일만 해당",
    ),
    (
        "업무 채팅",
        "모바일 앱 서명 키스토어 암호 ⟦{pwk}⟧, 키 암호도 동일하게 해뒀어요",
    ),
    (
        "업무 채팅",
        "age 키 공유합니다 ⟦{age}⟧ sops로 암호화된 values-prod.yaml 복호화할 때 써요",
    ),
    (
        "업무 채팅",
        "토스페이먼츠 운영 시크릿키 ⟦{tosssk}⟧ 서버에만 두세요 절대 프론트에 넣지 말고요",
    ),
    (
        "업무 채팅",
        "테라폼 클라우드 팀 토큰 ⟦{tfc}⟧ 로컬 credentials.tfrc.json 에 넣으면 plan 돌아가요",
    ),
    (
        "업무 채팅",
        "센드그리드 키 재발급: ⟦{sg}⟧ 기존 키는 오늘 밤 삭제합니다",
    ),
    (
        "업무 채팅",
        "Vault AppRole secret_id ⟦{uuid}⟧ 발급했어요 role_id는 위키에 있음",
    ),
    (
        "업무 채팅",
        "DB 접근제어 솔루션 우회용 비상 계정 emergency / ⟦{pws}⟧, 사용 시 반드시 보안팀 보고",
    ),
    (
        "업무 채팅",
        "쿠팡 윙 API 시크릿 ⟦{hex40}⟧, 액세스키는 위키 참고",
    ),
    (
        "업무 채팅",
        "카카오 어드민 키 ⟦{hex32}⟧ 이건 서버에서만 쓰는 키라 노출되면 안 됩니다",
    ),
    (
        "업무 채팅",
        "지라 API 토큰 만들었어요 ⟦ATATT3xFfGF0{b40}{b40}⟧ 자동화 스크립트용",
    ),
    (
        "업무 채팅",
        "스테이징 Redis 비번 ⟦{pwa}⟧ 으로 requirepass 걸었어요. 앱 설정도 같이 바꿔야 해요",
    ),
    (
        "업무 채팅",
        "배치 서버 crontab 에 `PGPASSWORD=⟦{pwk}⟧ psql ...` 이렇게 들어있어서 .pgpass로 바꿀게요",
    ),
    (
        "업무 채팅",
        "운영 MongoDB 관리자 root / ⟦{pws}⟧ 입니다. 당분간 저랑 팀장님만 알고 있기로",
    ),
    (
        "업무 채팅",
        "GCP 서비스 계정 키 private_key 부분만 드리면 ⟦{pem}⟧ 로 시작하는 줄부터예요",
    ),
    (
        "업무 채팅",
        "디스코드 봇 토큰 ⟦{b24}.{up6}.{b32}⟧ 알림봇에 쓰는 거",
    ),
    (
        "업무 채팅",
        "사내 LDAP bind 계정 cn=readonly 비밀번호 ⟦{pwa}⟧ 입니다 (그룹웨어 연동용)",
    ),
    (
        "업무 채팅",
        "모니터링 에이전트 설치할 때 license key 입력하라고 나오면 ⟦{hex40}⟧ 넣으세요 (뉴렐릭)",
    ),
    (
        "업무 채팅",
        "개인정보 추출 파일 zip 암호 ⟦{pws}⟧ 입니다. 메일과 별도로 전달드려요",
    ),
    (
        "업무 채팅",
        "오늘부터 운영 DB 비번 ⟦{pwk}⟧ 입니다. 기존 비번은 18시에 만료",
    ),
]
