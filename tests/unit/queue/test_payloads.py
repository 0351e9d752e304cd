from __future__ import annotations

import pytest

from san_desktop.queue.payloads import CardAnalysisPayload, dump_payload, load_payload


def test_a_payload_round_trips_and_none_means_the_defaults() -> None:
    text = dump_payload(CardAnalysisPayload(embed_only=True))
    assert load_payload(CardAnalysisPayload, text) == CardAnalysisPayload(embed_only=True)
    assert load_payload(CardAnalysisPayload, None) == CardAnalysisPayload()


@pytest.mark.parametrize("text", ['{"embed_olny": true}', "[1, 2]"])
def test_a_payload_with_unknown_keys_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a CardAnalysisPayload"):
        load_payload(CardAnalysisPayload, text)
