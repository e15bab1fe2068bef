"""How big a template regex becomes once compiled, checked before it is compiled.

The ``regex`` module compiles a counted repetition ``X{m}`` (and ``X{m,}``, ``X{m,n}``) as ``m``
copies of ``X``, so nested counts multiply: ``a{1000000000}`` or ``((a{1000}){1000}){1000}`` in a
stranger's response template made the compile take every byte of memory (24 GB before the
kernel killed the process), and ``(?:ab|cd){300000}`` crashed the interpreter with a segmentation
fault. No timeout or ``try`` can stop either, so the size is estimated from the pattern's text
first (:func:`expanded_size`) and a pattern over :data:`~chatcodec.response_templates.limits.MAX_PATTERN_SIZE`
is refused with ``regex.error`` (:func:`check_size`), which the template loader reports as an
invalid pattern, naming the field and the key.

The estimate reads the pattern as ``regex`` reads it without the verbose flag. With ``(?x)``
(or ``(?x:...)``, ``(?ix)``, ``(?V1x)``), whitespace and ``#`` comments are ignored, so
``(?x)(?:ab|cd){ 300000 }`` or ``(?x)(?:X{1000}) {1000}`` compile to what the estimate cannot see
(a segmentation fault, as above): a pattern that turns verbose mode on is refused
(:func:`check_size`).

Two more shapes cannot be bounded once compiled, so they are refused from the text too: groups
nested deeper than :data:`~chatcodec.response_templates.limits.MAX_GROUP_DEPTH` (``regex`` parses
and compiles them recursively: 500 levels raised ``RecursionError``), and a recursive call
(``(?R)``, ``(?1)``, ``(?-1)``, ``(?&name)``, ``(?P>name)``): ``(?R)?a`` took 784 MB and seconds
before a ``MemoryError`` in the load-time check for empty matches. No real format needs either.
"""

from __future__ import annotations

import regex

from chatcodec.response_templates import limits
from chatcodec.response_templates.lazy_pattern import LazyPattern
from chatcodec.response_templates.pattern_tokens import tokens

__all__ = ["check_size", "expanded_size", "group_depth", "recursive_call"]

#: A counted repetition token: ``{m}``, ``{m,}``, ``{m,n}`` or ``{,n}`` (its least count first).
_COUNT = LazyPattern(r"\{([0-9]*)(?:,[0-9]*)?\}", standard=True)

#: An inline flag group (``(?ix)``, ``(?V1x:``, ``(?x-i)``): the flags it turns on, then ``-`` and
#: the flags it turns off.
_FLAGS = LazyPattern(r"\(\?([a-zA-Z0-9]*)(?:-[a-zA-Z0-9]*)?[:)]", standard=True)


def expanded_size(source: str, *, counts: bool = True) -> int:
    """An estimate of how many elements ``regex`` compiles ``source`` into: each character,
    escape or class counts 1, a group the sum of its alternatives, and a counted repetition
    multiplies what it repeats by its least count (``*``, ``+``, ``?`` and ``{0,n}`` add nothing).

    Args:
        source: a regex pattern's text (its syntax need not be valid: an unbalanced ``)`` counts as
            one element, an unclosed group is closed at the end).
        counts: ``False``: every counted repetition counts as written once (the pattern's own
            size, which tells a pattern too long as written from one its counts blow up).

    Returns:
        The estimate (``a{1000}`` is 1000, ``(?:ab|c){10}`` is 30).
    """
    # One frame per open group: [size of its finished alternatives, size of the current one,
    # size of the last element of the current one (what a quantifier repeats)].
    frames: list[list[int]] = [[0, 0, 0]]
    for token in tokens(source):
        frame = frames[-1]
        if _opens_group(token):
            frames.append([0, 0, 0])
        elif token == ")" and len(frames) > 1:
            frames.pop()
            size = frame[0] + frame[1]
            frames[-1][1] += size
            frames[-1][2] = size
        elif token == "|":
            frame[0] += frame[1]
            frame[1] = frame[2] = 0
        elif token in ("*", "+", "?"):
            continue
        elif (count := _COUNT.fullmatch(token)) is not None:
            least = int(count.group(1) or 0)
            if least > 1 and counts:
                frame[1] += frame[2] * (least - 1)
                frame[2] *= least
        elif not token.startswith("(?#"):  # a comment compiles to nothing
            frame[1] += 1
            frame[2] = 1
    while len(frames) > 1:
        frame = frames.pop()
        frames[-1][1] += frame[0] + frame[1]
    return frames[0][0] + frames[0][1]


def group_depth(source: str) -> int:
    """How deep the groups of ``source`` nest, read from its text (no recursion).

    Args:
        source: a regex pattern's text (an unbalanced ``)`` is ignored).

    Returns:
        The depth: 0 for ``ab``, 1 for ``(a)|(?:b)``, 2 for ``((a))`` and ``(?(1)(a)|b)``.
    """
    depth = deepest = 0
    for token in tokens(source):
        if _opens_group(token):
            depth += 1
            deepest = max(deepest, depth)
        elif token == ")" and depth:
            depth -= 1
    return deepest


