"""fbl-finetune --tokenizer against an independent BPE written here.

Writes tokenizer.json files of both kinds fbl reads (byte-level BPE as
GPT-2, Llama-3 and Qwen2 ship it; SentencePiece-style BPE as LLaMA-2,
TinyLlama and Gemma ship it), with merges learnt here from a small corpus
plus random extra merges in random places of the rank order, and compares
`fbl-finetune --print-tokens` on many random strings (ASCII, digits,
punctuation, multi-byte UTF-8, whitespace runs, added tokens) with a
reference encoder that follows the textbook definition: pre-split with
Python's `re` (the file's own pattern, \\p{L}, \\p{N} and \\s spelled out
from unicodedata), then repeatedly merge the adjacent pair of lowest rank.
Then: a pattern fbl does not implement (one warning, still tokenizes),
text that is not UTF-8, and mutated files (exit 0 or one error line, never
a crash). Usage: tokenizer.py FBL-FINETUNE WORKDIR"""
import json
import os
import random
import re
import subprocess
import sys
import unicodedata
from collections import Counter

tool, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = random.Random(20240601)
ok = True


def fail(message):
    global ok
    ok = False
    print("FAIL:", message)


# --- Unicode classes as a regex engine sees them -----------------------------

def category_ranges():
    letters, numbers = [], []
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))[0]
        for target, want in ((letters, "L"), (numbers, "N")):
            if cat == want:
                if target and target[-1][1] == cp - 1:
                    target[-1][1] = cp
                else:
                    target.append([cp, cp])
    return letters, numbers


def class_text(ranges):
    return "".join("\\U%08x" % lo if lo == hi else "\\U%08x-\\U%08x" % (lo, hi)
                   for lo, hi in ranges)


LETTERS, NUMBERS = category_ranges()
WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0),
               (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
               (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]
WS_SET = {chr(c) for lo, hi in WHITE_SPACE for c in range(lo, hi + 1)}
CLASSES = {"\\p{L}": class_text(LETTERS), "\\p{N}": class_text(NUMBERS),
           "\\s": class_text(WHITE_SPACE)}


def python_regex(pattern):
    """The Oniguruma-style pattern of a tokenizer.json for Python's re."""
    out, i, bracket = [], 0, False
    while i < len(pattern):
        for name, text in CLASSES.items():
            if pattern.startswith(name, i):
                out.append(text if bracket else "[" + text + "]")
                i += len(name)
                break
        else:
            if pattern.startswith("\\S", i):
                assert not bracket
                out.append("[^" + CLASSES["\\s"] + "]")
                i += 2
            elif pattern[i] == "\\":
                out.append(pattern[i:i + 2])
                i += 2
            else:
                bracket = {"[": True, "]": False}.get(pattern[i], bracket)
                out.append(pattern[i])
                i += 1
    return re.compile("".join(out))


GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
          r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
         r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# GPT-4o's: case classes fbl does not implement.
O200K = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
         r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|"
         r"\s+(?!\S)|\s+")


def regex_split(regex, text):
    """Isolated split: every match and every gap between matches."""
    pieces, at = [], 0
    for m in regex.finditer(text):
        if m.start() > at:
            pieces.append(text[at:m.start()])
        if m.end() > m.start():
            pieces.append(m.group())
        at = m.end()
    if at < len(text):
        pieces.append(text[at:])
    return pieces


# The reference splitter, checked by hand on a few strings.
for pattern, text, want in [
        (GPT2, "Hello world's 123  x\n", ["Hello", " world", "'s", " 123", " ", " x", "\n"]),
        (LLAMA3, "I'LL pay 1234567 $5!\n\n ok", ["I", "'LL", " pay", " ", "123", "456", "7",
                                                " $", "5", "!\n\n", " ok"]),
        (QWEN2, "x 42", ["x", " ", "4", "2"])]:
    got = regex_split(python_regex(pattern), text)
    if got != want:
        fail(f"reference split of {text!r}: {got}, expected {want}")


def byte_chars():
    """GPT-2's printable stand-ins for the 256 bytes."""
    chars, extra = {}, 0
    for b in range(256):
        if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


BYTE_CHARS = byte_chars()
SP = "\u2581"


# --- The reference tokenizer --------------------------------------------------

def flatten(node, key):
    if node is None:
        return []
    if node["type"] == "Sequence":
        return [x for child in node[key] for x in flatten(child, key)]
    return [node]


