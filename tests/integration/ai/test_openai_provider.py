"""The OpenAI-compatible provider against a real local HTTP server, through the real job processor:
each server behaviour ends in the right job outcome, with a useful error chain and no API key in it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest

from san_desktop.ai.factory import ProviderSource
from san_desktop.bootstrap import Backend
from san_desktop.core.enums import AttemptOutcome, ErrorKind, JobPool, JobStatus, JobType
from san_desktop.core.redact import first_cause
from san_desktop.core.settings import AISettings, JobSettings
from san_desktop.jobs.breaker import BreakerState, CircuitBreaker
from san_desktop.jobs.executor import JobExecutor
from san_desktop.jobs.processors import build_registry
from san_desktop.queue.records import JobRecord
from san_desktop.queue.store import JobStore
from san_desktop.services.root import Services
from san_desktop.services.scraps import ScrapService
from san_desktop.services.secrets import AI_API_KEY, ai_api_key, set_secret
from tests.support.cards import all_cards
from tests.support.clock import FakeClock
from tests.support.jobs import analysis_job
from tests.support.openai_server import FakeOpenAI, fake_openai_server

API_KEY = "sk-test-DO-NOT-LEAK-0123456789abcdef"
SCRAP = "SQLite WAL mode lets readers continue while a writer commits. Checkpoints move pages back."


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as fake:
        yield fake


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _analyse(backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock) -> JobRecord:
    set_secret(AI_API_KEY, API_KEY)
    providers = ProviderSource(
        AISettings(
            provider="openai",
            base_url=server.url,
            chat_model="gpt-test",
            embedding_model="embed-test",
            timeout_seconds=0.5,
        ),
        api_key=ai_api_key,
    )
    queue = JobStore(backend.db, job_settings, clock=clock)  # type: ignore[arg-type]
    executor = JobExecutor(
        queue, build_registry(Services.of_store(queue), providers), backend.require_session(), breakers={}
    )
    capture = ScrapService(backend.db, queue).capture(SCRAP)
    claim = queue.claim_next(backend.require_session(), JobPool.AI, {JobType.CARD_ANALYSIS})
    assert claim is not None
    assert claim.job.id == capture.analysis_job_id
    executor.run(claim)
    job = queue.get(claim.job.id)
    stored = (job.error_message or "") + "".join(a.error_text or "" for a in queue.attempts(job.id))
    assert API_KEY not in stored
    return job


def test_a_good_answer_makes_a_card(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.COMPLETED
    [card] = all_cards(backend.db)
    assert (card.title, card.category, card.tags) == ("SQLite WAL", "Databases", ("checkpoint", "SQLite", "WAL"))
    chat = next(r for r in server.requests if r.path.endswith("/chat/completions"))
    assert chat.headers["Authorization"] == f"Bearer {API_KEY}"
    assert chat.body["response_format"]["type"] == "json_schema"
    assert chat.body["model"] == "gpt-test"
    assert "temperature" in chat.body
    embed = next(r for r in server.requests if r.path.endswith("/embeddings"))
    assert embed.body["model"] == "embed-test"


def test_server_without_json_schema_falls_back_to_json_object(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "no_schema"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.COMPLETED
    formats = [r.body["response_format"]["type"] for r in server.requests if r.path.endswith("/chat/completions")]
    assert formats == ["json_schema", "json_object"]


def _providers(server: FakeOpenAI, *, key: str | None = API_KEY) -> ProviderSource:
    if key is not None:
        set_secret(AI_API_KEY, key)
    return ProviderSource(
        AISettings(provider="openai", base_url=server.url, chat_model="gpt-test", embedding_model="embed-test"),
        api_key=ai_api_key,
    )


def _scraps(backend: Backend, queue: JobStore, count: int) -> list[str]:
    scraps = ScrapService(backend.db, queue)
    return [analysis_job(scraps.capture(f"{SCRAP} Note {n}.")) for n in range(count)]


KEY_WAYS = "enter it in Settings or with `san config set ai.api_key` (kept in the keyring), or set OPENAI_API_KEY"
REJECTED = f"The AI server rejected the API key (401): for a valid one, {KEY_WAYS}"


@pytest.mark.parametrize(
    ("behaviour", "sentence"),
    [("401", REJECTED), ("403_key", REJECTED.replace("(401)", "(403)"))],
)
def test_a_rejected_key_pauses_the_ai_pool_at_once_and_every_job_waits(
    backend: Backend, job_settings: JobSettings, server: FakeOpenAI, clock: FakeClock, behaviour: str, sentence: str
) -> None:
    """Issue 23: a 401 failed every job one by one; the key is wrong for all of them alike."""
    server.behaviour = behaviour
    queue = JobStore(backend.db, job_settings, clock=clock)
    breaker = CircuitBreaker(5, 60.0, 600.0)
    executor = JobExecutor(
        queue,
        build_registry(Services.of_store(queue), _providers(server)),
        backend.require_session(),
        breakers={JobPool.AI: breaker},
    )
    jobs = _scraps(backend, queue, 3)

    assert executor.drain(JobPool.AI) == 1  # one request told: the pool stops there
    status = breaker.status()
    assert status.state is BreakerState.OPEN
    assert status.held == sentence
    assert status.retry_at is None  # no probe with the same key: the user changes it, or says "Try now"
    first = queue.get(jobs[0])
    assert first.status is JobStatus.PENDING
    assert first.attempts == 0  # no attempt spent: the job is not at fault
    assert (first.error_message or "").startswith(sentence)  # our sentence, without a class name
    assert API_KEY not in (first.error_message or "")
    assert [queue.get(job).attempts for job in jobs[1:]] == [0, 0]
    assert all(queue.attempts(job) == [] for job in jobs[1:])  # never tried
    assert executor.drain(JobPool.AI) == 0  # paused: nothing is asked of the server
    assert len([r for r in server.requests if r.path.endswith("/chat/completions")]) == 1

    server.behaviour = "ok"  # the user sets a valid key; saving it (or "Try now") closes the breaker
    breaker.reset()
    executor.drain(JobPool.AI)
    assert {queue.get(job).status for job in jobs} == {JobStatus.COMPLETED}


def test_without_a_key_the_pause_asks_for_one(
    backend: Backend, job_settings: JobSettings, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "401"
    queue = JobStore(backend.db, job_settings, clock=clock)
    breaker = CircuitBreaker(5, 60.0, 600.0)
    providers = _providers(server, key=None)
    executor = JobExecutor(
        queue,
        build_registry(Services.of_store(queue), providers),
        backend.require_session(),
        breakers={JobPool.AI: breaker},
    )
    _scraps(backend, queue, 1)
    executor.drain(JobPool.AI)
    assert breaker.status().held == f"The AI server asks for an API key (401): {KEY_WAYS}"


def test_a_403_for_something_else_fails_the_job_alone(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "403"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.FAILED
    assert job.error_kind is ErrorKind.PERMANENT
    assert "You are not allowed to sample from this model" in (job.error_message or "")


def test_without_a_breaker_a_rejected_key_fails_the_job(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    """Nothing could pause a pool without a breaker: waiting would only ask again at once, for ever."""
    server.behaviour = "401"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.FAILED
    assert job.error_kind is ErrorKind.PERMANENT
    assert job.attempts == 1
    assert REJECTED in (job.error_message or "")
    assert "401 Unauthorized" in (job.error_message or "")  # the server's answer, in the cause chain


def test_429_waits_for_retry_after_without_spending_an_attempt(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "429"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.PENDING
    assert job.attempts == 0
    assert job.run_after == clock.now + timedelta(seconds=7)
    assert "429 Too Many Requests" in (job.error_message or "")


def test_500_is_retried_later(backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock) -> None:
    server.behaviour = "500"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.PENDING
    assert job.error_kind is ErrorKind.TRANSIENT
    assert job.attempts == 1
    assert "500 Internal Server Error" in (job.error_message or "")
    # in our words, the server's own explanation included; the HTTP library's error only among the causes
    assert (job.error_message or "").startswith("HTTP 500 Internal Server Error from http://127.0.0.1:")
    assert "HTTPStatusError" not in first_cause(job.error_message)


def test_400_fails_at_once_in_our_words(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "400"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.FAILED  # classified by the answer it carries, as before
    assert job.error_kind is ErrorKind.PERMANENT
    assert (job.error_message or "").startswith("HTTP 400 Bad Request from http://127.0.0.1:")


def test_malformed_json_is_retried_with_the_reason(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "malformed"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.PENDING
    assert job.error_kind is ErrorKind.TRANSIENT
    assert (job.error_message or "").startswith("The AI answer was not valid JSON")


def test_truncated_answer_fails(backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock) -> None:
    server.behaviour = "length"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.FAILED
    assert "finish_reason=length" in (job.error_message or "")
    assert all_cards(backend.db) == []


def test_refusal_fails(backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock) -> None:
    server.behaviour = "refusal"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.FAILED
    assert "The AI refused" in (job.error_message or "")


def test_a_server_that_answers_too_slowly_times_out_and_is_retried(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "slow"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.PENDING
    assert job.error_kind is ErrorKind.TRANSIENT
    assert "ReadTimeout" in (job.error_message or "")
    assert f"No answer from {server.url}/chat/completions within 0.5 s" in (job.error_message or "")
    queue = JobStore(backend.db, job_settings)  # type: ignore[arg-type]
    assert [a.outcome for a in queue.attempts(job.id)] == [AttemptOutcome.RETRY_SCHEDULED]


def test_a_400_keeps_the_servers_explanation(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "400"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.FAILED
    assert job.error_kind is ErrorKind.PERMANENT
    assert "400 Bad Request" in (job.error_message or "")
    assert "Invalid model 'gpt-test' for this endpoint" in (job.error_message or "")


def test_an_exhausted_quota_fails_instead_of_waiting_forever(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    server.behaviour = "quota"
    job = _analyse(backend, job_settings, server, clock)
    assert job.status is JobStatus.FAILED
    assert job.error_kind is ErrorKind.PERMANENT
    assert "quota is exhausted" in (job.error_message or "")
    assert "You exceeded your current quota" in (job.error_message or "")


def test_switching_settings_mid_job_never_fails_the_job_for_good(
    backend: Backend, job_settings: object, server: FakeOpenAI, clock: FakeClock
) -> None:
    """The provider a job started with stays usable to its end, whatever the settings do meanwhile."""
    set_secret(AI_API_KEY, API_KEY)
    providers = ProviderSource(
        AISettings(provider="openai", base_url=server.url, chat_model="m", embedding_model="e", timeout_seconds=10),
        api_key=ai_api_key,
    )
    queue = JobStore(backend.db, job_settings, clock=clock)  # type: ignore[arg-type]
    executor = JobExecutor(
        queue, build_registry(Services.of_store(queue), providers), backend.require_session(), breakers={}
    )
    ScrapService(backend.db, queue).capture(SCRAP)
    claim = queue.claim_next(backend.require_session(), JobPool.AI, {JobType.CARD_ANALYSIS})
    assert claim is not None
    server.behaviour = "slow"  # the first call is held until the settings have changed
    worker = threading.Thread(target=executor.run, args=(claim,))
    worker.start()
    assert server.received.wait(10), "the job never called the server"

    providers.update(AISettings(provider="openai", base_url=server.url, chat_model="m2", embedding_model="e"))
    server.behaviour = "ok"
    server.release.set()
    worker.join(20)

    job = queue.get(claim.job.id)
    # never a permanent failure: the old provider's client stayed open for the job's second call
    assert job.status is JobStatus.COMPLETED, job.error_message
    assert {r.body.get("model") for r in server.requests} == {"m", "e"}  # all of it on the old settings