def recursive_call(source: str) -> str | None:
    """The first recursive call of ``source``, outside escapes and character classes.

    Args:
        source: a regex pattern's text.

    Returns:
        The call as written (``"(?R)"``, ``"(?1)"``, ``"(?-1)"``, ``"(?&name)"``, ``"(?P>name)"``),
        or ``None`` (a conditional ``(?(1)...)`` and a back-reference ``\\g<1>`` are no calls).
    """
    position = 0
    for token in tokens(source):
        if _is_call(token):
            return token
        if token == "(?P>":
            end = source.find(")", position)
            return source[position:end + 1] if end >= 0 else source[position:]
        position += len(token)
    return None


def check_size(source: str) -> None:
    """Refuse ``source`` when it cannot be compiled within bounds, before ``regex`` compiles it (the
    compile itself cannot be bounded: it exhausts memory, crashes or recurses too deep): when
    :func:`expanded_size` passes ``MAX_PATTERN_SIZE``, :func:`group_depth` passes
    ``MAX_GROUP_DEPTH``, or it holds a :func:`recursive_call`.

    Args:
        source: a regex pattern's text.

    Raises:
        regex.error: the pattern is too big, with a message naming the estimate, the limit and the
            cause (its length as written, or its counted repetitions); or
            it turns on verbose mode, whose ignored whitespace and comments the estimate cannot read;
            or its groups nest too deep (the message names the depth and the limit); or it calls a
            group recursively (the message names the call).
    """
    if _turns_verbose_on(source):
        raise regex.error(
            "it turns on verbose mode (the x flag), whose ignored whitespace and # comments hide "
            "counted repetitions from the size check (MAX_PATTERN_SIZE in "
            "chatcodec.response_templates.limits); write the pattern without the x flag"
        )
    depth = group_depth(source)
    if depth > limits.MAX_GROUP_DEPTH:
        raise regex.error(
            f"its groups are nested {depth:,} deep, more than MAX_GROUP_DEPTH ({limits.MAX_GROUP_DEPTH}) "
            "in chatcodec.response_templates.limits (the bundled profiles' patterns nest 5 at most): "
            "the regex module compiles groups recursively and would pass Python's recursion limit"
        )
    call = recursive_call(source)
    if call is not None:
        raise regex.error(
            f"it calls a group recursively ({call}): a recursive pattern can match without bound "
            "(one took 784 MB before a MemoryError), and no chat format needs one; write it without "
            "(?R), (?1), (?-1), (?&name) or (?P>name)"
        )
    size = expanded_size(source)
    if size > limits.MAX_PATTERN_SIZE:
        if expanded_size(source, counts=False) > limits.MAX_PATTERN_SIZE:  # too long as written
            alternatives = sum(token == "|" for token in tokens(source)) + 1
            among = f", over its {alternatives:,} alternatives" if alternatives > 1 else ""
            raise regex.error(
                f"it is too long: about {size:,} elements once compiled (one per character, escape "
                f"or class{among}), more than MAX_PATTERN_SIZE ({limits.MAX_PATTERN_SIZE:,}) in "
                "chatcodec.response_templates.limits (the bundled profiles' patterns stay under 250): "
                "match a family of tokens with a class or a shared prefix, not a list of each one"
            )
        raise regex.error(
            f"its counted repetitions ({{m}}, {{m,}}, {{m,n}}) make about {size:,} elements once compiled "
            f"(the regex module writes out m copies of what each one repeats, and nested counts multiply), "
            f"more than MAX_PATTERN_SIZE ({limits.MAX_PATTERN_SIZE:,}) in "
            "chatcodec.response_templates.limits: compiling it would exhaust memory or crash"
        )


def _opens_group(token: str) -> bool:
    """Whether ``token`` (of :func:`~chatcodec.response_templates.pattern_tokens.tokens`) opens a
    group: ``(``, ``(?:``, ``(?P<name>``, ``(?(1)`` yes; ``(?i)``, ``(?1)``, ``(?#c)``, ``\\(`` no."""
    return token.startswith("(?(") or (token.startswith("(") and not token.endswith(")"))


def _is_call(token: str) -> bool:
    """Whether ``token`` is a whole recursive call: ``(?R)``, ``(?0)``, ``(?1)``, ``(?+1)``,
    ``(?-1)``, ``(?&name)`` (``(?P>name)`` is tokenized as ``(?P>`` and what follows)."""
    if not (token.startswith("(?") and token.endswith(")")) or len(token) < 4:
        return False
    inner = token[2:-1]
    return inner == "R" or inner.lstrip("+-").isdigit() or inner.startswith("&")


def _turns_verbose_on(source: str) -> bool:
    """Whether an inline flag group of ``source`` (outside escapes and character classes) turns
    on the verbose flag ``x``.

    Args:
        source: a regex pattern's text.

    Returns:
        ``True`` for ``(?x)``, ``(?ix:``, ``(?V1x)`` and the like; ``False`` for ``(?-x)``, ``\\(?x``.
    """
    position = 0
    for token in tokens(source):
        if token.startswith("(?"):
            flags = _FLAGS.match(source, position)
            if flags is not None and "x" in flags.group(1):
                return True
        position += len(token)
    return False
