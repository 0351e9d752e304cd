"""Nine notes (five English, four Korean) as a learner scraps them, for the quiz tests and benchmark."""

from __future__ import annotations

QUIZ_TEXTS = (
    "SQLite WAL mode lets readers continue while a writer commits. The write-ahead log keeps new pages "
    "apart until a checkpoint copies them into the database file.",
    "React hooks let function components keep state. useEffect runs after the render has been committed "
    "to the screen, and its cleanup runs before the next effect.",
    "Raft elects a leader for each term. The leader replicates its log to the followers, and an entry is "
    "committed once a majority of servers stores it.",
    "Git rebase replays commits on top of another branch. Interactive rebase can squash, reorder or edit "
    "commits before they are shared.",
    "CSRF tricks a browser into sending a request the user did not intend. SameSite cookies and CSRF tokens "
    "stop the forged request from carrying the session.",
    "트랜잭션 격리 수준은 동시에 실행되는 트랜잭션이 서로의 변경을 얼마나 볼 수 있는지 정한다. "
    "PostgreSQL의 기본 격리 수준은 READ COMMITTED이다.",
    "쿠버네티스 파드는 하나 이상의 컨테이너를 묶은 배포 단위이다. 파드 안의 컨테이너는 네트워크와 볼륨을 공유한다.",
    "플러터에서 StatelessWidget은 상태가 없는 위젯이다. StatefulWidget은 setState로 화면을 다시 그린다.",
    "인덱스는 테이블 검색을 빠르게 하는 자료구조이다. B-Tree 인덱스는 범위 검색에도 쓰인다.",
)