class Reference:
    def __init__(self, spec):
        model = spec["model"]
        self.vocab = model["vocab"]
        self.ranks = {}
        for rank, m in enumerate(model["merges"]):
            a, b = m.split(" ", 1) if isinstance(m, str) else m
            self.ranks.setdefault((a, b), rank)
        self.unk = model.get("unk_token")
        self.fuse_unk = model.get("fuse_unk", False)
        self.byte_fallback = model.get("byte_fallback", False)
        self.ignore_merges = model.get("ignore_merges", False)
        self.added = spec.get("added_tokens", [])
        self.normalizers = flatten(spec.get("normalizer"), "normalizers")
        self.pre = flatten(spec.get("pre_tokenizer"), "pretokenizers")
        self.regexes = {}
        self.byte_level = any(p["type"] == "ByteLevel" for p in self.pre)

    def regex(self, pattern):
        if pattern not in self.regexes:
            self.regexes[pattern] = python_regex(pattern)
        return self.regexes[pattern]

    def encode(self, text):
        ids, segment, i = [], 0, 0
        while i < len(text):
            best = None
            for t in self.added:
                if text.startswith(t["content"], i) and (
                        best is None or len(t["content"]) > len(best["content"])):
                    best = t
            if best is None:
                i += 1
                continue
            start, end = i, i + len(best["content"])
            while best.get("lstrip") and start > segment and text[start - 1] in WS_SET:
                start -= 1
            while best.get("rstrip") and end < len(text) and text[end] in WS_SET:
                end += 1
            ids += self.segment(text[segment:start], segment == 0)
            ids.append(best["id"])
            segment = i = end
        return ids + self.segment(text[segment:], segment == 0)

    def segment(self, s, first):
        for n in self.normalizers:
            if n["type"] == "Prepend" and s:
                s = n["prepend"] + s
            elif n["type"] == "Replace":
                s = s.replace(n["pattern"]["String"], n["content"])
        pieces = [(s, first)]
        for p in self.pre:
            out = []
            for piece, at_start in pieces:
                if not piece:
                    continue
                if p["type"] == "ByteLevel":
                    if p["add_prefix_space"] and not piece.startswith(" "):
                        piece = " " + piece
                    parts = (regex_split(self.regex(GPT2), piece) if p["use_regex"]
                             else [piece])
                elif p["type"] == "Split":
                    parts = regex_split(self.regex(p["pattern"]["Regex"]), piece)
                else:  # Metaspace
                    piece = piece.replace(" ", SP)
                    scheme = p["prepend_scheme"]
                    if (scheme == "always" or (scheme == "first" and at_start)) \
                            and not piece.startswith(SP):
                        piece = SP + piece
                    # Each "▁" starts a piece.
                    parts = re.findall(f"{SP}[^{SP}]*|[^{SP}]+", piece) if p["split"] \
                        else [piece]
                out += [(part, at_start and k == 0) for k, part in enumerate(parts)]
            pieces = out
        return [i for piece, _ in pieces if piece for i in self.word(piece)]

    def word(self, piece):
        chars = ([BYTE_CHARS[b] for b in piece.encode()] if self.byte_level
                 else list(piece))
        if self.ignore_merges and "".join(chars) in self.vocab:
            return [self.vocab["".join(chars)]]
        symbols, last_unk = [], False
        for c in chars:
            names = ["<0x%02X>" % b for b in c.encode()]
            if c in self.vocab:
                symbols.append(c)
                last_unk = False
            elif self.byte_fallback and all(n in self.vocab for n in names):
                symbols += names
                last_unk = False
            elif self.unk in self.vocab:
                if not (self.fuse_unk and last_unk):
                    symbols.append(self.unk)
                last_unk = True
        while True:
            best = None
            for i in range(len(symbols) - 1):
                rank = self.ranks.get((symbols[i], symbols[i + 1]))
                if rank is not None and (best is None or rank < best[0]):
                    best = (rank, i)
            if best is None:
                break
            i = best[1]
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        return [self.vocab[s] for s in symbols]


# --- Test data -----------------------------------------------------------------

WORDS = ["the", "The", "THE", "hello", "world", "token", "tokenizer", "layout",
         "texture", "don't", "I'm", "WE'LL", "you've", "she'd", "it's", "they're",
         "café", "naïve", "straße", "Ж", "привет", "中文", "日本語", "😀", "🚀🚀",
         "e\u0301", "ſ's", "'S", "x", "a", "aaaa", "ab", "abc", "ababab", "_x_"]
OTHERS = ["1", "12", "123", "1234567", "2024", "٣٤٥", "½", "²", "3.14", "$5", "!",
          "!!", "...", "?!", "—", "--", "(", ")", "[]", "{x}", "@", "#", "'", "’",
          ",", ";", "\"", "<", "<s", "s>", "</", "<|end", "|>", "▁", "▁▁", "<0x41>"]
