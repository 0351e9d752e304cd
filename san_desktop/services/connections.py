"""Whether the servers the settings name answer, before they are saved (Settings' Test buttons, `san github
test`): the AI server, GitHub, a local repository; and the secrets they are reached with (the keyring, or the
environment). Each test is a sentence saying what works, or a ``SanError`` saying exactly what is wrong."""

from __future__ import annotations

from san_desktop.core.errors import PermanentError, SanError, TransientError
from san_desktop.core.settings import AISettings, GitHubSettings
from san_desktop.services.secrets import (
    AI_API_KEY,
    GITHUB_TOKEN,
    ai_api_key,
    github_token,
    secret_with_source,
    set_secret,
    ways_to_set,
)


class Connections:
    """The connection tests and the secrets they use; no state of its own (the facade's ``connections``)."""

    @staticmethod
    def github_token() -> str | None:
        return github_token()

    @staticmethod
    def github_token_source() -> str:
        """Where the token comes from: "keyring", GH_TOKEN / GITHUB_TOKEN, or "none"."""
        return secret_with_source(GITHUB_TOKEN)[1]

    @staticmethod
    def set_github_token(token: str) -> None:
        set_secret(GITHUB_TOKEN, token)

    @staticmethod
    def ai_key_source() -> str:
        """Where the API key comes from: "keyring", OPENAI_API_KEY, or "none"."""
        return secret_with_source(AI_API_KEY)[1]

    @staticmethod
    def set_ai_key(key: str) -> None:
        set_secret(AI_API_KEY, key)

    @staticmethod
    def test_github(settings: GitHubSettings, token: str | None = None) -> str:
        """Check the token (GET /user), push permission on the repository and its branch."""
        token = token or github_token()
        if not token:
            raise SanError(f"No GitHub token: {ways_to_set(GITHUB_TOKEN)}.")
        if not settings.repository:
            raise SanError("No repository is set: give it as owner/name.")
        from san_desktop.github.client import GitHubClient

        try:
            with GitHubClient(settings.api_url, token) as client:
                login = client.user()
                if not client.can_push(settings.repository):
                    raise SanError(
                        f"The token of {login} cannot push to {settings.repository}: give it Contents write."
                    )
                if not client.branch_exists(settings.repository, settings.branch):
                    raise SanError(f"The branch {settings.branch} does not exist in {settings.repository}.")
        except (PermanentError, TransientError) as exc:
            raise SanError(str(exc)) from exc
        return f"{login} can push to {settings.repository} ({settings.branch})."

    @staticmethod
    def test_local_repository(settings: GitHubSettings, setting: str = "github.local_repository") -> str:
        """Whether the local repository of ``settings`` takes commits; the SanError names ``setting`` if not."""
        from san_desktop.github.local_git import repository_problem

        if (problem := repository_problem(settings.local_repository, setting)) is not None:
            raise SanError(problem)
        return f"{settings.local_repository} takes TIL commits on the branch {settings.local_branch}."

    @staticmethod
    def test_ai(settings: AISettings, api_key: str | None = None) -> str:
        """Ask the OpenAI-compatible server of ``settings`` for an embedding and a card (with ``api_key``, or the
        stored one); what answered, or an exception saying what failed."""
        from san_desktop.ai.openai_compat import OpenAICompatibleProvider, OpenAISettings

        provider = OpenAICompatibleProvider(
            OpenAISettings(
                settings.base_url,
                settings.chat_model,
                settings.embedding_model,
                api_key or ai_api_key(),
                settings.timeout_seconds,
                temperature=settings.temperature,
            )
        )
        try:
            return provider.test_connection()
        finally:
            provider.close()
