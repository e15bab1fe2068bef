"""``ChatCodec.from_pretrained("org/name")`` and ``push_to_hub``, without the network.

Loading is exercised for real: a Hub cache is built on disk in ``huggingface_hub``'s layout
(:mod:`tests.hub_cache`) and read by the real ``huggingface_hub.snapshot_download`` offline
(``HF_HUB_OFFLINE=1``, which ``tests/conftest.py`` sets for the whole suite). What an online
download would fetch is checked through ``huggingface_hub``'s own pattern filter. ``push_to_hub``
is exercised up to the commit: ``HfApi.create_repo`` / ``create_commit`` (the two calls that reach
the Hub) are replaced by recorders, and the ``CommitOperationAdd`` / ``Delete`` objects chatcodec
builds are checked against what ``save_pretrained`` writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from chatcodec import ChatCodec, HubError
from chatcodec.model.hub import HUB_FILES, TOKENIZER_FILES, looks_like_hub_id
from tests.conftest import corpus_template
from tests.hub_cache import COMMIT, make_hub_cache
from tests.model.helpers import QWEN3_TEMPLATE, chatml_tokenizer

REPO = "acme/tiny-qwen3"
CONFIG = {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>",
          "pad_token": "<|endoftext|>"}


def qwen3_files(**extra: str | bytes) -> dict[str, str | bytes]:
    return {"chat_template.jinja": corpus_template(QWEN3_TEMPLATE),
            "tokenizer_config.json": json.dumps(CONFIG),
            "generation_config.json": json.dumps({"eos_token_id": [2]}), **extra}


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "hub"


def test_a_cached_model_loads_offline(cache: Path) -> None:
    snapshot = make_hub_cache(cache, REPO, qwen3_files(**{"model.safetensors": b"weights"}))
    codec = ChatCodec.from_pretrained(REPO, cache_dir=cache, load_tokenizer=False)
    assert codec.name_or_path == REPO
    assert codec.hub_snapshot == snapshot
    assert codec.chat_template == corpus_template(QWEN3_TEMPLATE)
    assert codec.special_tokens_map == {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    assert codec.response_template_source == "profile:qwen3"
    assert codec.config.eos_token_ids == [2]
    prompt = codec.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True,
                                       tokenize=False)
    assert prompt == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def test_named_templates_and_the_tokenizer_come_from_the_cache(cache: Path) -> None:
    files = qwen3_files(**{"additional_chat_templates/tool_use.jinja": "{{ 'tools' }}",
                           "tokenizer.json": chatml_tokenizer().to_str()})
    make_hub_cache(cache, REPO, files)
    codec = ChatCodec.from_pretrained(REPO, cache_dir=cache)
    assert codec.chat_template == {"default": corpus_template(QWEN3_TEMPLATE), "tool_use": "{{ 'tools' }}"}
    assert codec.tokenizer is not None
    assert codec.decode(codec.encode("<|im_end|>Hello")) == "<|im_end|>Hello"
    assert ChatCodec.from_pretrained(REPO, cache_dir=cache, load_tokenizer=False).tokenizer is None


def test_a_processor_model_whose_template_is_in_processor_config_json(cache: Path) -> None:
    # older vision models keep the template only under processor_config.json's chat_template
    template = corpus_template("Qwen--Qwen2.5-VL-7B-Instruct.jinja")
    make_hub_cache(cache, "acme/tiny-vl", {
        "processor_config.json": json.dumps({"processor_class": "Qwen2_5_VLProcessor",
                                             "chat_template": template}),
        "tokenizer_config.json": json.dumps(CONFIG)})
    codec = ChatCodec.from_pretrained("acme/tiny-vl", cache_dir=cache, load_tokenizer=False)
    assert codec.chat_template == template
    assert codec.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True,
                                     tokenize=False) == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n")


def test_a_revision_is_a_branch_or_a_commit(cache: Path) -> None:
    make_hub_cache(cache, REPO, qwen3_files())
    other = "f" * 40
    make_hub_cache(cache, REPO, {"chat_template.jinja": "v2 {{ messages[0].content }}"}, commit=other,
                   refs=("v2",))
    assert ChatCodec.from_pretrained(REPO, cache_dir=cache, revision="v2").chat_template == (
        "v2 {{ messages[0].content }}")
    assert ChatCodec.from_pretrained(REPO, cache_dir=cache, revision=other).hub_snapshot == (
        cache / "models--acme--tiny-qwen3" / "snapshots" / other)
    assert ChatCodec.from_pretrained(REPO, cache_dir=cache, revision=COMMIT).chat_template == (
        corpus_template(QWEN3_TEMPLATE))


def test_not_cached_while_offline_is_a_clear_error(cache: Path) -> None:
    make_hub_cache(cache, REPO, qwen3_files())
    with pytest.raises(HubError) as caught:
        ChatCodec.from_pretrained("acme/other", cache_dir=cache)
    assert str(caught.value) == (
        f"acme/other: not in the Hub cache {cache}, and the Hub may not be reached (HF_HUB_OFFLINE=1 or "
        "local_files_only=True); load it once online, or pass the folder of a downloaded copy")
    assert caught.value.repo_id == "acme/other"
    assert isinstance(caught.value, OSError)
    with pytest.raises(HubError) as caught:
        ChatCodec.from_pretrained(REPO, cache_dir=cache, revision="v9")
    assert str(caught.value).startswith(f"acme/tiny-qwen3: not in the Hub cache {cache} at revision 'v9', ")


def test_a_cache_folder_that_does_not_exist_is_named(tmp_path: Path) -> None:
    """A mistyped cache_dir or HF_HUB_CACHE: the message says where the model was looked for."""
    with pytest.raises(HubError) as caught:
        ChatCodec.from_pretrained(REPO, cache_dir=tmp_path / "hbu")
    assert str(caught.value) == (
        f"{REPO}: not in the Hub cache {tmp_path / 'hbu'} (no such folder), and the Hub may not be reached "
        "(HF_HUB_OFFLINE=1 or local_files_only=True); load it once online, or pass the folder of a "
        "downloaded copy")


@pytest.mark.parametrize("kind", ["file", "link loop", "link to nothing"])
def test_a_cache_path_that_cannot_be_a_folder(tmp_path: Path, kind: str) -> None:
    cache = tmp_path / "hub"
    if kind == "file":
        cache.write_text("")
    elif kind == "link loop":
        cache.symlink_to("hub")  # huggingface_hub raised a bare RuntimeError('Symlink loop from ...')
    else:
        cache.symlink_to("/nonexistent/hub")
    with pytest.raises(HubError) as caught:
        ChatCodec.from_pretrained(REPO, cache_dir=cache)
    assert str(caught.value) == f"{REPO}: the Hub cache {cache} " + {
        "file": "is not a folder (cache_dir=, HF_HUB_CACHE or HF_HOME names it)",
        "link loop": "cannot be used (Too many levels of symbolic links)",
        "link to nothing": "is a symbolic link to /nonexistent/hub, which does not exist",
    }[kind]


def test_without_huggingface_hub_a_hub_id_names_the_extra(cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails as if not installed
    with pytest.raises(HubError) as caught:
        ChatCodec.from_pretrained(REPO, cache_dir=cache)
    assert str(caught.value) == (
        "acme/tiny-qwen3: looks like a Hugging Face Hub model id, and loading one needs the huggingface_hub "
        "package. Install it with `pip install 'chatcodec[hub]'`, or pass a local model directory or the "
        "name of a bundled profile (`chatcodec profiles` lists them)")


def test_a_local_directory_of_that_name_wins(cache: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    make_hub_cache(cache, REPO, qwen3_files())
    local = tmp_path / "work" / "acme" / "tiny-qwen3"
    local.mkdir(parents=True)
    (local / "chat_template.jinja").write_text("local {{ messages[0].content }}")
    monkeypatch.chdir(tmp_path / "work")
    codec = ChatCodec.from_pretrained(REPO, cache_dir=cache)
    assert codec.chat_template == "local {{ messages[0].content }}"
    assert codec.hub_snapshot is None


def test_a_profile_name_is_never_a_hub_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    assert ChatCodec.from_pretrained("qwen3").profile == "qwen3"


@pytest.mark.parametrize(("name", "expected"), [
    ("Qwen/Qwen3-0.6B", True), ("org/na.me_1", True), ("gpt2", False), ("a/b/c", False), ("org/../x", False),
    ("org--x/y", False), ("/abs/path", False), ("./org/name", False), ("org/name.git", False),
])
def test_what_looks_like_a_hub_id(name: str, expected: bool) -> None:
    assert looks_like_hub_id(name) is expected


def test_only_the_files_chatcodec_reads_are_fetched() -> None:
    """The patterns passed to snapshot_download, through huggingface_hub's own filter, on the file list
    of a real multimodal repository layout."""
    from huggingface_hub.utils import filter_repo_objects

    repository = [".gitattributes", "README.md", "config.json", "model-00001-of-00002.safetensors",
                  "model.safetensors.index.json", "chat_template.jinja", "chat_template.json",
                  "additional_chat_templates/tool_use.jinja", "additional_chat_templates/rag.jinja",
                  "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.json",
                  "merges.txt", "generation_config.json", "processor_config.json",
                  "preprocessor_config.json", "original/tokenizer.model"]
    without = list(filter_repo_objects(repository, allow_patterns=list(HUB_FILES)))
    assert without == ["chat_template.jinja", "chat_template.json",
                       "additional_chat_templates/tool_use.jinja", "additional_chat_templates/rag.jinja",
                       "tokenizer_config.json",
                       "special_tokens_map.json", "generation_config.json", "processor_config.json"]
    with_ids = list(filter_repo_objects(repository, allow_patterns=[*HUB_FILES, *TOKENIZER_FILES]))
    assert sorted(set(with_ids) - set(without)) == ["tokenizer.json"]


def test_hf_hub_offline_in_the_environment_loads_from_the_cache(cache: Path, tmp_path: Path) -> None:
    """A fresh process as a user runs it: HF_HUB_CACHE and HF_HUB_OFFLINE=1, the CLI given a Hub id."""
    make_hub_cache(cache, REPO, qwen3_files())
    conversation = tmp_path / "chat.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "Hi"}]))
    env = {"PATH": "/usr/bin:/bin", "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "chatcodec", "render", REPO, str(conversation),
                             "--generation-prompt"], capture_output=True, text=True, env=env, check=False)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


class Recorder:
    """Stands in for the two HfApi calls that reach the Hub; keeps what they were given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from huggingface_hub import CommitInfo, HfApi

        def create_repo(api: HfApi, *args: Any, **kwargs: Any) -> str:
            self.calls.append(("create_repo", args, kwargs))
            return f"https://huggingface.co/{args[0]}"

        def create_commit(api: HfApi, repo_id: str, operations: Any, **kwargs: Any) -> CommitInfo:
            operations = list(operations)
            contents = {}
            for operation in operations:
                if hasattr(operation, "path_or_fileobj"):
                    with operation.as_file() as handle:  # read while the temporary folder exists
                        contents[operation.path_in_repo] = handle.read()
            self.calls.append(("create_commit", (repo_id, operations, contents), kwargs))
            return CommitInfo(commit_url=f"https://huggingface.co/{repo_id}/commit/{'1' * 40}",
                              commit_message=kwargs["commit_message"], commit_description="", oid="1" * 40,
                              pr_url=None)

        monkeypatch.setattr(HfApi, "create_repo", create_repo)
        monkeypatch.setattr(HfApi, "create_commit", create_commit)


