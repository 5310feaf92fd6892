"""Facts about tokenizers: find a model's tokenizer files locally, compare two vocabularies, and
build tiny ones.

- `files`: a model's tokenizer files on this machine (a path or the HF cache), never a download;
- `compare`: whether two tokenizers give the same ids (the OPD signal needs it);
- `tiny`: the one tiny-model builder (a family's tokenizer, with random-weight models or a config
  alone, and their cache); also run as a script by path in another environment.

May import: nothing else of whileai (`tiny` must not: prime-rl's rehearsal runs it by path).
"""
