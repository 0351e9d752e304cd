"""Word lists of the embedded provider: stopwords (English and Korean), Korean particles and endings,
and the keywords that point at each default category (word lists are kept as split strings)."""

from __future__ import annotations

ENGLISH_STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each either else etc even ever every few for from further get gets getting go goes
    going got had hadn't has hasn't have haven't having he her here hers herself him himself his how
    however i if in into is isn't it it's its itself just let like make makes many may me might more
    most much must my myself need needs new no nor not now of off often on once one only or other others
    our ours ourselves out over own per rather really same see seems she should shouldn't so some such
    than that that's the their theirs them themselves then there there's these they this those through
    thus to too two under until up upon us use used uses using very via want was wasn't way ways we well
    were weren't what when where whether which while who whom why will with within without won't would
    wouldn't yet you your yours yourself yourselves first second also example e.g i.e vs will shall lets
    let's able""".split()
)

KOREAN_STOPWORDS = frozenset(
    """그리고 그러나 하지만 그래서 또한 또는 및 등 등등 이 그 저 것 수 때 때문 경우 통해 위해 위한 대한 대해 같은 같이 있다 없다 하다 되다 이다 있는 없는 하는 되는 이런 저런
    그런 우리 저희 여기 거기 저기 지금 이제 아주 매우 정말 너무 조금 많이 모든 각 어떤 무엇 어떻게 왜 누가 언제 어디 다른 다시 바로 먼저 이후 이전 가장 더 덜 또 즉 곧
    만약 만일 혹은 이번 다음 오늘 내일 어제 정도 사용 방법 내용 부분 관련 문제 하나 두 이것 그것 저것 여러 경우에 때문에 합니다 있습니다 됩니다 입니다 했다 한다 된다 있음
    없음""".split()
)

# Longest first: the first ending that leaves at least two characters is stripped.
KOREAN_SUFFIXES = tuple(
    sorted(
        """은 는 이 가 을 를 의 에 에서 에게 께 한테 으로 로 와 과 도 만 까지 부터 처럼 보다 이나 나 이며 며 이고 고 이라 라 이란 란 이라는 라는 에는 에서는 으로는 로는 에도
        에서도 으로도 로도 과의 와의 과는 와는 이다 입니다 이었다 였다 이에요 예요 하다 합니다 했다 한다 하는 하고 하여 해서 했던 하며 되다 된다 됩니다 되는 되어 돼서 적인 적으로
        적 들 들은 들이 들을 들의 들에 하게 하기 하면 해준다 해주는 해야 한다면 하기에 되기 되면 시킨다 시키는 이다.""".split(),
        key=len,
        reverse=True,
    )
)

CATEGORY_KEYWORDS: dict[str, frozenset[str]] = {
    "Frontend": frozenset(
        """react vue angular svelte css html dom browser javascript typescript frontend webpack vite jsx tsx
        tailwind component ui ux next.js nextjs 프론트엔드 프론트 브라우저 컴포넌트 렌더링 화면 스타일""".split()
    ),
    "Backend": frozenset(
        """backend server api rest graphql spring django flask fastapi express node.js nodejs endpoint
        controller middleware http request response grpc microservice 백엔드 서버 스프링 엔드포인트 요청 응답 트랜잭션
        transaction jpa orm""".split()
    ),
    "Programming Languages": frozenset(
        """python java kotlin rust go golang c++ c# swift ruby scala haskell language syntax compiler generics
        closure async await coroutine 언어 문법 컴파일러 제네릭 클로저 코루틴 파이썬 자바 코틀린 러스트""".split()
    ),
    "AI/ML": frozenset(
        """ai ml machine learning model llm gpt transformer neural network training inference embedding
        embeddings pytorch tensorflow rag prompt fine-tuning dataset 인공지능 머신러닝 딥러닝 모델 학습 추론 임베딩 신경망 프롬프트
        데이터셋""".split()
    ),
    "Data Engineering": frozenset(
        """etl pipeline spark kafka airflow hadoop flink streaming batch warehouse lakehouse dbt data 파이프라인
        스트리밍 배치 데이터 웨어하우스 카프카 스파크""".split()
    ),
    "Databases": frozenset(
        """database sql sqlite postgres postgresql mysql mongodb redis index query queries join schema
        migration mvcc wal vacuum btree b-tree nosql 데이터베이스 인덱스 쿼리 스키마 마이그레이션 조인 테이블""".split()
    ),
    "Infra/DevOps": frozenset(
        """docker kubernetes k8s terraform ansible ci cd devops aws gcp azure cloud deploy deployment container
        helm nginx linux monitoring prometheus grafana 인프라 배포 컨테이너 쿠버네티스 도커 클라우드 모니터링""".split()
    ),
    "CS": frozenset(
        """algorithm algorithms complexity data-structure tree graph hash sorting operating system os network
        tcp udp memory cache process thread concurrency 알고리즘 자료구조 복잡도 운영체제 네트워크 메모리 캐시 프로세스 스레드 동시성""".split()
    ),
    "Security": frozenset(
        """security auth authentication authorization oauth jwt token xss csrf injection encryption tls ssl
        vulnerability cve password hashing 보안 인증 인가 암호화 취약점 토큰 비밀번호""".split()
    ),
    "Mobile": frozenset(
        """android ios swiftui jetpack compose flutter react-native mobile app xcode 모바일 안드로이드 앱""".split()
    ),
    "Architecture/Design": frozenset(
        """architecture design pattern patterns ddd domain hexagonal clean solid microservices event-driven
        cqrs modular refactoring coupling cohesion 아키텍처 설계 패턴 도메인 리팩토링 결합도 응집도""".split()
    ),
    "Testing/QA": frozenset(
        """test tests testing unit integration e2e pytest junit jest mock mocking tdd coverage qa regression
        테스트 단위 통합 커버리지 목""".split()
    ),
}

# Every category keyword: a technical term wherever it appears (tags, quiz terms, word scores).
KNOWN_TERMS: frozenset[str] = frozenset().union(*CATEGORY_KEYWORDS.values())