SPACES = [" ", " ", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ",
          "\u00a0", "\u3000", " \t ", "    \n\n  "]
SPECIALS = ["<s>", "</s>", "<|endoftext|>", "<|begin_of_text|>", "<mark>", "<pad>"]
ALPHABET = "abcdeABCDE0123 ,.'!?\n\téß中😀▁<>s/|\u00a0"


def random_text():
    kind = rng.random()
    if kind < 0.15:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
    parts = []
    for _ in range(rng.randint(1, 14)):
        r = rng.random()
        if r < 0.45:
            parts.append(rng.choice(WORDS))
        elif r < 0.65:
            parts.append(rng.choice(OTHERS))
        elif r < 0.95:
            parts.append(rng.choice(SPACES))
        else:
            parts.append(rng.choice(SPECIALS))
    return "".join(parts)


CORPUS = [" ".join(rng.choice(WORDS + OTHERS) for _ in range(rng.randint(3, 12)))
          for _ in range(300)]


def learn_merges(sequences, count):
    """Textbook BPE training: merge the most frequent adjacent pair."""
    seqs = [list(s) for s in sequences]
    merges = []
    for _ in range(count):
        pairs = Counter(p for s in seqs for p in zip(s, s[1:]))
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        for s in seqs:
            i = 0
            while i < len(s) - 1:
                if s[i] == a and s[i + 1] == b:
                    s[i:i + 2] = [a + b]
                i += 1
    return merges


def add_random_merges(vocab, merges, count):
    """Merges of random pairs of short tokens, at random ranks."""
    short = [t for t in vocab if len(t) <= 3 and not t.startswith("<")]
    for _ in range(count):
        a, b = rng.choice(short), rng.choice(short)
        if (a, b) in merges:
            continue
        vocab.setdefault(a + b, len(vocab))
        merges.insert(rng.randint(0, len(merges)), (a, b))


def merge_list(merges, as_arrays):
    return [[a, b] if as_arrays else f"{a} {b}" for a, b in merges]


def added_tokens(vocab, names, strip=None):
    tokens = []
    for name in names:
        vocab_id = vocab.setdefault(name, len(vocab))
        t = {"id": vocab_id, "content": name, "single_word": False,
             "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        if strip:
            t.update(strip.get(name, {}))
        tokens.append(t)
    return tokens


def byte_level_tokenizer(pattern, add_prefix_space=False, as_arrays=False,
                         ignore_merges=False, bos=None):
    vocab = {BYTE_CHARS[b]: b for b in range(256)}
    if pattern is None:
        pre = {"type": "ByteLevel", "add_prefix_space": add_prefix_space,
               "trim_offsets": True, "use_regex": True}
        split = python_regex(GPT2)
    else:
        pre = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
             "use_regex": False}]}
        split = python_regex(pattern if pattern != O200K else LLAMA3)
    words = ["".join(BYTE_CHARS[b] for b in piece.encode())
             for line in CORPUS for piece in regex_split(split, line)]
    merges = learn_merges(words, 150)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    add_random_merges(vocab, merges, 40)
    added = added_tokens(vocab, ["<|endoftext|>", "<|begin_of_text|>", "<mark>"],
                         {"<mark>": {"lstrip": True, "rstrip": True, "special": False}})
    spec = {"version": "1.0", "added_tokens": added, "normalizer": None,
            "pre_tokenizer": pre, "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": ignore_merges, "vocab": vocab,
                      "merges": merge_list(merges, as_arrays)}}
    if bos:
        spec["post_processor"] = {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
             "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                        {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [], "special_tokens": {bos: {"id": bos, "ids": [vocab[bos]],
                                                  "tokens": [bos]}}}]}
    return spec


