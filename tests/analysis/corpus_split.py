"""The development / held-out split of the corpus chat templates for ``chatcodec derive``.

The derivation (``chatcodec.analysis.derive``) is developed and tested on the development part
only; the held-out part is measured once, by ``bench/derive_corpus.py``, and its results are not
looked at while the derivation changes. The rule was fixed before any derivation code existed and
depends on nothing but the file name:

    held out  <=>  int(sha256(file name, UTF-8).hexdigest(), 16) is odd

(``file name`` as in ``chat_templates/`` of the corpus, e.g. ``Qwen--Qwen3-0.6B.jinja``). On the
59 corpus templates this holds out 20 and leaves 39 for development. Never change the rule.
"""

from __future__ import annotations

import hashlib

from tests.conftest import CORPUS


def is_held_out(file_name: str) -> bool:
    """True when the corpus chat template ``file_name`` belongs to the held-out part."""
    return int(hashlib.sha256(file_name.encode("utf-8")).hexdigest(), 16) % 2 == 1


def corpus_template_names() -> list[str]:
    """Every corpus chat template file name (``*.jinja``), sorted."""
    return sorted(path.name for path in (CORPUS / "chat_templates").glob("*.jinja"))


def development_templates() -> list[str]:
    """The templates the derivation may be developed and tested on."""
    return [name for name in corpus_template_names() if not is_held_out(name)]


def held_out_templates() -> list[str]:
    """The templates kept aside: measured by ``bench/derive_corpus.py`` only."""
    return [name for name in corpus_template_names() if is_held_out(name)]