def test_push_to_hub_commits_what_save_pretrained_writes(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import CommitOperationAdd

    recorder = Recorder()
    recorder.install(monkeypatch)
    codec = ChatCodec.from_pretrained("qwen3")
    with pytest.warns(UserWarning, match="uses chatcodec extensions, so it needs chatcodec"):
        info = codec.push_to_hub("me/my-qwen3", commit_message="Add templates", create_pr=True, private=True)
    assert info.oid == "1" * 40
    saved = tmp_path / "saved"
    with pytest.warns(UserWarning, match="uses chatcodec extensions, so it needs chatcodec"):
        codec.save_pretrained(saved)
    expected = {path.relative_to(saved).as_posix(): path.read_bytes()
                for path in sorted(saved.rglob("*")) if path.is_file()}
    (name, args, kwargs), (commit, (repo_id, operations, contents), options) = recorder.calls
    assert (name, args, kwargs) == ("create_repo", ("me/my-qwen3",), {"private": True, "exist_ok": True})
    assert (commit, repo_id) == ("create_commit", "me/my-qwen3")
    assert all(isinstance(operation, CommitOperationAdd) for operation in operations)
    assert contents == expected
    assert sorted(contents) == ["chat_template.jinja", "tokenizer_config.json"]
    assert options == {"commit_message": "Add templates", "commit_description": None, "revision": None,
                       "create_pr": True}


def test_push_to_hub_without_a_reachable_hub_is_a_hub_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """QA: the HTTP client's ConnectError came through bare, without the repository. The endpoint is a
    closed local port, so the connection is refused without leaving the machine."""
    from huggingface_hub import constants

    codec = ChatCodec.from_pretrained("qwen3")
    with pytest.warns(UserWarning, match="needs chatcodec"), pytest.raises(HubError) as caught:
        codec.push_to_hub("me/my-qwen3", token="hf_test")  # HF_HUB_OFFLINE=1, as the suite sets it
    assert str(caught.value) == ("me/my-qwen3: HF_HUB_OFFLINE is set, so the Hub may not be reached; "
                                 "unset it to push")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    with pytest.warns(UserWarning, match="needs chatcodec"), pytest.raises(HubError) as caught:
        codec.push_to_hub("me/my-qwen3", token="hf_test")
    assert str(caught.value).startswith("me/my-qwen3: the Hub could not be reached (ConnectError: ")
    assert caught.value.repo_id == "me/my-qwen3"


def test_pushing_back_commits_only_the_changes(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A legacy repository (template in tokenizer_config.json, a processor chat_template.json): the
    commit writes chat_template.jinja, rewrites tokenizer_config.json, deletes chat_template.json, and
    leaves the unchanged generation_config.json and tokenizer.json alone."""
    from huggingface_hub import CommitOperationDelete

    legacy = {**CONFIG, "chat_template": "{{ messages[0].content }}"}
    make_hub_cache(cache, REPO, {"tokenizer_config.json": json.dumps(legacy),
                                 "generation_config.json": json.dumps({"eos_token_id": 2}),
                                 "tokenizer.json": chatml_tokenizer().to_str()})
    codec = ChatCodec.from_pretrained(REPO, cache_dir=cache)
    codec.chat_template = "new {{ messages[0].content }}"
    recorder = Recorder()
    recorder.install(monkeypatch)
    codec.push_to_hub(REPO)
    _, (_, (_, operations, contents), options) = recorder.calls
    assert sorted(contents) == ["chat_template.jinja", "tokenizer_config.json"]
    assert contents["chat_template.jinja"] == b"new {{ messages[0].content }}"
    assert json.loads(contents["tokenizer_config.json"]) == CONFIG
    assert not any(isinstance(operation, CommitOperationDelete) for operation in operations)
    assert options["commit_message"] == "Upload chat templates with chatcodec"


def test_pushing_back_deletes_what_save_pretrained_would_delete(cache: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import CommitOperationDelete

    config = json.dumps(CONFIG, indent=2) + "\n"  # as transformers and chatcodec write it: unchanged
    make_hub_cache(cache, "acme/processor", {
        "tokenizer_config.json": config,
        "chat_template.json": json.dumps({"chat_template": "{{ 'legacy' }}"})})
    make_hub_cache(cache, "acme/named", {
        "tokenizer_config.json": config, "chat_template.jinja": "{{ 'default' }}",
        "additional_chat_templates/old.jinja": "{{ 'old' }}"})
    recorder = Recorder()
    recorder.install(monkeypatch)
    for repo_id in ("acme/processor", "acme/named"):
        codec = ChatCodec.from_pretrained(repo_id, cache_dir=cache, load_tokenizer=False)
        codec.chat_template = "{{ 'modern' }}"
        codec.push_to_hub(repo_id)
    commits = [args for name, args, _ in recorder.calls if name == "create_commit"]
    assert [(contents, sorted(operation.path_in_repo for operation in operations
                              if isinstance(operation, CommitOperationDelete)))
            for _, operations, contents in commits] == [
        ({"chat_template.jinja": b"{{ 'modern' }}"}, ["chat_template.json"]),
        ({"chat_template.jinja": b"{{ 'modern' }}"}, ["additional_chat_templates/old.jinja"]),
    ]