def sentencepiece_tokenizer(style, as_arrays=False, byte_fallback=True):
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    if style == "llama":
        normalizer = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SP},
            {"type": "Replace", "pattern": {"String": " "}, "content": SP}]}
        pre = None
        lines = [SP + line.replace(" ", SP) for line in CORPUS]
    elif style == "gemma":
        normalizer = {"type": "Replace", "pattern": {"String": " "}, "content": SP}
        pre = None
        lines = [line.replace(" ", SP) for line in CORPUS]
    else:  # metaspace
        normalizer = None
        pre = {"type": "Metaspace", "replacement": SP, "prepend_scheme": "first",
               "split": True}
        lines = [w for line in CORPUS for w in re.findall(f"{SP}[^{SP}]*|[^{SP}]+",
                                                          SP + line.replace(" ", SP))]
    # Characters: ASCII and a few others; the rest falls back to bytes.
    chars = sorted({c for line in lines for c in line
                    if c < "\x7f" or c in SP + "é中"})
    for c in chars:
        vocab.setdefault(c, len(vocab))
    seqs = []
    for line in lines:
        seq = []
        for c in line:
            seq += [c] if c in vocab else ["<0x%02X>" % b for b in c.encode()]
        seqs.append(seq)
    merges = learn_merges(seqs, 150)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    add_random_merges(vocab, merges, 40)
    added = added_tokens(vocab, ["<unk>", "<s>", "</s>"])
    return {"version": "1.0", "added_tokens": added, "normalizer": normalizer,
            "pre_tokenizer": pre,
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}}],
                               "pair": [], "special_tokens": {
                                   "<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": True, "byte_fallback": byte_fallback,
                      "vocab": vocab, "merges": merge_list(merges, as_arrays)}}


