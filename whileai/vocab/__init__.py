"""Facts about tokenizers: find a model's tokenizer files locally and compare two vocabularies.

- `files`: a model's tokenizer files on this machine (a path or the HF cache), never a download;
- `compare`: whether two tokenizers give the same ids (the OPD signal needs it).

May import: nothing else of whileai.
"""
