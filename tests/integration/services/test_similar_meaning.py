"""Similar cards by meaning, across English and Korean, through the app's own path (cards made by the
embedded provider, vectors of the sentence encoder): a card's nearest card of the other language is the
one on its topic, although the two share no word."""

from __future__ import annotations

from san_desktop.ai.calibration import SEMANTIC_EMBEDDING_MODEL
from san_desktop.app import SanApp
from tests.support.til import cards_of

ENGLISH = {
    "isolation": "Transaction isolation levels: under READ COMMITTED two transactions can both read a row and "
    "both write it back, so one update is lost; REPEATABLE READ or SELECT ... FOR UPDATE prevents it.",
    "docker": "Docker builds an image layer by layer and reuses the cache until a line changes: copy the lock "
    "file and install dependencies before copying the source code.",
    "react": "React's useEffect runs after the component renders; return a cleanup function to unsubscribe "
    "before the next effect runs or the component unmounts.",
    "film": "Developing black-and-white film: the developer's temperature and time decide the contrast of the "
    "negative; agitate gently every minute.",
}
KOREAN = {
    "isolation": "트랜잭션 격리 수준이 낮으면 두 트랜잭션이 같은 값을 읽고 각자 고쳐 써서 한쪽의 갱신이 사라진다.",
    "docker": "도커 이미지는 층을 쌓아 만들고, 바뀌지 않은 층은 캐시에서 다시 쓰므로 빌드 순서가 중요하다.",
    "react": "리액트 컴포넌트가 화면에 그려진 뒤에 실행되는 효과 함수는 정리 함수를 돌려주어 구독을 끊는다.",
    "film": "흑백 필름을 현상할 때 현상액의 온도와 시간이 음화의 대비를 정한다.",
}


def _card_ids(app: SanApp) -> dict[str, str]:
    by_text = {app.cards.get(card.id).content: card.id for card in app.cards.list_cards()}
    return {
        f"{lang}:{topic}": by_text[text]
        for lang, texts in (("en", ENGLISH), ("ko", KOREAN))
        for topic, text in texts.items()
    }


def test_a_card_finds_the_card_on_its_topic_in_the_other_language_first(app: SanApp) -> None:
    cards_of(app, [*ENGLISH.values(), *KOREAN.values()])
    ids = _card_ids(app)
    topic_of = {card_id: key for key, card_id in ids.items()}
    for key, card_id in ids.items():
        lang, topic = key.split(":")
        found = app.cards.similar(card_id)
        assert {item.model_id for item in found} == {SEMANTIC_EMBEDDING_MODEL}
        other = [topic_of[item.card.id] for item in found if not topic_of[item.card.id].startswith(lang)]
        assert other[0] == f"{'ko' if lang == 'en' else 'en'}:{topic}", (key, other)
