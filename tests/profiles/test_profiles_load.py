"""Loading bundled profiles: names, aliases, errors, fresh copies, and the data each profile carries."""

from __future__ import annotations

import fnmatch
import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest
import regex

import chatcodec
from chatcodec import profiles
from chatcodec.analysis.lint import lint_response_template
from chatcodec.chat_templates.render import render_chat_template
from chatcodec.errors import UnknownProfileError
from chatcodec.response_templates.transform import PLACEHOLDER
from tests.conftest import ROOT, corpus_path
from tests.profiles.test_detect import EXPECTED

NAMES = profiles.names()
PERMISSIVE = {"Apache-2.0", "MIT", "Modified MIT"}
#: "tool_use" templates that fail without tools (``for tool in tools``).
NEEDS_TOOLS = {
    "CohereForAI--c4ai-command-r-plus-tool_use.jinja",
    "NousResearch--Hermes-3-Llama-3.1-8B-tool_use.jinja",
}
TOOL = {
    "type": "function",
    "function": {
        "name": "now",
        "description": "The time.",
        "parameters": {"type": "object", "properties": {}},
    },
}


def test_names_are_sorted_folders_named_by_peer_families() -> None:
    assert sorted(NAMES) == NAMES
    assert len(NAMES) == 52
    assert {"hermes", "qwen3", "qwen3_coder", "deepseek_r1", "gpt_oss", "mistral", "llama3_json"} <= set(
        NAMES
    )


@pytest.mark.parametrize("name", NAMES)
def test_every_profile_loads_through_load_response_template(name: str) -> None:
    profile = profiles.load(name)
    template = chatcodec.load_response_template(profile.response_template)
    assert isinstance(template, chatcodec.ResponseTemplate)
    assert profile.name == name
    assert profile.description and profile.models and profile.sources and profile.license
    assert profile.generation_prompt in profile.generation_prompts
    assert profile.response_template["defaults"] == {"role": "assistant"}


@pytest.mark.parametrize("name", NAMES)
def test_needs_chatcodec_exactly_when_lint_reports_an_extension(name: str) -> None:
    profile = profiles.load(name)
    contents = {spec.get("content", "text") for spec in profile.response_template["fields"].values()}
    codes = {finding.code for finding in lint_response_template(profile.response_template)}
    assert profile.needs_chatcodec == ("RT012" in codes)
    if any(content.startswith("x-") for content in contents):
        assert profile.needs_chatcodec


@pytest.mark.parametrize(
    "alias, name",
    [
        ("qwen2.5", "hermes"),
        ("QWEN3", "qwen3"),
        ("qwen3-coder", "qwen3_coder"),
        ("gpt-oss", "gpt_oss"),
        ("harmony", "gpt_oss"),
        ("deepseek-v3.1", "deepseek_v31"),
        (" llama3 ", "llama3_json"),
    ],
)
def test_aliases_case_and_dashes(alias: str, name: str) -> None:
    assert profiles.load(alias).name == name


def test_resolve_names_every_profile_and_alias_as_the_index_does() -> None:
    assert profiles.resolve("qwen3") == "qwen3"
    assert profiles.resolve("Qwen3-Coder") == "qwen3_coder"
    assert profiles.resolve("qwen2.5") == "hermes"
    assert profiles.resolve("harmony") == "gpt_oss"
    for folder in NAMES:
        data = json.loads((ROOT / "src" / "chatcodec" / "profiles" / folder / "profile.json").read_text())
        assert [profiles.resolve(alias) for alias in [folder, *data.get("aliases", [])]] == \
            [folder] * (1 + len(data.get("aliases", [])))


@pytest.mark.parametrize("name", ["qwen9", "", "-", ".", "..", "./qwen3", "qwen3/", "profiles/qwen3",
                                  "examples/qwen3-coder/response_template.json", "qwen3.json", "__pycache__"])
def test_resolve_refuses_what_no_profile_is_called(name: str) -> None:
    assert profiles.resolve(name) is None


def test_unknown_name_lists_the_profiles() -> None:
    with pytest.raises(UnknownProfileError) as error:
        profiles.load("qwen9")
    assert isinstance(error.value, LookupError) and isinstance(error.value, ValueError)
    assert str(error.value).startswith(
        "profile 'qwen9': no bundled profile has this name or alias. Known profiles: "
    )
    assert "apertus, apriel," in str(error.value)
    assert error.value.name == "qwen9" and error.value.available == NAMES


def test_load_returns_fresh_copies() -> None:
    first = profiles.load("qwen3")
    first.response_template["fields"].clear()
    first.special_tokens.clear()
    second = profiles.load("qwen3")
    assert second.response_template["fields"] and second.special_tokens == {
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
    }


