"""``ChatCodec.from_pretrained`` names a source of the wrong type (QA: a bare ``os.fspath``
TypeError from deep inside the loader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcodec import ChatCodec, load_chat_templates
from chatcodec.errors import ModelStorageError, ResponseTemplateError, UnknownProfileError


@pytest.mark.parametrize(("source", "kind"), [(5, "int"), (None, "NoneType")])
def test_a_source_that_is_not_a_string_or_path(source: object, kind: str) -> None:
    expected = (r"^from_pretrained: expected a model directory, a profile name or a Hub id "
                rf"\(a string or a path\), got {kind}$")
    with pytest.raises(TypeError, match=expected):
        ChatCodec.from_pretrained(source)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["loop", "to nothing"])
def test_a_model_directory_link_that_cannot_be_followed(tmp_path: Path, kind: str) -> None:
    """QA: 'neither a model directory nor a bundled profile', for a link that is there."""
    link = tmp_path / "model"
    link.symlink_to("model" if kind == "loop" else "/nonexistent/model")
    reason = ("cannot be read: Too many levels of symbolic links" if kind == "loop"
              else "a symbolic link to /nonexistent/model, which does not exist")
    with pytest.raises(ModelStorageError) as caught:
        ChatCodec.from_pretrained(link)
    assert str(caught.value) == f"{link}: {reason}"
    with pytest.raises(ModelStorageError) as caught:
        load_chat_templates(link)
    assert str(caught.value) == f"{link}: not a model directory ({reason})"


def test_a_name_too_long_for_a_file_name(tmp_path: Path) -> None:
    """QA: ``from_pretrained("a" * 5000)`` escaped as Python's bare ``OSError`` (ENAMETOOLONG) from
    ``Path.is_dir``; the message shows 200 characters of the name and its length."""
    name = "a" * 5000
    expected = f"{'a' * 200}... (5,000 characters): cannot be a model directory: File name too long"
    with pytest.raises(ModelStorageError) as caught:
        ChatCodec.from_pretrained(name)
    assert str(caught.value) == expected
    assert caught.value.path == name
    with pytest.raises(ModelStorageError) as caught:
        load_chat_templates(name)
    assert str(caught.value) == expected


@pytest.mark.parametrize("name", ["model\x00", "model\ud800"])
def test_a_name_no_file_can_have_is_an_unknown_name(name: str) -> None:
    """QA: a NUL character or a lone surrogate escaped as a bare ``ValueError`` / ``UnicodeEncodeError``."""
    expected = (f"from_pretrained: {name!r} is neither a model directory nor a bundled profile, nor a Hub "
                "model id ('org/name'; `chatcodec profiles` lists the bundled profiles)")
    with pytest.raises(UnknownProfileError) as caught:
        ChatCodec.from_pretrained(name)
    assert str(caught.value) == expected


def test_a_long_unknown_name_is_shown_cut() -> None:
    name = "org/" + "x" * 300
    with pytest.raises(UnknownProfileError) as caught:
        ChatCodec.from_pretrained(name)
    assert str(caught.value) == (
        f"from_pretrained: {('org/' + 'x' * 196)!r}... (304 characters) is neither a model directory nor a "
        "bundled profile, nor a Hub model id ('org/name'; `chatcodec profiles` lists the bundled profiles)")


def test_a_stored_response_template_nested_past_the_recursion_limit_names_the_file(tmp_path: Path) -> None:
    """QA: an open_pattern of 500 nested groups in tokenizer_config.json's response_template escaped
    from_pretrained as a bare RecursionError (from the regex module's parser); now the depth is
    checked on the pattern's text first, and the error names the file, the field and the key."""
    import json

    template = {"start_anchor": "<|im_start|>assistant\n", "fields": {
        "content": {"close": "<|im_end|>"},
        "tool_calls": {"open_pattern": "(" * 500 + "a" + ")" * 500, "close": "</tool_call>",
                       "content": "json"}}}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"response_template": template}),
                                                    encoding="utf-8")
    with pytest.raises(ResponseTemplateError) as caught:
        ChatCodec.from_pretrained(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'tokenizer_config.json'}: response_template: fields.tool_calls.open_pattern: invalid "
        "open_pattern regex: its groups are nested 500 deep, more than MAX_GROUP_DEPTH (50) in "
        "chatcodec.response_templates.limits (the bundled profiles' patterns nest 5 at most): the regex "
        "module compiles groups recursively and would pass Python's recursion limit")
