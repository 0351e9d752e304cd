from __future__ import annotations

import uuid

from san_desktop.core.ids import is_uuid, new_id


def test_new_id_is_a_version_7_uuid() -> None:
    value = uuid.UUID(new_id())
    assert value.version == 7
    assert value.variant == uuid.RFC_4122


def test_ids_made_later_sort_after_earlier_ones() -> None:
    ids = [new_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)


def test_is_uuid() -> None:
    assert is_uuid(new_id())
    assert not is_uuid("not-a-uuid")
    assert not is_uuid("")