def write(name, spec):
    path = os.path.join(work, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(spec, f, ensure_ascii=rng.random() < 0.5)
    return path


def run_fbl(tokenizer, texts, folder, extra=()):
    """fbl's ids for each text (one file each), and stderr."""
    os.makedirs(folder, exist_ok=True)
    for i, text in enumerate(texts):
        with open(os.path.join(folder, "%04d.txt" % i), "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
    proc = subprocess.run([tool, "--tokenizer", tokenizer, "--data", folder,
                           "--print-tokens", *extra], capture_output=True, text=True,
                          errors="replace")
    if proc.returncode != 0:
        return None, proc.stderr
    lines = proc.stdout.split("\n")[:-1]
    return [[int(x) for x in line.split()] for line in lines], proc.stderr


# --- fbl against the reference --------------------------------------------------

TEXTS = [random_text() for _ in range(400)] + [
    "", " ", "  ", "\n", "a", "<s>", "</s></s>", "<s>x", "x<mark>y", "a <mark> b",
    "<|endoftext|><|endoftext|>", "1234567890", "١٢٣٤٥٦٧", "   hello", "hello   ",
    "don't DON'T ſ's 'S", "\r\n\r\n", "x\n\n\ny", "😀😀😀 中文中文", "aaaaaaaaaaaaaaaaa",
    "ab" * 40, " ".join(CORPUS[:5])]

configs = {
    "gpt2": byte_level_tokenizer(None),
    "gpt2-prefix-space": byte_level_tokenizer(None, add_prefix_space=True, as_arrays=True),
    "llama3": byte_level_tokenizer(LLAMA3, ignore_merges=True, bos="<|begin_of_text|>"),
    "qwen2": byte_level_tokenizer(QWEN2, as_arrays=True),
    "llama2": sentencepiece_tokenizer("llama"),
    "gemma": sentencepiece_tokenizer("gemma", as_arrays=True),
    "metaspace": sentencepiece_tokenizer("metaspace"),
    "no-byte-fallback": sentencepiece_tokenizer("llama", byte_fallback=False),
}
results = {}
for name, spec in configs.items():
    path = write(name, spec)
    got, err = run_fbl(path, TEXTS, os.path.join(work, "data-" + name))
    results[name] = got
    if got is None:
        fail(f"{name}: fbl-finetune failed: {err.strip()}")
        continue
    ref = Reference(spec)
    bad = [(t, g, ref.encode(t)) for t, g in zip(TEXTS, got) if g != ref.encode(t)]
    if len(got) != len(TEXTS):
        fail(f"{name}: {len(got)} lines for {len(TEXTS)} texts")
    elif bad:
        t, g, w = bad[0]
        fail(f"{name}: {len(bad)} of {len(TEXTS)} texts differ; first {t!r}: fbl {g}, "
             f"reference {w}")
    else:
        merged = sum(len(g) < len(t.encode()) for t, g in zip(TEXTS, got))
        print(f"{name}: {len(TEXTS)} texts as the reference encodes them "
              f"({len(spec['model']['merges'])} merges, {merged} texts shortened)")
    if err:
        fail(f"{name}: unexpected stderr {err.strip()!r}")

# The comparison notices a wrong rank order: the reference with its merges
# reversed disagrees.
spec, got = configs["gpt2"], results["gpt2"] or []
wrong = dict(spec, model=dict(spec["model"], merges=spec["model"]["merges"][::-1]))
differ = sum(g != Reference(wrong).encode(t) for t, g in zip(TEXTS, got))
print("reversed merges: " + ("the comparison notices" if differ > 20 else
                             f"only {differ} texts differ"))

# bos: the post-processor's with --model (its bos_token_id set), else the
# config's; none without --model.
spec = sentencepiece_tokenizer("llama")
small = {t: i for t, i in spec["model"]["vocab"].items() if i < 259}
tiny = dict(spec, model=dict(spec["model"], vocab=small, merges=[]))
tiny_path = write("tiny", tiny)
no_template = write("tiny-no-template", {k: v for k, v in tiny.items()
                                         if k != "post_processor"})
for path, want in [(tiny_path, 1), (no_template, 256)]:
    got, err = run_fbl(path, ["hi"], os.path.join(work, "data-bos"),
                       ["--model", "tiny-llama"])
    if got and got[0][0] == want and got[0][1:] == Reference(tiny).encode("hi"):
        print(f"bos with --model tiny-llama: {want}")
    else:
        fail(f"bos: {got} {err}")

# A pattern fbl does not implement: one warning, then Llama-3's pattern.
spec = byte_level_tokenizer(O200K)
got, err = run_fbl(write("o200k", spec), TEXTS[:50], os.path.join(work, "data-o200k"))
if got is not None and len(got) == 50:
    lines = err.strip().splitlines()
    print(f"unknown pattern: {len(lines)} warning line: {lines[0] if lines else ''}")
    approx = dict(spec, pre_tokenizer=dict(spec["pre_tokenizer"], pretokenizers=[
        dict(spec["pre_tokenizer"]["pretokenizers"][0], pattern={"Regex": LLAMA3}),
        spec["pre_tokenizer"]["pretokenizers"][1]]))
    if any(g != Reference(approx).encode(t) for t, g in zip(TEXTS, got)):
        fail("the unknown pattern is not split as Llama-3's")
else:
    fail(f"unknown pattern: {err}")

# Text that is not UTF-8: every byte still becomes tokens.
raw = [b"\xff\xfe abc \xe2\x82", b"\xc3", b"ok \xed\xa0\x80 \xf4\x90\x80\x80!"]
raw_ok = True
for name in ("gpt2", "llama2"):
    got, err = run_fbl(os.path.join(work, name + ".json"), raw,
                       os.path.join(work, "data-raw-" + name))
    if got is None or any(not g for g in got):
        raw_ok = False
        fail(f"{name} on bytes that are not UTF-8: {got} {err}")
if raw_ok:
    print("not UTF-8: tokenized")

# Mutated files: fbl either reads them or says why in one line.
base = json.dumps(tiny)


def mutate(node, depth=0):
    if isinstance(node, dict) and node:
        key = rng.choice(list(node))
        if rng.random() < 0.3 or depth > 4:
            r = rng.random()
            if r < 0.3:
                del node[key]
            else:
                node[key] = rng.choice([None, -1, 2**40, 1.5, "x", "", [], {}, True,
                                        ["a", "b", "c"], {"type": "WordPiece"}])
        else:
            mutate(node[key], depth + 1)
    elif isinstance(node, list) and node:
        i = rng.randrange(len(node))
        if rng.random() < 0.3 or depth > 4:
            node[i] = rng.choice([None, -1, "x y z", "", ["a"], 7, {"id": 1}])
        else:
            mutate(node[i], depth + 1)


crashes, errors, read = 0, 0, 0
for k in range(80):
    if k % 4 == 0:
        text = base[:rng.randrange(len(base))]
    elif k % 4 == 1:
        i = rng.randrange(len(base))
        text = base[:i] + rng.choice(["\x00", "}", "\"", "\\", "\u00e9", "[", ","]) + base[i:]
    else:
        spec = json.loads(base)
        for _ in range(rng.randint(1, 3)):
            mutate(spec)
        text = json.dumps(spec)
    path = os.path.join(work, "mutated.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    proc = subprocess.run([tool, "--tokenizer", path, "--data",
                           os.path.join(work, "data-bos"), "--print-tokens"],
                          capture_output=True, text=True, errors="replace")
    lines = proc.stderr.strip().splitlines()
    if proc.returncode == 0:
        read += 1
    elif proc.returncode == 1 and lines and all(l.startswith("fbl-finetune: ") for l in lines) \
            and lines[-1].startswith("fbl-finetune: error: --tokenizer '"):
        errors += 1
    else:
        crashes += 1
        fail(f"mutated file: exit {proc.returncode}, stderr {proc.stderr!r}")
print(f"mutated files: {crashes} crashes" + (" (" + str(errors) + " refused, " + str(read)
                                            + " read)" if not crashes else ""))

print("TOKENIZER PASS" if ok else "TOKENIZER FAIL")
sys.exit(0 if ok else 1)
