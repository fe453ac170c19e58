"""Generates python_vectors.jsonl: JSON inputs and the exact bytes Python's
json.dumps(json.loads(input), sort_keys=True, separators=(",", ":"),
ensure_ascii=True) gives for them. Run with: python3 gen_vectors.py > python_vectors.jsonl
Each output line is {"in": <input text>, "out": <canonical text>}."""
import json
import random

rng = random.Random(20260822)

FIXED = [
    '0', '-0', '1', '-1', '123456789012345678901234567890', '-0.0', '0.0', '1.0', '100.0',
    '1e5', '1E5', '1e-5', '1e-05', '1.5e300', '1e400', '-1e400', '1e-400', '5e-324',
    '2.5e-324', '1e16', '1e15', '9999999999999999.0', '1e22', '0.1', '0.2', '0.30000000000000004',
    '123456789012345678.0', '1.7976931348623157e308', '2.2250738585072014e-308', '0.0001',
    '0.00001', '0.001234', '12345.678', '1e0', '1e+0', '1e-0', '10e-1', '3.14159265358979323846',
    '-123.456e-7', '4.35', '0.000123456789', '1234567890123456.7', '12345678901234567.0',
    '"\\u00e9"', '"é"', '"😀"', '"\\ud83d\\ude00"', '"\\u007f"', '"\\u0000\\u001f"',
    '"\\b\\f\\n\\r\\t\\"\\\\\\/"', '"/"', '"<>&"', '"\\u2028\\u2029"', '"\\uffff"', '"\\ufeff"',
    '{"b":1,"a":2,"A":3,"_":4,"é":5,"z":6,"😀":7,"\\uffff":8,"":9}',
    '{"a":1,"a":2}', '{"b":1,"a":2,"b":3}', '[]', '{}', '[{}]', '{"a":[]}', 'true', 'false', 'null',
    '[1,1.0,-0,-0.0,"1"]', '{"question":"2+2?","answer":"4"}',
    '{"nested":{"z":{"y":[1,{"x":null,"w":true}]},"a":false}}',
]

def rand_str():
    alphabet = ['a', 'Z', '0', ' ', '"', '\\', '/', '\n', '\t', '\x00', '\x1f', '\x7f', '\x80',
                'é', 'ß', '中', '\u2028', '\ufeff', '\uffff', '😀', '\U0010ffff', '~', '&', '<']
    return ''.join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))

def rand_num():
    k = rng.randint(0, 5)
    if k == 0:
        return str(rng.randint(-10**30, 10**30))
    if k == 1:
        return repr(rng.uniform(-1e6, 1e6))
    if k == 2:
        m = rng.randint(0, 10**rng.randint(1, 20))
        return f"{'-' if rng.random() < .5 else ''}{m}e{rng.randint(-330, 330)}"
    if k == 3:
        return f"{rng.randint(0, 10**6)}.{rng.randint(0, 10**rng.randint(1, 20))}"
    if k == 4:
        return f"{rng.randint(0, 9)}.{rng.randint(0, 9)}E{rng.choice(['+', '-', ''])}{rng.randint(0, 25)}"
    return repr(rng.random() * 10 ** rng.randint(-30, 30))

def rand_val(depth=0):
    k = rng.randint(0, 6 if depth < 3 else 3)
    if k == 0:
        return rng.choice(['true', 'false', 'null'])
    if k in (1, 2):
        return rand_num()
    if k == 3:
        return json.dumps(rand_str(), ensure_ascii=rng.random() < .5)
    if k == 4:
        return '[' + ','.join(rand_val(depth + 1) for _ in range(rng.randint(0, 4))) + ']'
    items = [json.dumps(rand_str(), ensure_ascii=rng.random() < .5) + ':' + rand_val(depth + 1)
             for _ in range(rng.randint(0, 5))]
    return '{' + ', '.join(items) + '}'

for text in FIXED + [rand_val() for _ in range(400)]:
    out = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    print(json.dumps({"in": text, "out": out}, ensure_ascii=False))
