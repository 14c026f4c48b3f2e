#!/usr/bin/python3
"""Independent oracle for the pre-tokenizers: the models' own regular expressions, run by
Python's `re` (a backtracking engine with ordered alternation, like ECMAScript's), with the
\\p{..} classes and \\s spelled out as explicit code point ranges from unicodedata.

stdin:  {"FAMILY": [string, ...], ...}
stdout: {"FAMILY": [[piece, ...], ...], ...}

Each stage splits every current piece into its matches and the gaps between them (a gap is a
piece too); `$` and lookaheads see the end of the piece. Strings travel as JSON with
surrogateescape-free UTF-8, so inputs must be valid Unicode scalar values.
"""
import json
import re
import sys
import unicodedata

MAX_CP = 0x110000


def ranges_of(pred):
    out, start = [], None
    for cp in range(MAX_CP):
        if pred(cp):
            if start is None:
                start = cp
        elif start is not None:
            out.append((start, cp - 1))
            start = None
    if start is not None:
        out.append((start, MAX_CP - 1))
    return out


def esc(cp):
    return "\\U%08x" % cp


def cls_body(rs):
    return "".join(esc(a) if a == b else esc(a) + "-" + esc(b) for a, b in rs)


WHITE_SPACE = set(range(0x09, 0x0E)) | set(range(0x2000, 0x200B)) | {
    0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000}


MAJOR = [unicodedata.category(chr(c))[0] for c in range(MAX_CP)]


def cat_ranges(prefix, exclude=()):
    return ranges_of(lambda c: MAJOR[c] == prefix and chr(c) not in exclude)


CLASSES = {
    "L": cls_body(cat_ranges("L")),
    "N": cls_body(cat_ranges("N")),
    "P": cls_body(cat_ranges("P")),
    "M": cls_body(cat_ranges("M")),
    # The reference's std::regex path does not count ASCII '~' as a symbol.
    "S": cls_body(cat_ranges("S", exclude="~")),
    "s": cls_body(ranges_of(lambda c: c in WHITE_SPACE)),
}


def expand(rx):
    """\\p{X} -> class (bare or inside brackets), \\s -> White_Space, \\S -> its complement."""
    out, i, inside = [], 0, False
    while i < len(rx):
        c = rx[i]
        if c == "\\" and rx[i + 1] == "p":
            name = rx[i + 3]
            body = CLASSES[name]
            out.append(body if inside else "[" + body + "]")
            i += 5
            continue
        if c == "\\" and rx[i + 1] in "sS":
            body = CLASSES["s"]
            if rx[i + 1] == "s":
                out.append(body if inside else "[" + body + "]")
            else:
                assert not inside
                out.append("[^" + body + "]")
            i += 2
            continue
        if c == "\\":
            out.append(rx[i:i + 2])
            i += 2
            continue
        if c == "[":
            inside = True
        elif c == "]":
            inside = False
        out.append(c)
        i += 1
    return "".join(out)


CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA3 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
UPPER = r"((?=[\p{L}])([^a-z]))"
LOWER = r"((?=[\p{L}])([^A-Z]))"
GPT4O = (r"[^\r\n\p{L}\p{N}]?" + UPPER + "*" + LOWER + "+" + CONTRACTIONS + "?|" +
         r"[^\r\n\p{L}\p{N}]?" + UPPER + "+" + LOWER + "*" + CONTRACTIONS + "?|" +
         r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
DEEPSEEK3 = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|"
             r" ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

TEKKEN = (r"[^\r\n\p{L}\p{N}]?" + UPPER + "*" + LOWER + "+|" + r"[^\r\n\p{L}\p{N}]?" + UPPER + "+" + LOWER + "*|" +
          r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
BLOOM = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+"

FAMILIES = {
    "gpt-2": [GPT2],
    "llama3": [LLAMA3],
    "qwen2": [QWEN2],
    "starcoder": [r"\p{N}", GPT2],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"],
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
    "gpt-4o": [GPT4O],
    "deepseek-v3": [r"\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+", DEEPSEEK3],
    "tekken": [TEKKEN],
    "qwen35": [CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "seed-coder": [CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "bailingmoe": [r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"],
    "ufakzeka": [r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "minicpm5": [r"\p{N}{1,3}", CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "bloom": [BLOOM],
    "viking": [BLOOM, r"\p{N}"],
    # The reference matches explicit ranges with every non-ASCII White_Space character turned
    # into U+000B, so those never match a range.
    "deepseek-coder": [r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[" + cls_body(ranges_of(
        lambda c: (0x4E00 <= c <= 0x9FA5 or 0x0800 <= c <= 0x4E00 or 0xAC00 <= c <= 0xD7FF) and c not in WHITE_SPACE))
        + "]+", r"\p{N}"],
}


def split(stages, text):
    pieces = [text] if text else []
    for rx in stages:
        out = []
        for p in pieces:
            pos = 0
            for m in rx.finditer(p):
                if m.start() > pos:
                    out.append(p[pos:m.start()])
                out.append(m.group(0))
                pos = m.end()
            if pos < len(p):
                out.append(p[pos:])
        pieces = out
    return pieces


def main():
    req = json.load(sys.stdin)
    out = {}
    for family, texts in req.items():
        stages = [re.compile(expand(s)) for s in FAMILIES[family]]
        out[family] = [split(stages, t) for t in texts]
    json.dump(out, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
