"""Makes the tokenizer cases vantage's `load::tokenizer` must decode as the `tokenizers` library
does (run by hand: `pip install tokenizers==0.23.3 && python3 generate.py`): three small
tokenizers trained here on a few lines of text, each saved as the `tokenizer.json` a model ships,
and for each, texts encoded and decoded by the library itself (`decode(ids,
skip_special_tokens=False)`).

- `byte_level.json`: GPT-2 / Llama 3 / Qwen style, a byte-level BPE (`ByteLevel` pre-tokenizer
  and decoder) with an added special token;
- `metaspace.json`: SentencePiece / Llama 2 style, a BPE with `byte_fallback` and the decoder
  sequence Replace(▁ → space), ByteFallback, Fuse, Strip (as `tokenizer.json` of Llama 2 has it);
- `wordpiece.json`: BERT style, `WordPiece` with its `##` decoder.
"""

import json
import os

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
from tokenizers.implementations import ByteLevelBPETokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = [
    "The answer is 42. Let me think step by step.",
    "Natalia sold 48 clips in April, and half as many in May.",
    "def add(a, b):\n    return a + b\n",
    "Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u2014 \u20ac5, \u00fcber",
    "search(query='capital of France') -> Paris",
] * 20
TEXTS = [
    "The answer is 42.",
    "Let me think step by step.\nThe answer is 41.",
    "Caf\u00e9 \u2014 \u20ac5 \u00fcber na\u00efve",
    "def add(a, b):\n    return a + b",
    "unseen words: zebra quux \U0001F600",
]


def byte_level():
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(CORPUS, vocab_size=400, min_frequency=1, special_tokens=["<|endoftext|>"])
    return tok._tokenizer, "<|endoftext|>"


def metaspace():
    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token=None))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok.pre_tokenizer = None
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    alphabet = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=500, special_tokens=["<s>", "</s>"] + alphabet, min_frequency=1)
    tok.train_from_iterator(CORPUS, trainer)
    return tok, "</s>"


def wordpiece():
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    trainer = trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]", "[SEP]"])
    tok.train_from_iterator(CORPUS, trainer)
    return tok, "[SEP]"


def main():
    import tokenizers

    out = {"tokenizers": tokenizers.__version__, "cases": []}
    for name, make in [("byte_level", byte_level), ("metaspace", metaspace), ("wordpiece", wordpiece)]:
        tok, special = make()
        tok.save(os.path.join(HERE, f"{name}.json"))
        for text in TEXTS:
            ids = tok.encode(text).ids + [tok.token_to_id(special)]
            out["cases"].append({"tokenizer": f"{name}.json", "text": text, "ids": ids, "decoded": tok.decode(ids, skip_special_tokens=False)})
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
