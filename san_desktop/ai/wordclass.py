"""Which words can name a topic (issue 16): the embedded provider has no part-of-speech tagger, so verbs,
adjectives and adverbs are known by lists (English verbs in every inflection, generated from their base
forms) and Korean predicates by their endings. A tag or a title's key phrase is made of the other words.
"""

from __future__ import annotations

import re

from san_desktop.ai.lexicon import ENGLISH_STOPWORDS, KOREAN_STOPWORDS, KOREAN_SUFFIXES

# Verbs whose forms are never a tag. Words that are as often a technical noun (build, cache, commit, index,
# log, merge, test, deploy, query, store, update...) are left out on purpose.
_VERB_BASES = """accept achieve act add adjust affect agree aim allow answer appear apply argue arrive ask
assume attach attempt avoid become begin believe belong break bring call care carry catch cause change
check choose claim clean clear close come compare complain complete concern consider contain continue
convert copy cost count cover create cut deal decide declare define delay delete depend describe
deserve detect determine develop die differ disable discover discuss do drop earn eat emit enable end
enjoy ensure enter exist expect experience explain express extend fail fall feel fill find finish fit fix
follow forget form get give go grow guarantee handle happen hate have hear help hide hit hold hope
ignore imagine implement improve include increase indicate insist intend introduce involve keep kill
know lack last lead learn leave let lie like limit live look lose love make manage matter mean meet
mention miss modify move need notice obtain occur offer omit open own pass pay perform permit pick
place plan play point prefer prepare present pretend prevent produce promise prove provide pull push
put raise reach read realize receive recommend reduce refer refuse regard relate rely remain remember
remove repeat replace reply report represent require resolve respond rest result retain return reveal
rewrite run save say see seem select sell send serve set share shift show shrink sit skip solve speak
spend stand start stay stick stop struggle succeed suffer suggest supply suppose survive take talk teach
tell tend think throw touch treat try turn understand unlock use vary wait walk want warn watch wear win
wish wonder work worry write""".split()

_IRREGULAR_FORMS = """made gave given got gotten went gone done did took taken saw seen knew known thought
found told became began begun brought bought caught chose chosen came dealt felt fell fallen held kept led
left lost meant met paid ran said sent shown sat spoke spoken spent stood understood wrote written won grew
grown hid hidden drew drawn drove driven broke broken forgot forgotten threw thrown wore worn ate eaten
shrank stuck taught heard lay lain""".split()

ADJECTIVES_AND_ADVERBS = frozenset(
    """good bad new old big small large little long short high low great important different same few
    many much more most less least other another own various several certain able easy hard simple
    complex real whole full free main major minor common general specific possible impossible likely
    unlikely usual typical clear early late fast slow quick safe unsafe sure true false wrong right best
    better worse worst next last previous recent current entire particular similar single multiple
    available useful powerful heavy light cheap expensive nice fine ready huge tiny strong weak rare
    frequent necessary extra basic advanced modern popular difficult actual exact proper natural normal
    special standard aware already always never sometimes usually often instead still again almost
    enough quite rather perhaps maybe anyway otherwise meanwhile later soon together apart away back
    forward ahead below above inside outside everywhere somewhere nowhere anywhere whatever whenever
    wherever whichever however therefore hence thus indeed though although unless since because
    nearly mostly mainly simply directly exactly especially actually basically generally typically
    usually quickly slowly easily correctly properly fully partly newly automatically manually
    explicitly implicitly immediately eventually finally previously currently recently originally
    cheaper faster slower smaller larger bigger higher lower longer shorter easier harder simpler
    safer stronger weaker older newer fewer greater earlier later per each every any some all both
    either neither own such whole plenty lots lot kind sort thing things stuff way ways time times
    something anything nothing everything someone anyone everyone nobody people person part parts case
    cases point points fact idea ideas example examples number numbers bit bits step steps reason reasons
    problem problems question questions answer answers place day days week weeks year years today
    tomorrow yesterday instead around within across along among toward towards upon onto into via""".split()
)


def _inflections(base: str) -> set[str]:
    forms = {base}
    if base.endswith(("s", "sh", "ch", "x", "z")):
        forms.add(base + "es")
    elif base.endswith("y") and base[-2:-1] not in "aeiou":
        forms.add(base[:-1] + "ies")
    else:
        forms.add(base + "s")
    stem = base[:-1] if base.endswith("e") and not base.endswith("ee") else base
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        forms.add(base[:-1] + "ied")
    else:
        forms.add(stem + "ed")
    forms.add(stem + "ing")
    # one short vowel before a final consonant doubles it: stop → stopped, run → running
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgklmnprt]", base):
        forms.update({base + base[-1] + "ed", base + base[-1] + "ing"})
    return forms


ENGLISH_VERB_FORMS = frozenset(
    {form for base in _VERB_BASES for form in _inflections(base)}
    | set(_IRREGULAR_FORMS)
    | {"is", "are", "was", "were", "be", "been", "being", "has", "had", "does", "did", "can", "could", "will"}
)

