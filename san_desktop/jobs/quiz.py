"""RECALL_QUIZ_GENERATION (target: a quiz generation): the day's cards, quizzes asked of the provider for
the card and type pairs that have none yet, each checked against its card (one whose answer is not in
its card is dropped and counted), then kept with a fresh FSRS schedule in the job's completing transaction.
A re-run of a day adds nothing that exists."""

from __future__ import annotations

import logging

from san_desktop.ai.base import QuizDraft, TilCard
from san_desktop.ai.factory import ProviderSource
from san_desktop.ai.quizzes import verify
from san_desktop.core.enums import QuizType
from san_desktop.jobs.registry import JobContext
from san_desktop.services.root import Services

log = logging.getLogger(__name__)


class QuizGenerationProcessor:
    def __init__(self, providers: ProviderSource, services: Services) -> None:
        self.providers = providers
        self.services = services

    def __call__(self, context: JobContext) -> None:
        quizzes = self.services.quizzes
        local_date, quiz_types = quizzes.generation(context.job.target_id)
        cards, _revision = self.services.til.collect(local_date)  # (the learner's day: its zone read now)
        have = quizzes.existing_keys([card.card_id for card in cards])
        wanted = [card for card in cards if any((card.card_id, t) not in have for t in quiz_types)]
        drafts: list[QuizDraft] = []
        if wanted:
            context.raise_if_cancelled()
            with self.providers.lease() as provider:
                drafts = provider.make_quizzes(wanted, quiz_types)
        kept, dropped = _checked(drafts, {card.card_id: card for card in wanted}, have)
        with context.publish() as session:
            made = quizzes.store(session, context.job.target_id, kept, dropped)
        log.info("Quizzes of %s: %d made, %d dropped (answer not in the card)", local_date, made, dropped)


def _checked(
    drafts: list[QuizDraft], cards: dict[str, TilCard], have: set[tuple[str, QuizType]]
) -> tuple[list[QuizDraft], int]:
    """The drafts that can be checked against their card; how many could not (a quiz about no card of
    the day, or whose answer its card does not hold)."""
    kept: list[QuizDraft] = []
    dropped = 0
    for draft in drafts:
        card = cards.get(draft.card_id)
        if card is None or not verify(draft, card):
            dropped += 1
        elif (draft.card_id, draft.quiz_type) not in have:
            kept.append(draft)
    return kept, dropped
