"""``ChatCodec.from_pretrained`` names a source of the wrong type (QA: a bare ``os.fspath``
TypeError from deep inside the loader)."""

from __future__ import annotations

import pytest

from chatcodec import ChatCodec


@pytest.mark.parametrize(("source", "kind"), [(5, "int"), (None, "NoneType")])
def test_a_source_that_is_not_a_string_or_path(source: object, kind: str) -> None:
    expected = (r"^from_pretrained: expected a model directory, a profile name or a Hub id "
                rf"\(a string or a path\), got {kind}$")
    with pytest.raises(TypeError, match=expected):
        ChatCodec.from_pretrained(source)  # type: ignore[arg-type]