# A Korean word (its particle already stripped) that ends like a verb or an adjective, or an adverb.
_KOREAN_PREDICATE = re.compile(
    r"(?:다|요|죠|히|냐|니다|는데|지만|도록|려고|려면|면서|하면|되면|으면|있으면|없으면|라면|해서|돼서|어서|아서|라서|니까|"
    r"해야|해도|하고|되고|있고|없고|않고|이고|하며|되며|이며|으며|하여|되어|하게|되게|하지|되지|않지|했던|하던|하는|되는|"
    r"있는|없는|같은|않는|않은|많은|적은)$"
)
# adnominal and adverbial endings that two-syllable nouns also have (권한, 역할, 목적): only from three up
_KOREAN_LONG_PREDICATE = re.compile(r"^.{2,}(?:한|된|할|될|던|적|게|운|고|데|며|면)$")
_KOREAN_SHORT_PREDICATES = frozenset(
    """겪고 있고 없고 쓰고 하고 보고 알고 받고 두고 놓고 들고 듣고 읽고
    같고 많고 크고 좋고 싶고 나서 봐서 써서 해서 인데 한데""".split()
)
_KOREAN_NOUN_ENDINGS_KEPT = ("데이터", "서버", "프로세서", "컴파일러", "어댑터", "브라우저", "파서", "레이어")
KOREAN_NOT_TOPICS = frozenset(
    """것이 것을 것은 것도 것의 수가 수를 수도 때가 때는 때도
    제일 같 할 될 한 된 볼 쓸 그 저 좀 잘 더 덜 못 또 꼭 늘 참
    것 수 때 중 후 전 등 위 안 밖 뒤 앞 곳 점 데 뿐 줄 만큼 대로 경우 정도 부분
    하나 이번 여기 거기 모두 항상 자주 계속 보통 거의 아직 이미 바로 직접 따로 함께
    서로 제대로 그냥 특히 결국 일단 우선 먼저 나중 처음 마지막 자체 대신 이상 이하
    이후 이전 최근 가능 필요 중요 사실 예시 예를 실제 방식 상황 기능 역할 문제 이유
    결과 설명 내용 방법 의미 기본""".split()
)


_NOT_PLURALS = frozenset(
    """kubernetes postgres redis jenkins pandas windows macos devops series species news canvas atlas
    analytics physics genetics mathematics economics ethics metrics dynamics lens""".split()
)
_IE_NOUNS = frozenset("cookie movie zombie rookie calorie goalie genie selfie smoothie".split())


def fold_plural(key: str) -> str:
    """One spelling per English word: plurals folded ("indexes", "index" → "index"; "queries" → "query")."""
    if not key.isascii() or len(key) <= 3 or not key.isalpha() or key in _NOT_PLURALS:
        return key
    if key.endswith("ies"):
        return key[:-1] if key[:-1] in _IE_NOUNS else key[:-3] + "y"
    if key.endswith("ches") and key[-5] in "aeiou" and key[-6:-4] not in ("oa", "ea", "ou"):
        return key[:-1]  # caches, niches (but approaches, searches)
    if key.endswith(("sses", "xes", "ches", "shes")):
        return key[:-2]
    if key.endswith("s") and not key.endswith(("ss", "us", "is", "ics", "os", "as")):
        return key[:-1]
    return key


def english_topic_word(key: str) -> bool:
    """Whether a lower-cased English word can be (part of) a topic: not a stopword, verb, adjective or
    adverb."""
    return not (
        key in ENGLISH_STOPWORDS
        or key in ENGLISH_VERB_FORMS
        or key in ADJECTIVES_AND_ADVERBS
        or (key.endswith("ly") and len(key) > 4)
        or _superlative(key)
    )


def _superlative(key: str) -> bool:
    """smallest, largest, biggest: an adjective's -est form."""
    if not key.endswith("est") or len(key) < 6:
        return False
    stem = key[:-3]
    return stem in ADJECTIVES_AND_ADVERBS or stem + "e" in ADJECTIVES_AND_ADVERBS or stem[:-1] in ADJECTIVES_AND_ADVERBS


def korean_topic_word(stem: str) -> bool:
    """Whether a Korean word (particle stripped) can be (part of) a topic: a noun, not a predicate."""
    if len(stem) < 2 or stem in KOREAN_STOPWORDS or stem in KOREAN_NOT_TOPICS or stem in _KOREAN_SHORT_PREDICATES:
        return False
    if stem.endswith(_KOREAN_NOUN_ENDINGS_KEPT):
        return True
    return not (_KOREAN_PREDICATE.search(stem) or _KOREAN_LONG_PREDICATE.fullmatch(stem))


# --- words of a text ------------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9+#]*(?:[.\-][A-Za-z0-9+#]+)*|[가-힣]+|\d+(?:\.\d+)?")


# Topic and object particles also follow one-syllable nouns (훅은, 앱을, 키를).
_SHORT_STEM_PARTICLES = ("은", "는", "을", "를")


def strip_korean_particle(word: str) -> str:
    for suffix in KOREAN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    if len(word) == 2 and word.endswith(_SHORT_STEM_PARTICLES):
        return word[0]
    return word


def tokens(text: str) -> list[tuple[str, str]]:
    """(key, surface form) of each content word: lower-cased English, Korean without its particle."""
    found = []
    for match in _TOKEN.finditer(text):
        word = match.group(0)
        if word[0].isdigit():
            continue
        if "가" <= word[0] <= "힣":
            stem = strip_korean_particle(word)
            if stem in KOREAN_STOPWORDS or word in KOREAN_STOPWORDS:
                continue
            found.append((stem, stem))
        else:
            key = word.lower().rstrip(".")
            if len(key) < 2 or key in ENGLISH_STOPWORDS:
                continue
            found.append((key, word.rstrip(".")))
    return found


def is_name(word: str) -> bool:
    """SQLite, PySide6, WAL, iOS: capitals after the first letter, or digits inside a word."""
    return any(ch.isupper() for ch in word[1:]) or (any(ch.isdigit() for ch in word) and word[0].isalpha())
