"""Ground for writes: the all-or-nothing write plan.

- `write`: where each output goes, which files whileai owns (sha256), refusing FIFOs, devices,
  symlinks and files it did not write;
- `atomic`: a set of files committed as one (temporary files, then renames).

May import: `whileai.spec.values` (a written string passes the secret scanner) and `whileai.errors`.
"""
