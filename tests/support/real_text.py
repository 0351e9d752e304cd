"""Real technical prose for vector tests and benchmarks: docstring paragraphs of the standard library and
of installed packages (never a synthetic vocabulary, whose vectors behave nothing like real ones)."""

from __future__ import annotations

import importlib
import inspect
import warnings

MODULES = (
    "argparse", "asyncio.events", "calendar", "collections", "configparser", "contextlib", "csv", "dataclasses",
    "datetime", "decimal", "difflib", "email.message", "enum", "fractions", "functools", "heapq", "http.client",
    "inspect", "io", "itertools", "json", "logging", "optparse", "os", "pathlib", "pydoc", "random", "re",
    "shutil", "socket", "sqlite3", "ssl", "statistics", "string", "subprocess", "tarfile", "tempfile",
    "textwrap", "threading", "typing", "unittest.case", "urllib.request", "zipfile", "sqlalchemy.orm.session",
    "sqlalchemy.engine.base", "sqlalchemy.orm.query", "sqlalchemy.sql.elements", "sqlalchemy.sql.selectable",
    "sqlalchemy.sql.schema", "httpx._client", "alembic.command",
)  # fmt: skip


def paragraphs(limit: int | None = None) -> list[str]:
    found: list[str] = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        with warnings.catch_warnings():  # some members are deprecated aliases (typing.io): only their text is read
            warnings.simplefilter("ignore")
            docs = [inspect.getdoc(item) or "" for _name, item in inspect.getmembers(module)]
        for doc in docs:
            for paragraph in doc.split("\n\n"):
                if 150 <= len(paragraph) <= 1500:
                    found.append(paragraph)
    unique = list(dict.fromkeys(found))
    return unique[:limit] if limit else unique


KOREAN = (
    "SQLite의 WAL 모드에서는 쓰기 작업이 진행되는 동안에도 읽기 작업이 막히지 않는다",
    "체크포인트는 WAL 파일에 쌓인 페이지를 데이터베이스 파일로 옮겨 적는 과정이다",
    "인덱스를 추가하면 조회는 빨라지지만 쓰기마다 인덱스도 함께 갱신해야 하므로 저장이 느려진다",
    "파이썬의 제너레이터는 값을 한 번에 하나씩 만들어 주기 때문에 큰 데이터를 다룰 때 메모리를 아낄 수 있다",
    "컨텍스트 매니저를 쓰면 예외가 나더라도 파일이나 연결을 빠짐없이 닫을 수 있다",
    "스레드 풀은 작업마다 스레드를 새로 만드는 비용을 줄이고 동시에 도는 작업 수를 제한한다",
    "GIL 때문에 파이썬 스레드는 CPU 작업을 병렬로 실행하지 못하지만 입출력 대기에는 여전히 쓸모가 있다",
    "리액트의 useEffect는 렌더링이 끝난 뒤에 실행되며 의존성 배열이 바뀔 때만 다시 실행된다",
    "도커 멀티 스테이지 빌드는 빌드 도구를 최종 이미지에서 빼서 이미지 크기를 크게 줄여 준다",
    "HTTP 429 응답을 받으면 Retry-After 헤더가 알려 주는 시간만큼 기다렸다가 다시 요청해야 한다",
    "지수 백오프에 무작위 지연을 더하면 여러 클라이언트가 한꺼번에 재시도하는 일을 막을 수 있다",
    "깃 커밋은 트리와 부모 커밋을 가리키는 객체이고 브랜치는 커밋을 가리키는 이름일 뿐이다",
    "벡터 검색에서 코사인 유사도는 벡터를 정규화한 뒤의 내적과 같다",
    "임베딩 모델이 바뀌면 이전 모델로 만든 벡터와는 서로 비교할 수 없으므로 다시 계산해야 한다",
    "트랜잭션을 짧게 유지하면 잠금 경합이 줄어들고 다른 작업이 기다리는 시간도 줄어든다",
    "정규 표현식의 탐욕적 수량자는 가능한 한 길게 일치시키고 게으른 수량자는 가능한 한 짧게 일치시킨다",
    "유니코드 정규화를 하지 않으면 눈에 같아 보이는 두 문자열이 서로 다르다고 비교될 수 있다",
    "테스트는 실제 동작을 확인해야 하며 실패할 수 없는 테스트는 아무것도 보장하지 않는다",
    "프로세스가 강제로 종료되어도 데이터가 남도록 하려면 쓰기를 마친 뒤 fsync로 디스크에 내려 써야 한다",
    "마이그레이션 전에 데이터베이스 파일을 백업해 두면 실패했을 때 원래 상태로 되돌릴 수 있다",
    "큐에서 작업을 가져갈 때 소유권을 기록해 두면 멈춘 작업을 다른 작업자가 안전하게 이어받을 수 있다",
    "간격 반복 학습은 잊어버릴 즈음에 다시 떠올리게 해서 기억을 오래 붙잡아 둔다",
    "오늘 배운 것을 짧게 적어 두면 나중에 다시 찾아보기도 쉽고 복습 질문을 만들기도 쉽다",
    "비동기 코드에서 블로킹 호출을 하면 이벤트 루프 전체가 멈추므로 별도 스레드로 넘겨야 한다",
    "캐시는 읽기를 빠르게 하지만 원본이 바뀌었을 때 언제 무효화할지가 가장 어려운 문제다",
    "해시 함수가 같은 입력에 늘 같은 값을 내기 때문에 중복된 스크랩을 빠르게 찾아낼 수 있다",
    "전문 검색 인덱스의 트라이그램 토크나이저는 띄어쓰기가 없는 한국어에서도 부분 문자열을 찾아 준다",
    "네트워크가 끊겼을 때에도 작업을 잃지 않으려면 먼저 로컬에 기록한 다음 나중에 보내야 한다",
    "로그에 비밀 값이 남지 않도록 토큰처럼 보이는 문자열은 기록하기 전에 가려야 한다",
    "사용자 인터페이스 스레드에서 네트워크를 기다리면 창이 얼어 버리므로 작업은 백그라운드에서 돌려야 한다",
)  # written for these corpora: everyday notes of a Korean developer


def card_texts(count: int, seed: int = 1) -> list[str]:
    """``count`` card-sized texts of real prose: the paragraphs, then notes made of three real sentences
    from different paragraphs (as a scrap often joins what was read in different places); every fifth note
    mixes in a Korean sentence, as a Korean reader's notes do."""
    import random

    texts = paragraphs()
    sentences = [s.strip() for t in texts for s in t.replace("\n", " ").split(". ") if len(s.strip()) > 40]
    rng = random.Random(seed)
    while len(texts) < count:
        picked = rng.sample(sentences, 3)
        if len(texts) % 5 == 0:
            picked[rng.randrange(3)] = rng.choice(KOREAN)
        texts.append(". ".join(picked) + ".")
    return texts[:count]