def test_generation_prompt_ending() -> None:
    profile = profiles.load("qwen3")
    assert profile.generation_prompt_ending(None) == "<|im_start|>assistant\n"
    assert profile.generation_prompt_ending("<think>\n") == "<|im_start|>assistant\n<think>\n"
    glm = profiles.load("glm45")  # no declared prompt pre-opens <think> with a newline: continued
    assert glm.generation_prompt_ending("<think>\n") == "<|assistant|><think>\n"
    assert profiles.load("glm47").generation_prompt_ending("<think>\n") == "<|assistant|><think>\n"
    assert (
        profile.generation_prompt_ending("\n</think>\n\n") == "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )
    assert profile.generation_prompt_ending("<seed:think>") == "<|im_start|>assistant\n<seed:think>"


@pytest.mark.parametrize("name", NAMES)
def test_bundled_chat_template_is_the_corpus_file_and_redistributable(name: str) -> None:
    profile = profiles.load(name)
    assert profile.redistributable == (profile.license in PERMISSIVE)
    if profile.chat_template is None:
        assert profile.chat_template_source is None
        return
    assert profile.redistributable
    source = profile.chat_template_source or {}
    corpus_bytes = corpus_path("chat_templates", source["corpus_file"]).read_bytes()
    assert profile.chat_template.encode("utf-8") == corpus_bytes
    assert hashlib.sha256(corpus_bytes).hexdigest() == source["sha256"]
    assert EXPECTED[source["corpus_file"]] == name


@pytest.mark.parametrize("file", sorted(file for file, name in EXPECTED.items() if name is not None))
def test_corpus_generation_prompt_is_one_of_the_profile_s(file: str) -> None:
    profile = profiles.load(EXPECTED[file] or "")
    chat_template = corpus_path("chat_templates", file).read_text(encoding="utf-8")
    variables = {**profile.special_tokens, **_required_kwargs(file)}
    tools = [TOOL] if file in NEEDS_TOOLS else None
    prompt = render_chat_template(
        chat_template,
        [{"role": "user", "content": "Hi"}],
        tools=tools,
        add_generation_prompt=True,
        **variables,
    )
    assert any(prompt.endswith(candidate) for candidate in profile.generation_prompts if candidate)


def _required_kwargs(file: str) -> dict[str, object]:
    manifest = json.loads(corpus_path("chat_templates", "MANIFEST.json").read_text(encoding="utf-8"))
    entry = next(entry for entry in manifest if entry["file"] == file)
    return dict(entry.get("required_kwargs", {}))


def test_package_data_globs_ship_every_profile_file() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    globs = [
        glob for glob in ("profiles/*/*.json", "profiles/*/*.jinja", "profiles/*/*.txt") if glob in pyproject
    ]
    assert len(globs) == 3
    root = Path(str(resources.files("chatcodec.profiles")))
    for path in root.glob("*/*"):
        if path.parent.name == "__pycache__":  # the interpreter's bytecode of profiles/*.py, not data
            continue
        relative = f"profiles/{path.parent.name}/{path.name}"
        assert any(fnmatch.fnmatch(relative, glob) for glob in globs), relative


@pytest.mark.parametrize("name", NAMES)
def test_only_profiles_that_need_chatcodec_use_optional_placeholders(name: str) -> None:
    """``{name?}`` is a chatcodec extension: a profile the reference can load must not use it."""
    profile = profiles.load(name)
    if not profile.needs_chatcodec:
        assert "?}" not in json.dumps(profile.response_template)


@pytest.mark.parametrize("name", NAMES)
def test_every_profile_has_an_implicit_field(name: str) -> None:
    """Text outside every region is kept (SPEC 1.5), never discarded for want of an implicit field."""
    fields = profiles.load(name).response_template["fields"]
    assert [key for key, spec in fields.items() if "open" not in spec and "open_pattern" not in spec] == [
        "content"
    ]


def _placeholder_roots(transform: object) -> set[str]:
    if isinstance(transform, dict):
        return set().union(*(_placeholder_roots(value) for value in transform.values()))
    if isinstance(transform, list):
        return set().union(*(_placeholder_roots(value) for value in transform))
    whole = PLACEHOLDER.fullmatch(transform) if isinstance(transform, str) else None
    return {whole.group(1).split(".")[0]} if whole else set()


@pytest.mark.parametrize("name", NAMES)
def test_every_captured_group_reaches_the_message(name: str) -> None:
    """A named group of a field's patterns (or of its x-findall list pattern) is used by its transform:
    a captured call id or type is never thrown away."""
    for field, spec in profiles.load(name).response_template["fields"].items():
        patterns = [spec[key] for key in ("open_pattern", "close_pattern") if key in spec]
        args = spec.get("content_args", {})
        if spec.get("content") == "x-findall" and args.get("into", "list") == "list":
            patterns.append(args["pattern"])
        groups = set().union(*(regex.compile(pattern).groupindex for pattern in patterns))
        assert groups <= _placeholder_roots(spec.get("transform")), (field, groups)


def _xml_inline_args(value: object) -> list[dict[str, object]]:
    """Every xml-inline ``content_args`` / nested ``args`` inside a field spec."""
    found: list[dict[str, object]] = []
    if isinstance(value, dict):
        if value.get("content") == "xml-inline":
            found.append(value.get("content_args", {}))
        if value.get("name") == "xml-inline":
            found.append(value.get("args", {}))
        for item in value.values():
            found += _xml_inline_args(item)
    elif isinstance(value, list):
        for item in value:
            found += _xml_inline_args(item)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_xml_inline_regions_list_the_end_tags_they_skip(name: str) -> None:
    """Without ``skip_tags`` xml-inline skips any ``</word>``, a damaged close delimiter too."""
    for args in _xml_inline_args(profiles.load(name).response_template["fields"]):
        assert "skip_tags" in args


def test_profiles_load_from_a_zip(tmp_path: Path) -> None:
    """Installed as files the folder is read directly; from a zip, through importlib.resources."""
    import subprocess
    import sys
    import zipfile

    archive = tmp_path / "chatcodec.zip"
    package = ROOT / "src" / "chatcodec"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zipped.write(path, path.relative_to(package.parent).as_posix())
    code = ("import sys, json; from chatcodec import profiles; p = profiles.load('qwen2.5'); "
            "print(json.dumps([profiles.__file__.startswith(sys.argv[1]), type(profiles._root()).__module__, "
            "p.name, profiles.resolve('QWEN3'), len(profiles.names()), p.chat_template is not None, "
            "p.coverage is not None]))")
    result = subprocess.run([sys.executable, "-c", code, str(archive)], capture_output=True, text=True,
                            check=True, env={"PYTHONPATH": str(archive), "PATH": ""})
    assert json.loads(result.stdout) == [True, "zipfile", "hermes", "qwen3", 52, True, True]
