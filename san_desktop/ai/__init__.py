"""AI providers: one interface, an embedded offline provider and an OpenAI-compatible HTTP provider."""
