"""The stand-ins a rehearsal runs in the prime-rl environment (Python 3.12, prime-rl importable).

Each is a script that imports only the standard library and what that environment has:
`inference` (the policy inference server and every teacher: real HTTP servers on 127.0.0.1),
`trainer` (behind a `torchrun` on PATH: prime-rl's own trainer config and data loader, every
batch checked, the weight-broadcast markers written), `hubrows` (local rows cached under a hub
dataset's id) and `shims` (the `inference` and `torchrun` commands the launcher finds first on
PATH). The tiny stand-in model (a tokenizer and model config of the run's architecture family,
no weights) is whileai.vocab.tiny's, run by its path the same way. None of them is imported by
whileai itself at run time; whileai starts them as processes.
"""
