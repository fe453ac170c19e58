#!/usr/bin/env python3
"""Writes python_expected.json: figures computed by CPython, which the Go
tests must reproduce exactly.

  difflib: SequenceMatcher(None, a, b).ratio(), autojunk on (the default),
           plus the autojunk=False ratio to show which pairs depend on it;
  dumps:   json.dumps(v, sort_keys=True) of decoded JSON documents.

Run from this directory: python3 python_expected.py
"""
import difflib
import json
import random

rng = random.Random(13)


def text(n, alphabet):
    return "".join(rng.choice(alphabet) for _ in range(n))


pairs = [
    ("", ""), ("a", ""), ("", "a"), ("abcd", "bcde"), ("hello world", "hello there world"),
    ("The capital of France is Paris.", "Paris"), ("Paris", "The capital of France is Paris."),
    ("kitten", "sitting"), ("naïve café", "naive cafe"), ("日本語のテキスト", "日本語テキスト"),
    ("emoji 😀 here", "emoji 😃 here"), ('{"a": 1, "b": [1, 2]}', '{"a": 1, "b": [1, 3]}'),
]
alphabets = ["ab", "abc ", "abcdefghij ", "the quick brown fox jumps over a lazy dog. ", "aé😀日 "]
for _ in range(160):
    alpha = rng.choice(alphabets)
    la = rng.choice([0, 1, 5, 30, 120, 199, 200, 201, 250, 400, 700])
    lb = rng.choice([0, 1, 5, 30, 120, 199, 200, 201, 250, 400, 700])
    a = text(la, alpha)
    if rng.random() < 0.5 and la > 0:
        # a mutated copy, so that ratios spread over (0, 1)
        b = list(a)
        for _ in range(max(1, la // 10)):
            i = rng.randrange(len(b)) if b else 0
            op = rng.random()
            if op < 0.4 and b:
                b[i] = rng.choice(alpha)
            elif op < 0.7 and b:
                del b[i]
            else:
                b.insert(i, rng.choice(alpha))
        b = "".join(b)
    else:
        b = text(lb, alpha)
    pairs.append((a, b))

difflib_cases = []
for a, b in pairs:
    difflib_cases.append({
        "a": a, "b": b,
        "ratio": difflib.SequenceMatcher(None, a, b).ratio(),
        "ratio_no_autojunk": difflib.SequenceMatcher(None, a, b, autojunk=False).ratio(),
    })

docs = [
    '{"b": 1, "a": [true, false, null], "c": {"z": "x\\ny", "y": 1.5}}',
    '["naïve", "😀", "\\u007f", "\\u0001", "tab\\t", "quote\\" back\\\\"]',
    '[0.1, 1e-05, 0.0001, 1e16, 1.5e300, 123456789.125, -2.5, 100, 0]',
    '{}', '[]', '"plain"', 'null', '{"nested": {"deeper": [{"k": []}, {}]}}',
]
dumps_cases = [{"json": d, "dumps": json.dumps(json.loads(d), sort_keys=True)} for d in docs]

with open("python_expected.json", "w") as f:
    json.dump({"difflib": difflib_cases, "dumps": dumps_cases}, f, ensure_ascii=False, indent=0)
print(len(difflib_cases), "difflib pairs;",
      sum(1 for c in difflib_cases if c["ratio"] != c["ratio_no_autojunk"]), "depend on autojunk")
